"""The batched Pelmanism engine plays exactly the scalar engine's games.

Both engines run the rules kernels of :mod:`memtab_env.games.pelmanism.rules_kernels`; the
batch adds its own deal, memories, encoder and greedy player, so these differential tests
are what keeps the two equal. They run
many hundreds of games of every deck kind (``standard``, ``colour``, ``pairs:N``,
``quartets:N``), 1-6 players and every memory model through :class:`BatchedPelmanism`
and, side by side, through the scalar engine (``Pelmanism`` + ``Memory`` +
``PelmanismEncoder`` fed exactly as the AEC env feeds them), with
``agents.make("greedy", game="pelmanism")`` and a ``default_rng`` per game as the
policies. After every flip they compare the whole ``PelmanismState``, the action masks,
the observations and remembered masks of two observers, the rewards and the ends
(termination, truncation at the flip cap, the ``max_turns`` house rule), and for every
ended game its results; the slots' later games (auto-reset) follow the AEC env's seed
stream. The AEC env itself (``memtab_env.play.make_raw_env("pelmanism", ...)``) and the
scalar Gymnasium view are replayed too.

``MEMTAB_VECTOR_DIFF_SCALE=10 pytest tests/test_vector_pelmanism.py`` plays ten times more.
"""

from __future__ import annotations

import os

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from hypothesis import given, settings
from hypothesis import strategies as hst

import memtab_env  # noqa: F401 - registers Pelmanism-v0
from memtab_env import agents
from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.games.pelmanism import batched_kernels as pk
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import Pelmanism
from memtab_env.memory import Memory
from memtab_env.play import make_raw_env
from memtab_env.rewards import win_rewards
from memtab_env.vector import PELMANISM_VECTOR_ENTRY_POINT, BatchedPelmanism, PelmanismVectorEnv

SCALE = int(os.environ.get("MEMTAB_VECTOR_DIFF_SCALE", "1"))
MEMORIES = ["perfect", "none", "window:0", "window:1", "window:5", "decay:0.25", "decay:0", "decay:1"]
#: small decks of every kind, so that many whole games fit in a test
SMALL_DECKS = ["pairs:3", "quartets:2", "pairs:6", "quartets:3", "pairs:1", "quartets:1", "pairs:9"]


def greedy_agent(deck: str) -> object:
    """``agents.make("greedy", game="pelmanism")``; ``quartets:1`` is the one deck whose
    observations the agent cannot infer (it reads them as ``pairs:2``), so it is told."""
    return agents.make("greedy", game="pelmanism", **({"deck": deck} if deck == "quartets:1" else {}))


class Mirror:
    """One slot of the batch replayed by the scalar engine, fed as the AEC env feeds it."""

    def __init__(self, game: Pelmanism, encoder: PelmanismEncoder, memory: str, seed: int) -> None:
        self.game, self.encoder, self.memory_spec = game, encoder, memory
        self.seed_stream = np.random.default_rng(seed)
        self.greedy = [greedy_agent(game.deck.spec) for _ in range(game.num_players)]
        self.start(seed)

    def start(self, game_seed: int, layout: np.ndarray | None = None) -> None:
        self.game_seed = game_seed
        if layout is None:
            self.state = self.game.new_game(np.random.default_rng(game_seed))
        else:
            self.state = self.game.from_layout(layout)
        self.memory = Memory(self.memory_spec, self.game.num_players, self.game.num_positions)
        self.memory.reset(np.random.SeedSequence(game_seed).spawn(2)[1])
        self.aux = np.random.default_rng(np.random.SeedSequence(game_seed).spawn(2)[0])
        self.flips = 0
        for agent in self.greedy:
            agent.reset()

    def next_game(self) -> None:
        self.start(int(self.seed_stream.integers(2**63)))

    def random_action(self) -> int:
        legal = np.flatnonzero(self.game.legal_mask(self.state))
        return int(legal[self.aux.integers(len(legal))])

    def greedy_action(self) -> int:
        seat = self.state.current
        obs = {
            "observation": self.observation(seat),
            "action_mask": self.game.legal_mask(self.state).astype(np.int8),
        }
        return int(self.greedy[seat].act(obs))

    def flip(self, action: int) -> tuple[np.ndarray, object]:
        before = self.game.scores(self.state)
        t = self.game.apply_inplace(self.state, action)
        self.memory.on_action(t.player, t.revealed)
        self.flips += 1
        return self.game.scores(self.state) - before, t

    def observation(self, observer: int) -> np.ndarray:
        remembered = self.memory.remembered(observer, self.game.face_down(self.state))
        return self.encoder.encode(self.state, observer, remembered)


def check_slot(eng: BatchedPelmanism, i: int, m: Mirror, obs: np.ndarray, masks: np.ndarray) -> None:
    """Everything the batch shows of game ``i`` equals the scalar engine."""
    st = m.state
    assert eng.get_state(i) == st, f"state of game {i}: {eng.get_state(i)} != {st}"
    np.testing.assert_array_equal(eng.scores[i], m.game.scores(st))
    np.testing.assert_array_equal(masks[i], m.game.legal_mask(st), err_msg=f"mask of game {i}")
    assert eng.game_seed[i] == m.game_seed
    assert eng.flips[i] == m.flips and eng.turns[i] == st.turns
    np.testing.assert_array_equal(obs[i], m.observation(st.current), err_msg=f"obs of game {i}")


def run_differential(
    deck: str,
    num_players: int,
    memory: str,
    num_envs: int,
    steps: int | None,
    seed: int,
    reward: str = "win",
    first_player: int = 0,
    max_turns: int | None = None,
    greedy_every: int = 2,
) -> int:
    """Play ``steps`` flips in every slot (``None``: without auto-reset, until every game
    is over) and compare after each; returns the number of games compared. Every step
    both policies are asked in every game (the greedy one is an observation of the seat
    on turn, as the agent's ``act``); the greedy flip is played on every
    ``greedy_every``-th step, the random one otherwise."""
    autoreset = steps is not None
    eng = BatchedPelmanism(
        num_envs, deck=deck, num_players=num_players, first_player=first_player,
        max_turns=max_turns, memory=memory, reward=reward, autoreset=autoreset, parallel=False,
    )  # fmt: skip
    eng.reset(seed=seed)
    game, encoder = eng.game, eng.encoder
    mirrors = [Mirror(game, encoder, memory, seed + i) for i in range(num_envs)]
    games = num_envs
    other = np.zeros(num_envs, dtype=np.int64)
    total = steps if autoreset else game.info.max_game_length + 1
    for step in range(total):
        live = ~eng.ended
        if not live.any():
            break
        random_flips = eng.random_actions().copy()
        greedy_flips = eng.greedy_actions().copy()
        use_greedy = step % greedy_every == 0
        expected = np.zeros((num_envs, num_players))
        ended = np.zeros(num_envs, dtype=bool)
        for i, m in enumerate(mirrors):
            if not live[i]:
                assert random_flips[i] == greedy_flips[i] == -1
                continue
            assert random_flips[i] == m.random_action(), f"random policy of game {i}"
            assert greedy_flips[i] == m.greedy_action(), f"greedy policy of game {i}, step {step}"
            delta, t = m.flip(int(greedy_flips[i] if use_greedy else random_flips[i]))
            ended[i] = t.game_over
            if reward == "score":
                expected[i] = delta
            elif reward == "turns":
                expected[i, t.player] -= float(t.turn_over)
            elif t.game_over:
                expected[i] = win_rewards(num_players, game.winners(m.state))
        actions = np.where(live, greedy_flips if use_greedy else random_flips, 0)
        rewards, terminated, truncated = eng.step(actions)
        np.testing.assert_array_equal(terminated, ended)
        assert not truncated.any()  # nothing here plays to the flip cap
        np.testing.assert_allclose(rewards, expected, rtol=0, atol=1e-6)
        for i in np.flatnonzero(ended):
            m = mirrors[i]
            np.testing.assert_array_equal(eng.final_scores[i], game.scores(m.state))
            assert np.flatnonzero(eng.final_winners[i]).tolist() == game.winners(m.state)
            assert eng.final_game_seed[i] == m.game_seed
            assert eng.final_turns[i] == m.state.turns and eng.final_flips[i] == m.flips
            if autoreset:
                m.next_game()
                games += 1
        masks = eng.action_masks()
        obs = eng.observations()
        for i, m in enumerate(mirrors):
            check_slot(eng, i, m, obs, masks)
        # a second observer per game, rotating, and the remembered masks
        other[:] = (eng.current.astype(np.int64) + 1 + step) % num_players
        obs2 = eng.observations(observer=other)
        rem = eng.remembered(observer=other)
        for i, m in enumerate(mirrors):
            o = int(other[i])
            np.testing.assert_array_equal(obs2[i], m.observation(o))
            np.testing.assert_array_equal(rem[i], m.memory.remembered(o, game.face_down(m.state)))
    if not autoreset:
        assert eng.over.all()
    return games


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5, 6])
def test_differential_small_decks(num_players: int, memory: str) -> None:
    """Every player count meets every memory model, on a deck that rotates through the
    small decks of both kinds; a few games per slot (auto-reset)."""
    k = MEMORIES.index(memory)
    deck = SMALL_DECKS[(k + num_players) % len(SMALL_DECKS)]
    seed = 1000 * num_players + 17 * k
    steps = max(60, 10 * Pelmanism(deck).num_positions)
    games = run_differential(
        deck, num_players, memory, 8 * SCALE, steps, seed, first_player=(k % num_players),
        max_turns=9 if (k + num_players) % 5 == 0 else None, greedy_every=2 + k % 2,
    )  # fmt: skip
    assert games > 8 * SCALE


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize(("deck", "num_players"), [("standard", 2), ("colour", 3)])
def test_differential_full_decks_to_the_end(deck: str, num_players: int, memory: str) -> None:
    """The 52-card decks, played to the end without auto-reset (mostly greedy)."""
    seed = 7 + MEMORIES.index(memory)
    games = run_differential(deck, num_players, memory, 3 * SCALE, None, seed, greedy_every=1)
    assert games == 3 * SCALE  # every slot played its game to the end


@pytest.mark.parametrize(
    ("deck", "num_players", "first_player", "memory", "max_turns"),
    [
        ("pairs:5", 2, 1, "none", None),
        ("quartets:3", 3, 2, "decay:0.5", 6),
        ("pairs:8", 4, 1, "window:3", None),
        ("quartets:4", 6, 5, "perfect", None),
        ("pairs:4", 1, 0, "none", 5),
    ],
)
@pytest.mark.parametrize("reward", ["score", "turns"])
def test_differential_dense_rewards(
    deck: str, num_players: int, first_player: int, memory: str, max_turns: int | None, reward: str
) -> None:
    games = run_differential(
        deck, num_players, memory, 6 * SCALE, 50, 99, reward=reward, first_player=first_player,
        max_turns=max_turns,
    )  # fmt: skip
    assert games >= 6 * SCALE


DECKS = ["standard", "colour", "pairs:1", "pairs:2", "pairs:13", "pairs:26", "quartets:1",
         "quartets:5", "quartets:13"]  # fmt: skip


@settings(max_examples=30, deadline=None)
@given(
    deck=hst.sampled_from(DECKS),
    num_players=hst.integers(1, 6),
    memory=hst.sampled_from(MEMORIES),
    seed=hst.integers(0, 2**64 - 1),
    choices=hst.lists(hst.integers(0, 51), min_size=1, max_size=80),
)
def test_property_any_legal_sequence(
    deck: str, num_players: int, memory: str, seed: int, choices: list[int]
) -> None:
    """Any deck, any seed (the whole uint64 range) and any sequence of legal flips (the
    ``c``-th face-down position, modulo their number): batch == scalar after every flip."""
    eng = BatchedPelmanism(1, deck=deck, num_players=num_players, memory=memory)
    eng.reset(seed=[seed])
    m = Mirror(eng.game, eng.encoder, memory, seed)
    check_slot(eng, 0, m, eng.observations(), eng.action_masks())
    for c in choices:
        legal = np.flatnonzero(eng.game.legal_mask(m.state))
        action = int(legal[c % len(legal)])
        _, t = m.flip(action)
        _, terminated, _ = eng.step(np.array([action]))
        assert terminated[0] == t.game_over
        if t.game_over:
            m.next_game()
        check_slot(eng, 0, m, eng.observations(), eng.action_masks())
        np.testing.assert_array_equal(
            eng.remembered(), [m.memory.remembered(m.state.current, eng.game.face_down(m.state))]
        )


@pytest.mark.parametrize("deck", DECKS)
def test_deals_are_the_scalar_deals(deck: str) -> None:
    """``reset`` deals ``Pelmanism.new_game(default_rng(s))`` bit for bit, for seeds over
    the whole range, and the later games of a slot follow the seed stream."""
    seeds = [0, 1, 2**32 - 1, 2**32, 2**63 + 5, 2**64 - 1] + list(range(12345, 12345 + 34))
    eng = BatchedPelmanism(len(seeds), deck=deck, num_players=1)
    eng.reset(seed=seeds)
    game = eng.game
    for i, s in enumerate(seeds):
        np.testing.assert_array_equal(eng.layout[i], game.new_game(np.random.default_rng(s)).layout)
        np.testing.assert_array_equal(eng.kinds[i], game.deck.card_kind[eng.layout[i]])
        assert eng.get_state(i) == game.new_game(np.random.default_rng(s))


# ---------------------------------------------------------------------------------------
# the batch and the AEC env, game for game
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("deck", "num_players", "memory", "reward"),
    [("pairs:4", 2, "decay:0.3", "win"), ("quartets:2", 3, "none", "score"),
     ("pairs:6", 4, "window:2", "turns"), ("pairs:3", 1, "perfect", "win")],
)  # fmt: skip
def test_slots_replay_the_aec_env(deck: str, num_players: int, memory: str, reward: str) -> None:
    """Slot ``i`` reset with seed ``s`` plays the AEC env's ``reset(seed=s)``, ``reset()``,
    ... games: same deals, observations, masks, remembered masks and rewards."""
    b, seed = 4, 2024
    opts = dict(deck=deck, num_players=num_players, memory=memory, reward=reward)
    eng = BatchedPelmanism(b, **opts)
    eng.reset(seed=seed)
    envs = [make_raw_env("pelmanism", **opts) for _ in range(b)]
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    for _ in range(200):
        for i, env in enumerate(envs):
            o = env.observe(env.agent_selection)
            np.testing.assert_array_equal(eng.observations()[i], o["observation"])
            np.testing.assert_array_equal(eng.action_masks()[i], o["action_mask"])
            np.testing.assert_array_equal(eng.remembered()[i], o["remembered_mask"].astype(bool))
            assert eng.game_seed[i] == env.game_seed
            np.testing.assert_array_equal(eng.layout[i], env.game_state.layout)
        actions = eng.random_actions()
        rewards, terminated, truncated = eng.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            got = [env.rewards[a] for a in env.possible_agents]
            np.testing.assert_allclose(rewards[i], got, atol=1e-9)
            assert terminated[i] == all(env.terminations.values())
            assert not truncated[i] and not any(env.truncations.values())
            if terminated[i]:
                env.reset()
    assert (eng.games_started >= 3).all()


def test_flip_cap_truncates_as_the_aec_env() -> None:
    """No rule bounds a game: a player that never takes a pair is truncated at the AEC
    env's ``max_game_length`` flips, in the batch as in the AEC env, and the slot's next
    game is the AEC env's next ``reset()``."""
    opts = dict(deck="pairs:2", num_players=1)
    eng = BatchedPelmanism(2, **opts, reward="turns")
    eng.reset(seed=[3, 4])
    cap = eng.max_flips
    assert cap == eng.game.info.max_game_length == 800
    envs = [make_raw_env("pelmanism", **opts, reward="turns") for _ in range(2)]
    for i, env in enumerate(envs):
        env.reset(seed=3 + i)
    for flip in range(cap):
        actions = np.zeros(2, dtype=np.int64)
        for i, env in enumerate(envs):
            kinds = env.game_state.kinds
            # stall: the lowest card, then the lowest card of another kind
            actions[i] = 0 if env.game_state.flip == 0 else int(np.flatnonzero(kinds != kinds[0])[0])
            env.step(int(actions[i]))
        rewards, terminated, truncated = eng.step(actions)
        assert not terminated.any()
        assert truncated.tolist() == [all(e.truncations.values()) for e in envs] == [flip == cap - 1] * 2
        np.testing.assert_allclose(rewards[:, 0], [e.rewards["player_0"] for e in envs])
    assert (eng.final_flips == cap).all() and (eng.final_turns == cap // 2).all()
    assert not eng.final_winners.any()
    # without auto-reset a truncated game stays as it is (the AEC env's truncated game:
    # not over by the rules, so its observation still shows flip and turn), with no
    # legal flip
    still = BatchedPelmanism(1, **opts, memory="window:3", autoreset=False)
    still.reset(seed=3)
    aec = make_raw_env("pelmanism", **opts, memory="window:3")
    aec.reset(seed=3)
    for _ in range(cap):
        kinds = still.kinds[0]
        action = 0 if still.flip[0] == 0 else int(np.flatnonzero(kinds != kinds[0])[0])
        still.step([action])
        aec.step(action)
    assert still.truncated_games[0] and still.ended[0] and not still.over[0]
    assert aec.truncations["player_0"] and still.get_state(0) == aec.game_state
    o = aec.observe("player_0")
    np.testing.assert_array_equal(still.observations()[0], o["observation"])
    np.testing.assert_array_equal(still.remembered()[0], o["remembered_mask"].astype(bool))
    assert not still.action_masks().any()
    before = still.state.copy()
    still.step([0])  # ignored
    np.testing.assert_array_equal(still.state, before)
    for i, env in enumerate(envs):
        assert eng.final_game_seed[i] == env.game_seed
        env.reset()
        assert eng.game_seed[i] == env.game_seed and eng.get_state(i) == env.game_state


# ---------------------------------------------------------------------------------------
# hand-made layouts, illegal actions, seeds, buffers
# ---------------------------------------------------------------------------------------
def test_layouts_match_the_scalar_engine() -> None:
    rng = np.random.default_rng(11)
    game = Pelmanism("quartets:4", 3)
    b = 12
    layouts = [game.layout_codes(game.new_game(rng)) for _ in range(b)]
    eng = BatchedPelmanism(b, deck="quartets:4", num_players=3, autoreset=False)
    eng.reset(seed=0, layouts=layouts)
    mirrors = []
    for i in range(b):
        m = Mirror(game, eng.encoder, "perfect", i)
        m.start(i, layouts[i])
        mirrors.append(m)
    while not eng.over.all():
        actions = np.zeros(b, dtype=np.int64)
        for i, m in enumerate(mirrors):
            if not m.state.over:
                actions[i] = rng.choice(np.flatnonzero(game.legal_mask(m.state)))
                m.flip(int(actions[i]))
        eng.step(actions)
        masks, obs = eng.action_masks(), eng.observations()
        for i, m in enumerate(mirrors):
            check_slot(eng, i, m, obs, masks)
    with pytest.raises(InvalidOptionError, match="wrong counts"):
        eng.reset(seed=0, layouts=[["K00"] * 16] * b)
    with pytest.raises(InvalidOptionError, match="12 layouts"):
        eng.reset(seed=0, layouts=layouts[:3])


def test_illegal_action_raises_and_changes_nothing() -> None:
    eng = BatchedPelmanism(5, deck="pairs:6", memory="decay:0.5")
    eng.reset(seed=3)
    for _ in range(7):
        eng.step(eng.random_actions())
    state, times, rng = eng.state.copy(), eng.times.copy(), eng.rng.copy()
    actions = eng.random_actions()
    eng.rng[:] = rng  # drawing actions advanced the auxiliary streams
    bad = actions.copy()
    up_or_gone = np.flatnonzero(eng.status[3] != 0)
    bad[3] = int(up_or_gone[0]) if up_or_gone.size else 12
    with pytest.raises(IllegalActionError, match="game 3"):
        eng.step(bad)
    for wrong in ([0, 1], np.zeros(5), np.full(5, 12), np.full(5, -1)):
        with pytest.raises(IllegalActionError):
            eng.step(wrong)
    np.testing.assert_array_equal(eng.state, state)
    np.testing.assert_array_equal(eng.times, times)
    np.testing.assert_array_equal(eng.rng, rng)


def test_same_seeds_same_games_and_seed_forms() -> None:
    a = BatchedPelmanism(6, deck="colour", memory="decay:0.2")
    b = BatchedPelmanism(6, deck="colour", memory="decay:0.2")
    a.reset(seed=42)
    b.reset(seed=[42, 43, 44, 45, 46, 47])
    for _ in range(100):
        acts = a.random_actions()
        np.testing.assert_array_equal(acts, b.random_actions())
        a.step(acts)
        b.step(acts)
    np.testing.assert_array_equal(a.state, b.state)
    np.testing.assert_array_equal(a.rng, b.rng)
    c = BatchedPelmanism(6, deck="colour")
    c.reset()  # fresh entropy: different deals
    assert not np.array_equal(c.layout, a.layout)
    c.reset(seed=[9], indices=[2])
    assert c.game_seed[2] == 9
    for bad in (-1, 2**64, [1, 2], "x", [1.5] * 6):
        with pytest.raises(InvalidOptionError):
            c.reset(seed=bad)


def test_options_lifecycle_and_buffers() -> None:
    for kwargs in ({"deck": "pairs:27"}, {"deck": "hearts"}, {"num_players": 7},
                   {"memory": "window:x"}, {"reward": "points"}, {"max_turns": 0}):  # fmt: skip
        with pytest.raises(InvalidOptionError):
            BatchedPelmanism(2, **kwargs)
    with pytest.raises(InvalidOptionError):
        BatchedPelmanism(0)
    eng = BatchedPelmanism(4, deck="pairs:7", num_players=3)
    with pytest.raises(MemTabError, match="reset"):
        eng.step([0] * 4)
    with pytest.raises(MemTabError, match="without indices"):
        eng.reset(seed=0, indices=[0])
    eng.reset(seed=0)
    with pytest.raises(InvalidOptionError):
        eng.observations(observer=3)
    with pytest.raises(InvalidOptionError):
        eng.observations(out=np.zeros((4, 3), dtype=np.int8))
    masks, obs = eng.action_masks(), eng.observations()
    assert masks.dtype == np.int8 and masks.shape == (4, 14)
    assert obs.dtype == np.int8 and obs.shape == (4, eng.encoder.size) == (4, 14 * 10 + 8)
    assert eng.action_masks() is masks and eng.observations() is obs
    out = np.zeros((4, eng.encoder.size), dtype=np.float32)
    assert eng.observations(out=out) is out
    np.testing.assert_array_equal(out, obs.astype(np.float32))
    rewards, terminated, truncated = eng.step(eng.random_actions())
    assert rewards.dtype == np.float32 and rewards.shape == (4, 3)
    assert terminated.dtype == bool and truncated.dtype == bool
    assert 0 < eng.memory_bytes_per_game() < 2000
    assert (obs >= eng.encoder.low).all() and (obs <= eng.encoder.high).all()


@pytest.mark.parametrize("num_players", [1, 2, 6])
@pytest.mark.parametrize("deck", ["standard", "colour", "pairs:26", "quartets:1"])
def test_layout_constants_match_the_scalar_code(deck: str, num_players: int) -> None:
    game = Pelmanism(deck, num_players)
    p, k = game.num_positions, game.num_kinds
    assert pk.observation_size(p, k, num_players) == PelmanismEncoder(game).size
    eng = BatchedPelmanism(2, deck=deck, num_players=num_players, memory="decay:0.5")
    assert eng.state.shape[1] == pk.state_width(p, num_players, True)
    assert eng.times.shape[1] == pk.time_width(p)
    assert pk.HEAD + (4 + 2 * num_players) * p == eng.state.shape[1]


def test_parallel_kernels_equal_serial() -> None:
    """Several threads play the same games as one."""
    b = 500
    opts = dict(deck="pairs:10", num_players=3, memory="window:4", reward="score")
    par = BatchedPelmanism(b, **opts, parallel=True)
    ser = BatchedPelmanism(b, **opts, parallel=False)
    assert par.threads > 1 and ser.threads == 1
    par.reset(seed=8)
    ser.reset(seed=8)
    for step in range(150):
        greedy = step % 3 == 0
        acts = par.greedy_actions() if greedy else par.random_actions()
        np.testing.assert_array_equal(acts, ser.greedy_actions() if greedy else ser.random_actions())
        r1, t1, _ = par.step(acts)
        r2, t2, _ = ser.step(acts)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        if step % 25 == 0:
            np.testing.assert_array_equal(par.observations(), ser.observations())
    np.testing.assert_array_equal(par.state, ser.state)
    np.testing.assert_array_equal(par.rng, ser.rng)
    assert (par.games_started > 1).all()


def test_random_actions_are_uniform_and_legal() -> None:
    eng = BatchedPelmanism(2600)
    eng.reset(seed=1)
    a = eng.random_actions()
    assert eng.action_masks()[np.arange(2600), a].all()
    counts = np.bincount(a, minlength=52)  # the first flip: 52 legal positions
    assert counts.min() > 50 * 0.5 and counts.max() < 50 * 1.5


# ---------------------------------------------------------------------------------------
# the vector env against the scalar Gymnasium view
# ---------------------------------------------------------------------------------------
def _actions(masks: np.ndarray, rng: np.random.Generator, illegal_rate: float) -> np.ndarray:
    """A random legal flip per env, now and then an illegal one."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        if rng.random() < illegal_rate:
            out[i] = rng.choice(np.flatnonzero(m == 0)) if (m == 0).any() else len(m)
        else:
            out[i] = rng.choice(np.flatnonzero(m))
    return out


@pytest.mark.parametrize(
    ("deck", "num_players", "seat", "memory", "reward"),
    [
        ("pairs:8", 2, 0, "perfect", "win"),
        ("pairs:8", 2, 1, "none", "score"),
        ("quartets:4", 3, 2, "window:3", "win"),
        ("pairs:10", 4, 1, "decay:0.3", "turns"),
        ("standard", 2, 1, "decay:0.1", "win"),
        ("pairs:5", 1, 0, "perfect", "turns"),
    ],
)
def test_vector_env_matches_scalar_view(
    deck: str, num_players: int, seat: int, memory: str, reward: str
) -> None:
    """Greedy opponents with their own memory (under every memory model) and a fixed seat:
    every episode is the scalar ``gymnasium.make("Pelmanism-v0")`` episode, flip for flip,
    illegal actions, step-limit truncations and auto-resets included."""
    b, seed, limit = 5, 31, 30
    opts = dict(
        deck=deck, opponents="greedy", learner_seat=seat, memory=memory, reward=reward,
        num_players=num_players,
    )  # fmt: skip
    venv = PelmanismVectorEnv(b, max_episode_steps=limit, **opts)
    envs = [gymnasium.make("Pelmanism-v0", max_episode_steps=limit, **opts) for _ in range(b)]
    obs, info = venv.reset(seed=seed)
    for i, env in enumerate(envs):
        o, inf = env.reset(seed=seed + i)
        assert inf["redeals"] == 0
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
        assert info["learner_seat"][i] == seat
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(70):
        actions = _actions(venv.action_masks(), rng, 0.08)
        obs, rew, term, trunc, info = venv.step(actions)
        for i, env in enumerate(envs):
            o, r, te, tr, inf = env.step(int(actions[i]))
            assert (r, te, tr) == (rew[i], term[i], trunc[i]), f"env {i}"
            assert inf["illegal_action"] == info["illegal_action"][i]
            if te or tr:
                episodes += 1
                np.testing.assert_array_equal(info["final_obs"][i], o)
                aec = env.unwrapped.aec
                assert info["final_info"]["flips"][i] == len(aec._transitions)
                assert info["final_info"]["turns"][i] == aec.game_state.turns
                if te:
                    assert info["final_info"]["scores"][i].tolist() == inf["scores"]
                    assert np.flatnonzero(info["final_info"]["winners"][i]).tolist() == inf["winners"]
                o, inf = env.reset()
                assert inf["redeals"] == 0
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
        np.testing.assert_array_equal(venv.game_seeds, [e.unwrapped.aec.game_seed for e in envs])
    assert episodes >= b


def test_vector_env_spaces_seeding_and_data() -> None:
    """The checks of Gymnasium's env checker, for a vector env: spaces are the batched
    single spaces and contain what is returned; the same seed gives the same episodes
    (reset and step determinism), another seed other ones; returned arrays are fresh."""
    opts = dict(deck="pairs:6", num_players=3, opponents=["random", "greedy"], learner_seat="random")
    venv = PelmanismVectorEnv(8, max_episode_steps=6, **opts)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.observation_space == batch_space(venv.single_observation_space, 8)
    assert venv.action_space == batch_space(venv.single_action_space, 8)
    assert venv.single_action_space == gymnasium.spaces.Discrete(12)

    def episode(seed: int) -> list:
        v = PelmanismVectorEnv(8, max_episode_steps=6, **opts)
        obs, info = v.reset(seed=seed)
        assert v.observation_space.contains(obs) and obs.dtype == np.float32
        out = [obs, info["learner_seat"]]
        rng = np.random.default_rng(1)
        for _ in range(15):
            acts = _actions(v.action_masks(), rng, 0.1)
            acts[acts >= 12] = 0  # inside the action space (illegal or not)
            assert v.action_space.contains(acts)
            obs, rew, term, trunc, info = v.step(acts)
            assert v.observation_space.contains(obs)
            assert rew.dtype == np.float64 and term.dtype == bool and trunc.dtype == bool
            out += [obs, rew, term, trunc, info["learner_seat"], info["action_mask"]]
            if (term | trunc).any():
                done = term | trunc
                assert info["_final_obs"].tolist() == done.tolist()
                assert all(
                    v.single_observation_space.contains(info["final_obs"][i])
                    for i in np.flatnonzero(done)
                )
                out.append(info["final_info"]["game_seed"])
        return out

    first, again, other = episode(5), episode(5), episode(6)
    assert len(first) == len(again)
    for x, y in zip(first, again, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(first[0], other[0])
    # returned data is not reused (copy=True)
    o1, _ = venv.reset(seed=0)
    o2, r2, *_ = venv.step(venv.action_masks().argmax(axis=1))
    assert not np.shares_memory(o1, o2)
    o3, r3, *_ = venv.step(venv.action_masks().argmax(axis=1))
    assert not np.shares_memory(o2, o3) and not np.shares_memory(r2, r3)


def test_make_vec_through_the_registered_vector_entry_point() -> None:
    spec = gymnasium.spec("Pelmanism-v0")
    assert spec.vector_entry_point == PELMANISM_VECTOR_ENTRY_POINT
    venv = gymnasium.make_vec(
        "Pelmanism-v0", num_envs=4, vectorization_mode="vector_entry_point",
        opponents="greedy", deck="pairs:8",
    )  # fmt: skip
    assert isinstance(venv, PelmanismVectorEnv)
    assert venv.num_envs == 4 and venv.max_episode_steps == spec.max_episode_steps == 3000
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (4, 16 * 11 + 6)
    venv.close()


def test_vector_env_illegal_actions_penalty_and_raise() -> None:
    venv = PelmanismVectorEnv(3, deck="pairs:4", illegal_penalty=-0.5)
    obs, _ = venv.reset(seed=4)
    state = venv.engine.state.copy()
    obs2, rew, term, trunc, info = venv.step(np.array([-1, 8, 0]))
    assert info["illegal_action"].tolist() == [True, True, False]
    assert rew[:2].tolist() == [-0.5, -0.5]
    np.testing.assert_array_equal(obs2[:2], obs[:2])
    np.testing.assert_array_equal(venv.engine.state[:2], state[:2])
    strict = PelmanismVectorEnv(3, deck="pairs:4", illegal_action="raise")
    strict.reset(seed=4)
    state = strict.engine.state.copy()
    with pytest.raises(IllegalActionError, match="env 1"):
        strict.step(np.array([0, 8, 0]))
    np.testing.assert_array_equal(strict.engine.state, state)
    with pytest.raises(IllegalActionError, match="shape"):
        strict.step(np.zeros(3))  # floats are not actions
    with pytest.raises(IllegalActionError, match="shape"):
        strict.step(np.zeros(4, dtype=np.int64))


def test_vector_env_option_errors() -> None:
    with pytest.raises(InvalidOptionError, match="cannot be played exactly inside the batch"):
        PelmanismVectorEnv(2, opponents="expert")
    with pytest.raises(InvalidOptionError, match="2 opponent"):
        PelmanismVectorEnv(2, num_players=3, opponents=["greedy"])
    with pytest.raises(InvalidOptionError, match="learner_seat"):
        PelmanismVectorEnv(2, learner_seat=2)
    with pytest.raises(InvalidOptionError, match="one kind"):
        PelmanismVectorEnv(2, deck="quartets:1", learner_seat=1)
    with pytest.raises(InvalidOptionError, match="max_turns"):
        PelmanismVectorEnv(2, num_players=3, learner_seat=2, max_turns=2)
    with pytest.raises(InvalidOptionError):
        PelmanismVectorEnv(2, game="memtab")
    with pytest.raises(InvalidOptionError, match="unknown option"):
        PelmanismVectorEnv(2, colours=3)
    for kwargs in ({"obs_mode": "dict"}, {"illegal_action": "ignore"}, {"max_episode_steps": 0},
                   {"render_mode": "human"}):  # fmt: skip
        with pytest.raises(InvalidOptionError):
            PelmanismVectorEnv(2, **kwargs)
    venv = PelmanismVectorEnv(2)
    with pytest.raises(MemTabError, match="reset"):
        venv.step(np.array([0, 0]))
    with pytest.raises(InvalidOptionError):
        venv.reset(options={"layout": []})
    # a deck of one kind is fine when the learner plays first; seated at random on the
    # second seat it never plays, and the batch gives up as the scalar view does
    one = PelmanismVectorEnv(4, deck="quartets:1", num_players=2, learner_seat=0)
    one.reset(seed=0)
    _, _, term, _, _ = one.step(one.action_masks().argmax(axis=1))
    assert not term.any()
    seated = PelmanismVectorEnv(4, deck="quartets:1", num_players=2, learner_seat="random")
    with pytest.raises(InvalidOptionError, match="100 deals in a row"):
        seated.reset(seed=0)


# ---------------------------------------------------------------------------------------
# SB3
# ---------------------------------------------------------------------------------------
def test_sb3_adapter_and_maskable_ppo() -> None:
    """MaskablePPO trains a few hundred steps on the adapter, and with masks it never
    sends an illegal flip."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecMonitor

    from memtab_env.vector import PelmanismSB3VecEnv

    raw = PelmanismSB3VecEnv(num_envs=8, seed=1, deck="pairs:4", opponents="greedy")
    assert is_masking_supported(raw)
    obs = raw.reset()
    assert obs.shape == (8, 8 * 7 + 6) and obs.dtype == np.float32
    masks = get_action_masks(raw)
    assert masks.shape == (8, 8) and masks.dtype == bool and masks.all()
    venv = VecMonitor(raw)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [32]},
    )  # fmt: skip
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw whole episodes
    obs = venv.reset()
    illegal = 0
    for _ in range(20):
        actions, _ = model.predict(obs, action_masks=get_action_masks(venv))
        obs, _, dones, infos = venv.step(actions)
        illegal += sum("illegal_action" in info for info in infos)
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (62,)
    assert illegal == 0
