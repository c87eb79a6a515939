"""The batched engine plays exactly the scalar engine's games.

The differential test runs thousands of random games through :class:`BatchedMemTab` and,
side by side, through the scalar engine (``MemTab`` + ``Memory`` + ``MemTabEncoder``, fed
exactly as the AEC env feeds them) and the independent referee of ``tests/referee.py``.
After every flip it compares the whole scalar state row (layout, status, owner,
turn_flips, current, flip, pairs, turn, over, instant_win, winner), the scores, the action
masks, the remembered masks and the observations of two observers, the rewards, and the
referee's table, player, scores and winners. Every player count (1..6) meets every memory
model, with and without auto-reset. The slot's later games (auto-reset) are checked too:
their game seeds follow the AEC env's seed stream, their deals ``new_game(default_rng(g))``
and their decay streams ``SeedSequence(g).spawn(2)[1]``.

``MEMTAB_VECTOR_DIFF_SCALE=10 pytest tests/test_vector_engine.py`` plays ten times more.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.games.memtab import batched_kernels as kn
from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import DECK, NUM_POSITIONS, TABLEAU, MemTab
from memtab_env.memory import Memory
from memtab_env.memtab_v0 import raw_env
from memtab_env.rewards import win_rewards
from memtab_env.vector import BatchedMemTab
from memtab_env.vector import batch_kernels as bt
from tests.helpers import layout_with
from tests.referee import Referee

SCALE = int(os.environ.get("MEMTAB_VECTOR_DIFF_SCALE", "1"))
MEMORIES = ["perfect", "none", "window:1", "window:6", "decay:0.25", "decay:0", "decay:1"]
STATUS_NAMES = {"down": 0, "up": 1, "gone": 2, "tab": 3}


class Mirror:
    """One slot of the batch replayed by the scalar engine, fed as the AEC env feeds it."""

    def __init__(self, game: MemTab, encoder: MemTabEncoder, memory: str, seed: int) -> None:
        self.game, self.encoder, self.memory_spec = game, encoder, memory
        self.seed_stream = np.random.default_rng(seed)
        self.start(seed)

    def start(self, game_seed: int, layout: np.ndarray | None = None) -> None:
        self.game_seed = game_seed
        if layout is None:
            self.state = self.game.new_game(np.random.default_rng(game_seed))
        else:
            self.state = self.game.from_layout(layout)
        self.memory = Memory(self.memory_spec, self.game.num_players, NUM_POSITIONS)
        self.memory.reset(np.random.SeedSequence(game_seed).spawn(2)[1])
        self.aux = np.random.default_rng(np.random.SeedSequence(game_seed).spawn(2)[0])
        codes = self.game.layout_codes(self.state)
        self.referee = Referee(codes, self.game.num_players, self.game.first_player)

    def next_game(self) -> None:
        self.start(int(self.seed_stream.integers(2**63)))

    def random_action(self) -> int:
        legal = np.flatnonzero(self.game.legal_mask(self.state))
        return int(legal[self.aux.integers(len(legal))])

    def flip(self, action: int) -> tuple[np.ndarray, bool]:
        before = self.game.scores(self.state)
        t = self.game.apply_inplace(self.state, action)
        self.flipper, self.turn_over = t.player, t.turn_over
        self.memory.on_action(t.player, [pos for pos, _ in t.revealed])
        card = self.referee.flip(action)
        assert card == self.game.card_code(int(self.state.layout[action]))
        return self.game.scores(self.state) - before, t.game_over

    def observation(self, observer: int) -> np.ndarray:
        remembered = self.memory.remembered(observer, self.game.face_down(self.state))
        return self.encoder.encode(self.state, observer, remembered)


def check_slot(eng: BatchedMemTab, i: int, m: Mirror, obs: np.ndarray, masks: np.ndarray) -> None:
    """Everything the batch shows of game ``i`` equals the scalar engine and the referee."""
    st, n = m.state, m.game.num_players
    np.testing.assert_array_equal(eng.state[i, : kn.ROW], st.data, err_msg=f"state of game {i}")
    np.testing.assert_array_equal(eng.scores[i], m.game.scores(st))
    np.testing.assert_array_equal(masks[i], m.game.legal_mask(st))
    assert eng.game_seed[i] == m.game_seed
    np.testing.assert_array_equal(obs[i], m.observation(st.current))
    ref = m.referee
    assert [STATUS_NAMES[ref.table[q]] for q in range(NUM_POSITIONS)] == st.status.tolist()
    assert ref.player == st.current and ref.over == st.over and ref.instant == st.instant_win
    assert ref.scores() == m.game.scores(st).tolist()
    for seat in range(n):
        assert sorted(ref.tableaux[seat]) == m.game.tableau(st, seat).tolist()


def run_differential(
    num_players: int,
    memory: str,
    num_envs: int,
    steps: int | None,
    seed: int,
    reward: str = "win",
    first_player: int = 0,
    parallel: bool = False,
    policy: str = "random",
) -> int:
    """Play ``steps`` flips in every slot (``None``: without auto-reset, until every game
    is over) and compare after each; returns the number of games compared."""
    autoreset = steps is not None
    eng = BatchedMemTab(
        num_envs, num_players=num_players, first_player=first_player, memory=memory,
        reward=reward, autoreset=autoreset, parallel=parallel,
    )  # fmt: skip
    eng.reset(seed=seed)
    game, encoder = eng.game, eng.encoder
    mirrors = [Mirror(game, encoder, memory, seed + i) for i in range(num_envs)]
    games = num_envs
    other = np.zeros(num_envs, dtype=np.int64)
    total = steps if autoreset else game.info.max_game_length + 1
    for step in range(total):
        live = ~eng.over
        if not live.any():
            break
        actions = eng.greedy_actions() if policy == "greedy" else eng.random_actions()
        expected_rewards = np.zeros((num_envs, num_players))
        ended = np.zeros(num_envs, dtype=bool)
        for i, m in enumerate(mirrors):
            if not live[i]:
                assert actions[i] == -1
                continue
            if policy == "random":
                assert actions[i] == m.random_action(), f"random policy of game {i}"
            delta, over = m.flip(int(actions[i]))
            ended[i] = over
            if reward == "score":
                expected_rewards[i] = delta
            elif reward == "turns":
                expected_rewards[i, m.flipper] -= float(m.turn_over)
            elif over:
                expected_rewards[i] = win_rewards(num_players, game.winners(m.state))
        rewards, terminated = eng.step(np.where(live, actions, 0))
        np.testing.assert_array_equal(terminated, ended)
        np.testing.assert_allclose(rewards, expected_rewards, rtol=0, atol=1e-6)
        for i in np.flatnonzero(ended):
            m = mirrors[i]
            np.testing.assert_array_equal(eng.final_scores[i], game.scores(m.state))
            winners = np.flatnonzero(eng.final_winners[i]).tolist()
            assert winners == game.winners(m.state) == m.referee.winners()
            assert eng.final_instant_win[i] == m.state.instant_win
            assert eng.final_game_seed[i] == m.game_seed
            if reward == "win":
                np.testing.assert_allclose(rewards[i], m.referee.rewards(), atol=1e-6)
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
            np.testing.assert_array_equal(
                rem[i], m.memory.remembered(o, game.face_down(m.state))
            )
    if not autoreset:
        assert eng.over.all()
    return games


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5, 6])
def test_differential_autoreset(num_players: int, memory: str) -> None:
    """About 2.5 games per slot: the first from the slot seed, the rest from its stream."""
    seed = 1000 * num_players + 17 * MEMORIES.index(memory)
    games = run_differential(num_players, memory, 24 * SCALE, 190, seed)
    assert games >= 2 * 24 * SCALE, games  # 190 flips: every slot starts another game


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("num_players", [1, 2, 3, 6])
def test_differential_to_the_end(num_players: int, memory: str) -> None:
    """Without auto-reset the terminal states themselves are compared."""
    seed = 7 + 100 * num_players + MEMORIES.index(memory)
    assert run_differential(num_players, memory, 24 * SCALE, None, seed) == 24 * SCALE


@pytest.mark.parametrize(
    ("num_players", "first_player", "memory"),
    [(2, 1, "none"), (3, 2, "decay:0.5"), (4, 1, "window:3"), (6, 5, "perfect")],
)
@pytest.mark.parametrize("reward", ["score", "turns"])
def test_differential_dense_rewards_first_player(
    num_players: int, first_player: int, memory: str, reward: str
) -> None:
    games = run_differential(
        num_players, memory, 16 * SCALE, 120, 99, reward=reward, first_player=first_player
    )
    assert games >= 2 * 16 * SCALE, games  # a game has at most 78 flips: every slot starts another


@pytest.mark.parametrize("num_players", [2, 3])
def test_differential_greedy_play(num_players: int) -> None:
    """Greedy games are long on matches and extra turns: instant wins show up."""
    games = run_differential(num_players, "window:4", 32 * SCALE, 150, 5, policy="greedy")
    assert games >= 2 * 32 * SCALE, games


@pytest.mark.parametrize("memory", ["decay:0.1", "window:5"])
def test_parallel_kernels_equal_serial(memory: str) -> None:
    """Several threads play the same games as one (checked above)."""
    b = 600
    par = BatchedMemTab(b, num_players=3, memory=memory, reward="score", parallel=True)
    ser = BatchedMemTab(b, num_players=3, memory=memory, reward="score", parallel=False)
    assert par.threads > 1 and ser.threads == 1
    par.reset(seed=8)
    ser.reset(seed=8)
    for step in range(300):
        acts = par.greedy_actions() if step % 4 == 0 else par.random_actions()
        np.testing.assert_array_equal(acts, ser.greedy_actions() if step % 4 == 0 else ser.random_actions())
        r1, t1 = par.step(acts)
        r2, t2 = ser.step(acts)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(par.action_masks(), ser.action_masks())
        if step % 25 == 0:
            np.testing.assert_array_equal(par.observations(), ser.observations())
    np.testing.assert_array_equal(par.state, ser.state)
    np.testing.assert_array_equal(par.rng, ser.rng)
    assert (par.games_started > 2).all()


@settings(max_examples=25, deadline=None)
@given(
    num_players=hst.integers(1, 6),
    memory=hst.sampled_from(MEMORIES),
    seed=hst.integers(0, 2**64 - 1),
    choices=hst.lists(hst.integers(0, 27), min_size=1, max_size=120),
)
def test_property_any_legal_sequence(
    num_players: int, memory: str, seed: int, choices: list[int]
) -> None:
    """Any seed (the whole uint64 range) and any sequence of legal flips (the ``c``-th
    face-down position, modulo their number): batch == scalar after every flip."""
    eng = BatchedMemTab(1, num_players=num_players, memory=memory)
    eng.reset(seed=[seed])
    m = Mirror(eng.game, eng.encoder, memory, seed)
    for c in choices:
        legal = np.flatnonzero(eng.game.legal_mask(m.state))
        action = int(legal[c % len(legal)])
        _, over = m.flip(action)
        _, terminated = eng.step(np.array([action]))
        assert terminated[0] == over
        if over:
            m.next_game()
        check_slot(eng, 0, m, eng.observations(), eng.action_masks())


# ---------------------------------------------------------------------------------------
# the batch and the AEC env, game for game
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("num_players", "memory"), [(2, "decay:0.3"), (3, "none"), (4, "window:2")])
def test_slots_replay_the_aec_env(num_players: int, memory: str) -> None:
    """Slot ``i`` reset with seed ``s`` plays the AEC env's ``reset(seed=s)``, ``reset()``,
    ... games: same deals, observations, masks and rewards, flip for flip."""
    b, seed = 4, 2024
    eng = BatchedMemTab(b, num_players=num_players, memory=memory)
    eng.reset(seed=seed)
    envs = [raw_env(num_players=num_players, memory=memory) for _ in range(b)]
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    for _ in range(260):  # about three and a half games per slot
        for i, env in enumerate(envs):
            agent = env.agent_selection
            o = env.observe(agent)
            np.testing.assert_array_equal(eng.observations()[i], o["observation"])
            np.testing.assert_array_equal(eng.action_masks()[i], o["action_mask"])
            np.testing.assert_array_equal(eng.remembered()[i], o["remembered_mask"].astype(bool))
            assert eng.game_seed[i] == env.game_seed
        actions = eng.random_actions()
        rewards, terminated = eng.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            got = [env.rewards[a] for a in env.possible_agents]
            np.testing.assert_allclose(rewards[i], got, atol=1e-9)
            assert terminated[i] == all(env.terminations.values())
            if terminated[i]:
                env.reset()
    assert (eng.games_started >= 3).all()


# ---------------------------------------------------------------------------------------
# hand-made layouts (MemTab.from_layout)
# ---------------------------------------------------------------------------------------
INSTANT_WIN = layout_with(p0="R2", p1="R2", p2="R3", p3="B2", p4="B2", p5="R3")
#: (layout, flips, expected: over, instant_win, winner, scores)
SCRIPTS = [
    (INSTANT_WIN, [0, 1, 2, 3, 4, 5], (True, True, 0, [0, 0])),
    # no match: play passes; each player takes an R4 (positions 6 and 7)
    (INSTANT_WIN, [0, 2, 6, 0, 2, 7], (False, False, -1, [4, 4])),
    # a tableau pair: player 0 takes R3 at 2, player 1 takes R5 at 8, player 0 pairs R3
    (INSTANT_WIN, [0, 3, 2, 0, 3, 8, 0, 3, 5], (False, False, -1, [0, 5])),
]


@pytest.mark.parametrize(("layout", "flips", "expected"), SCRIPTS)
def test_scripted_layouts_match_scalar(layout: list[str], flips: list[int], expected: tuple) -> None:
    game = MemTab(num_players=2)
    eng = BatchedMemTab(3, num_players=2, memory="none", autoreset=False)
    eng.reset(seed=[1, 2, 3], layouts=[layout] * 3)
    state = game.from_layout(layout)
    memory = Memory("none", 2, NUM_POSITIONS)
    memory.reset(np.random.SeedSequence(1).spawn(2)[1])
    enc = MemTabEncoder(game)
    for pos in flips:
        t = game.apply_inplace(state, pos)
        memory.on_action(t.player, [pos])
        eng.step(np.full(3, pos))
        for i in range(3):
            np.testing.assert_array_equal(eng.state[i, : kn.ROW], state.data)
        rem = memory.remembered(state.current, game.face_down(state))
        np.testing.assert_array_equal(eng.observations()[0], enc.encode(state, state.current, rem))
        np.testing.assert_array_equal(eng.scores[0], game.scores(state))
    over, instant, winner, scores = expected
    assert bool(eng.over[0]) == over == state.over
    assert bool(eng.instant_win[0]) == instant
    assert int(eng.winner[0]) == winner
    if scores is not None:
        assert eng.scores[0].tolist() == scores


def test_random_layouts_match_scalar_and_referee() -> None:
    """Random legal play on layouts given through ``reset(layouts=...)``."""
    rng = np.random.default_rng(11)
    b = 40
    layouts = [rng.permutation(DECK) for _ in range(b)]
    eng = BatchedMemTab(b, num_players=3, memory="perfect", autoreset=False)
    eng.reset(seed=0, layouts=layouts)
    game = eng.game
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


def test_layouts_are_checked() -> None:
    eng = BatchedMemTab(2)
    bad = list(DECK)
    bad[0] = bad[2]  # three of one kind
    with pytest.raises(InvalidOptionError, match="exactly twice"):
        eng.reset(seed=0, layouts=[DECK, bad])
    with pytest.raises(InvalidOptionError, match="2 layouts"):
        eng.reset(seed=0, layouts=[DECK])


# ---------------------------------------------------------------------------------------
# the greedy and random policies
# ---------------------------------------------------------------------------------------
def test_greedy_matches_agents_basic() -> None:
    """``greedy_actions`` is ``agents.memtab_agents.GreedyAgent`` (perfect memory), flip for flip."""
    from memtab_env.agents.memtab_agents import GreedyAgent

    b = 48
    eng = BatchedMemTab(b, num_players=3, memory="perfect")
    eng.reset(seed=77)
    for step in range(150):
        greedy = eng.greedy_actions()
        masks, obs = eng.action_masks(), eng.observations()
        for i in range(b):
            agent = GreedyAgent()
            choice = agent.act({"observation": obs[i], "action_mask": masks[i]})
            assert greedy[i] == choice, f"game {i}, step {step}"
        # mix greedy and random flips so that every flip index meets known cards
        actions = greedy if step % 3 else eng.random_actions()
        eng.step(actions)


def test_random_actions_are_uniform_and_legal() -> None:
    eng = BatchedMemTab(2000)
    eng.reset(seed=1)
    a = eng.random_actions()
    assert eng.action_masks()[np.arange(2000), a].all()
    counts = np.bincount(a, minlength=NUM_POSITIONS)  # the first flip: 28 legal positions
    assert counts.min() > 2000 / 28 * 0.5 and counts.max() < 2000 / 28 * 1.5


# ---------------------------------------------------------------------------------------
# contracts: errors leave everything unchanged, seeds reproduce, buffers are reused
# ---------------------------------------------------------------------------------------
def test_illegal_action_raises_and_changes_nothing() -> None:
    eng = BatchedMemTab(5, memory="decay:0.5")
    eng.reset(seed=3)
    for _ in range(10):
        eng.step(eng.random_actions())
    state, rng = eng.state.copy(), eng.rng.copy()
    actions = eng.random_actions()
    eng.rng[:] = rng  # drawing actions advanced the auxiliary streams
    bad = actions.copy()
    bad[3] = int(np.flatnonzero(eng.status[3] != 0)[0]) if (eng.status[3] != 0).any() else 28
    with pytest.raises(IllegalActionError, match="game 3"):
        eng.step(bad)
    np.testing.assert_array_equal(eng.state, state)
    np.testing.assert_array_equal(eng.rng, rng)
    for wrong in ([0, 1], np.zeros(5), np.full(5, 99)):
        with pytest.raises(IllegalActionError):
            eng.step(wrong)
    np.testing.assert_array_equal(eng.state, state)


def test_finished_games_stay_put_without_autoreset() -> None:
    eng = BatchedMemTab(3, autoreset=False)
    eng.reset(seed=0)
    while not eng.over.all():
        a = eng.random_actions()
        done = eng.over.copy()
        before = eng.state[done].copy()
        eng.step(np.where(a < 0, 0, a))
        np.testing.assert_array_equal(eng.state[done], before)
    assert (eng.action_masks() == 0).all()
    eng.reset(seed=[5], indices=[1])
    assert not eng.over[1] and eng.over[0] and eng.game_seed[1] == 5


def test_same_seeds_same_games_and_seed_forms() -> None:
    a, b = BatchedMemTab(6, memory="decay:0.2"), BatchedMemTab(6, memory="decay:0.2")
    a.reset(seed=42)
    b.reset(seed=[42, 43, 44, 45, 46, 47])
    for _ in range(200):
        acts = a.random_actions()
        np.testing.assert_array_equal(acts, b.random_actions())
        a.step(acts)
        b.step(acts)
    np.testing.assert_array_equal(a.state, b.state)
    np.testing.assert_array_equal(a.rng, b.rng)
    c = BatchedMemTab(6)
    c.reset()  # fresh entropy: different deals
    assert not np.array_equal(c.layout, a.layout)
    for bad in (-1, 2**64, [1, 2], "x", [1.5] * 6):
        with pytest.raises(InvalidOptionError):
            c.reset(seed=bad)


def test_options_and_lifecycle_errors() -> None:
    with pytest.raises(InvalidOptionError):
        BatchedMemTab(0)
    with pytest.raises(InvalidOptionError):
        BatchedMemTab(2, num_players=7)
    with pytest.raises(InvalidOptionError):
        BatchedMemTab(2, memory="window:x")
    with pytest.raises(InvalidOptionError):
        BatchedMemTab(2, reward="points")
    eng = BatchedMemTab(2)
    with pytest.raises(MemTabError, match="reset"):
        eng.step([0, 0])
    with pytest.raises(MemTabError, match="without indices"):
        eng.reset(seed=0, indices=[0])
    eng.reset(seed=0)
    with pytest.raises(InvalidOptionError):
        eng.observations(observer=2)
    with pytest.raises(InvalidOptionError):
        eng.observations(out=np.zeros((2, 3), dtype=np.int8))


def test_outputs_are_preallocated_and_typed() -> None:
    eng = BatchedMemTab(4, num_players=3)
    eng.reset(seed=0)
    masks, obs = eng.action_masks(), eng.observations()
    assert masks.dtype == np.int8 and masks.shape == (4, NUM_POSITIONS)
    assert obs.dtype == np.int8 and obs.shape == (4, eng.encoder.size) == (4, 507 + 16 * 3)
    assert eng.action_masks() is masks and eng.observations() is obs
    out = np.zeros((4, eng.encoder.size), dtype=np.float32)
    assert eng.observations(out=out) is out
    np.testing.assert_array_equal(out, obs.astype(np.float32))
    rewards, terminated = eng.step(eng.random_actions())
    assert rewards.dtype == np.float32 and rewards.shape == (4, 3)
    assert terminated.dtype == bool
    assert eng.memory_bytes_per_game() > 0
    # the encoder's own bounds hold (scores within -35..35)
    assert (obs >= eng.encoder.low).all() and (obs <= eng.encoder.high).all()
    # a tableau status in the state is a tableau one-hot in the observation
    st = eng.get_state(0)
    assert (st.status == TABLEAU).sum() == eng.encoder.views(eng.observations()[0])[
        "status"
    ][:, TABLEAU].sum()


def test_kernel_runner_covers_every_game_once() -> None:
    from memtab_env.vector.engine_base import KernelRunner, resolve_threads

    seen = np.zeros(1000, dtype=np.int64)

    def kernel(out: np.ndarray, lo: int, hi: int) -> None:
        out[lo:hi] += 1

    runner = KernelRunner(3)
    for count in (1, 2, 7, 1000):
        seen[:] = 0
        runner(kernel, count, seen)
        assert (seen[:count] == 1).all() and (seen[count:] == 0).all()

    def broken(lo: int, hi: int) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        runner(broken, 100)
    runner.close()
    runner(kernel, 10, seen)  # restarts its pool
    runner.close()
    assert resolve_threads(False, 10**6) == 1 and resolve_threads(3, 1) == 3
    assert resolve_threads(None, 1) == 1
    with pytest.raises(InvalidOptionError):
        resolve_threads(0, 10)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5, 6])
def test_layout_constants_match_the_scalar_code(num_players: int) -> None:
    """The state matrix starts with the scalar row; the observation width is the encoder's."""
    game = MemTab(num_players=num_players)
    assert kn.observation_size(num_players) == MemTabEncoder(game).size
    assert kn.ROW == game.new_game(np.random.default_rng(0)).data.size
    eng = BatchedMemTab(2, num_players=num_players, memory="decay:0.5")
    assert eng.state.shape[1] == kn.state_width(num_players, kn.MEM_DECAY) > kn.ROW
    assert eng.rng.shape[1] == bt.rng_width(num_players, True)
    eng.reset(seed=[3, 4])
    fresh = game.new_game(np.random.default_rng(3))
    np.testing.assert_array_equal(eng.state[0, : kn.ROW], fresh.data)
    np.testing.assert_array_equal(eng.layout[0], fresh.layout)
    np.testing.assert_array_equal(eng.owner[0], fresh.owner)
    np.testing.assert_array_equal(eng.turn_flips[0], fresh.turn_flips)
    assert eng.current[0] == fresh.current and eng.turn[0] == fresh.turn
    assert not eng.instant_win[0] and eng.winner[0] == -1 and eng.flip[0] == 0
    assert eng.pairs[0] == 0 and (eng.games_started == 1).all()
