"""The JAX backend against the numba engine and the AEC env, flip for flip.

Layouts are dealt by the numba engine (the AEC env's ``reset(seed)``) and played through
``memtab_env.jax.make(...).init_from_layout(...)`` and ``step`` in a vmapped batch, with
random legal actions drawn from the AEC env's mask. After every flip, for every player:
the observation, the remembered mask, the legal mask of the player on turn, the player
on turn, this step's rewards, terminations, truncations and, at the end, the winners must
be equal. ``decay`` is checked with injected forgetting draws and statistically.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import gymnasium  # noqa: E402

import memtab_env  # noqa: E402, F401 - registers the ids
import memtab_env.jax as mj  # noqa: E402
from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax.memory import MemoryModel  # noqa: E402
from memtab_env.memory import Memory  # noqa: E402
from memtab_env.memtab_v0 import raw_env as memtab_raw  # noqa: E402
from memtab_env.pelmanism_v0 import raw_env as pelmanism_raw  # noqa: E402

RAW = {"MemTab-v0": memtab_raw, "Pelmanism-v0": pelmanism_raw}


def _layout_ids(env, aec) -> np.ndarray:
    """The deal of an AEC game as the engine's card/kind ids, from its record."""
    return np.asarray(env.game.parse_layout(aec.record()["layout"]), dtype=np.int8)


def _play_differential(env_id: str, options: dict, games: int, seed: int) -> int:
    """Play ``games`` AEC games and the same layouts in one JAX batch; return the flips
    compared."""
    env = mj.make(env_id, **options)
    aecs = [RAW[env_id](**options) for _ in range(games)]
    for i, aec in enumerate(aecs):
        aec.reset(seed=seed + i)
    layouts = jnp.asarray(np.stack([_layout_ids(env, a) for a in aecs]))
    state = jax.vmap(lambda lay: env.init_from_layout(lay))(layouts)
    step = jax.jit(jax.vmap(env.step))
    observe_all = jax.jit(jax.vmap(env.observe_all))
    remembered = jax.jit(jax.vmap(jax.vmap(env.remembered_mask, in_axes=(None, 0)),
                                  in_axes=(0, None)))
    players = jnp.arange(env.num_players)
    rng = np.random.default_rng(seed)
    live = np.ones(games, bool)
    flips = 0
    while True:
        obs = np.asarray(observe_all(state))
        rem = np.asarray(remembered(state, players))
        mask = np.asarray(state.legal_action_mask)
        cur = np.asarray(state.current_player)
        rewards = np.asarray(state.rewards)
        term, trunc = np.asarray(state.terminated), np.asarray(state.truncated)
        for g, aec in enumerate(aecs):
            if not live[g]:
                continue
            agent = aec.agent_selection
            assert cur[g] == aec.agent_name_mapping[agent], (g, flips)
            for p, a in enumerate(aec.possible_agents):
                o = aec.observe(a)
                np.testing.assert_array_equal(obs[g, p], o["observation"], err_msg=f"game {g} player {p}")
                np.testing.assert_array_equal(rem[g, p], o["remembered_mask"].astype(bool))
                assert aec.rewards[a] == pytest.approx(rewards[g, p], abs=1e-6), (g, p, flips)
            assert term[g] == aec.terminations[agent] and trunc[g] == aec.truncations[agent]
            if term[g] or trunc[g]:
                assert mask[g].all()  # pgx's convention: any action, no effect
                winners = np.flatnonzero(np.asarray(env.game.winners(
                    jax.tree.map(lambda x, g=g: x[g], state.game))))
                assert winners.tolist() == aec.record()["result"]["winners"] or trunc[g]
                live[g] = False
                continue
            np.testing.assert_array_equal(mask[g], aec.observe(agent)["action_mask"].astype(bool))
        if not live.any():
            return flips
        actions = np.zeros(games, np.int32)
        for g, aec in enumerate(aecs):
            if live[g]:
                actions[g] = rng.choice(np.flatnonzero(mask[g]))
                aec.step(int(actions[g]))
                flips += 1
        state = step(state, jnp.asarray(actions))


MEMTAB_CASES = [
    (1, "perfect", "score"), (2, "none", "win"), (2, "window:3", "turns"),
    (3, "none", "score"), (4, "window:0", "win"), (5, "perfect", "win"),
    (6, "none", "win"), (2, "perfect", "win"), (3, "window:7", "win"),
]


@pytest.mark.parametrize(("num_players", "memory", "reward"), MEMTAB_CASES)
def test_memtab_equals_numba_flip_for_flip(num_players: int, memory: str, reward: str) -> None:
    opts = dict(num_players=num_players, memory=memory, reward=reward,
                first_player=num_players - 1)
    flips = _play_differential("MemTab-v0", opts, games=160, seed=100 * num_players)
    assert flips > 160 * 20


PELMANISM_CASES = [
    ("pairs:4", 1, "perfect", "turns", None), ("pairs:8", 2, "none", "win", None),
    ("quartets:3", 3, "window:4", "score", None), ("pairs:6", 4, "none", "win", 30),
    ("colour", 2, "window:10", "win", None), ("quartets:2", 5, "perfect", "win", None),
    ("pairs:3", 6, "none", "score", None), ("standard", 2, "perfect", "win", 60),
]


@pytest.mark.parametrize(("deck", "num_players", "memory", "reward", "max_turns"), PELMANISM_CASES)
def test_pelmanism_equals_engine_flip_for_flip(deck: str, num_players: int, memory: str,
                                               reward: str, max_turns: int | None) -> None:
    opts = dict(deck=deck, num_players=num_players, memory=memory, reward=reward,
                max_turns=max_turns)
    games = 40 if deck in ("standard", "colour") else 160
    assert _play_differential("Pelmanism-v0", opts, games=games, seed=7 * num_players) > games * 4


def test_pelmanism_truncates_at_the_game_length_cap() -> None:
    """A game without a rule bound is truncated at the engine's maximum length, as the AEC
    env truncates it: two flips that never match, repeated."""
    env = mj.make("Pelmanism-v0", deck="pairs:2", num_players=1)
    state = env.init_from_layout(["K00", "K01", "K00", "K01"])
    step = jax.jit(env.step)
    for i in range(env.max_game_length):
        assert not state.truncated
        state = step(state, jnp.int32(i % 2))
    assert bool(state.truncated) and not bool(state.terminated)
    assert env.max_game_length == pelmanism_raw(deck="pairs:2", num_players=1).game.info.max_game_length


# -- decay --------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.0, 0.3, 0.7, 1.0])
def test_decay_equals_numpy_with_the_same_uniforms(p: float) -> None:
    """The JAX model takes its uniforms as input: given the ones the numpy model draws
    (its observers' streams replayed, one per remembered card in position order), it
    forgets exactly the same cards."""
    n, positions = 3, 12
    model = MemoryModel(f"decay:{p}", n, positions)
    numpy_memory = Memory(f"decay:{p}", n, positions, seed=0)
    streams = [np.random.default_rng(c) for c in np.random.SeedSequence(0).spawn(n)]
    reveal = jax.jit(model.reveal)
    mem = model.init()
    rng = np.random.default_rng(5)
    face_down = rng.random(positions) < 0.8
    for _ in range(200):
        actor, pos = int(rng.integers(n)), int(rng.integers(positions))
        u = np.ones((n, positions))
        for o in range(n):
            idx = np.flatnonzero(numpy_memory.known_row(o))
            if p > 0.0:
                u[o, idx] = streams[o].random(idx.size)
        numpy_memory.on_action(actor, [pos])
        mem = reveal(mem, jnp.int32(actor), jnp.int32(pos), jnp.asarray(u, jnp.float32))
        for o in range(n):
            np.testing.assert_array_equal(
                np.asarray(model.remembered(mem, o, jnp.asarray(face_down))),
                numpy_memory.remembered(o, face_down))


def test_decay_forgets_with_probability_p() -> None:
    """Under ``decay:p`` a card revealed k flips ago is still remembered with probability
    (1 - p)**k: the first flip of a MemTab game, seen by the other player, three flips on."""
    p, games = 0.2, 20_000
    env = mj.make("MemTab-v0", memory=f"decay:{p}")
    keys = jax.random.split(jax.random.key(3), games)
    layout = jnp.asarray(np.repeat(np.arange(14, dtype=np.int8), 2))  # 0,0,1,1,...: no match at 0, 2
    state = jax.vmap(lambda k: env.init_from_layout(layout, key=k))(keys)
    step = jax.jit(jax.vmap(env.step))
    for action in (0, 2):  # flips 1 and 2 of player 0: kinds 0 and 1, no match
        state = step(state, jnp.full(games, action, jnp.int32))
    state = step(state, jnp.full(games, 4, jnp.int32))  # flip 3: to the tableau, turn over
    kept = np.asarray(jax.vmap(env.remembered_mask, in_axes=(0, None))(state, 1))[:, 0]
    # position 0 was revealed at flip 1 and then saw 2 more reveals
    expected = (1 - p) ** 2
    assert abs(kept.mean() - expected) < 4 * np.sqrt(expected * (1 - expected) / games)


# -- API: shapes, dtypes, jit, vmap, conventions ---------------------------------------
@pytest.mark.parametrize(("env_id", "options"), [("MemTab-v0", {"num_players": 3}),
                                                  ("Pelmanism-v0", {"deck": "pairs:5"})])
def test_shapes_dtypes_and_no_recompilation(env_id: str, options: dict) -> None:
    env = mj.make(env_id, **options)
    aec = RAW[env_id](**options)
    n, a = env.num_players, env.num_actions
    batch = 16
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), batch))
    assert state.observation.shape == (batch, aec.encoder.size) and state.observation.dtype == jnp.int8
    assert state.legal_action_mask.shape == (batch, a) and state.legal_action_mask.dtype == jnp.bool_
    assert state.rewards.shape == (batch, n) and state.rewards.dtype == jnp.float32
    assert state.current_player.shape == (batch,) and state.current_player.dtype == jnp.int32
    assert state.terminated.dtype == jnp.bool_ and state.truncated.dtype == jnp.bool_
    step = jax.jit(jax.vmap(env.step))
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = np.asarray(state.legal_action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask], np.int32)
        new = step(state, jnp.asarray(actions))
        assert jax.tree.structure(new) == jax.tree.structure(state)
        for x, y in zip(jax.tree.leaves(new), jax.tree.leaves(state), strict=True):
            assert x.shape == y.shape and x.dtype == y.dtype
        state = new
    assert step._cache_size() == 1
    low, high = aec.encoder.low, aec.encoder.high
    obs = np.asarray(state.observation)
    assert ((obs >= low) & (obs <= high)).all()


def test_illegal_action_ends_the_game_with_a_loss_for_the_offender() -> None:
    env = mj.make("MemTab-v0", num_players=3)
    state = env.step(env.init(jax.random.key(1)), 5)
    before = state
    for bad in (5, -1, 28, 10**6, 2**40, -(2**63)):  # flipped this turn, out of range
        out = env.step(before, bad)
        assert bool(out.terminated) and not bool(out.truncated)
        assert np.asarray(out.rewards).tolist() == [-1.0, 0.0, 0.0]
        assert np.asarray(out.legal_action_mask).all()
        np.testing.assert_array_equal(np.asarray(out.game.status), np.asarray(before.game.status))
        # a finished game does not change and pays nothing
        after = env.step(out, 3)
        assert np.asarray(after.rewards).tolist() == [0.0, 0.0, 0.0] and bool(after.terminated)
        np.testing.assert_array_equal(np.asarray(after.game.status), np.asarray(out.game.status))
    with pytest.raises(InvalidOptionError, match="integer"):
        env.step(before, 1.5)
    penalised = mj.make("MemTab-v0", illegal_action_penalty=-5.0)
    out = penalised.step(penalised.init(jax.random.key(0)), 40)
    assert np.asarray(out.rewards).tolist() == [-5.0, 0.0]


def test_init_from_layout_takes_a_record_and_checks_it() -> None:
    aec = memtab_raw(num_players=2)
    aec.reset(seed=11)
    record = aec.record()
    env = mj.make("MemTab-v0")
    state = env.init_from_layout(record["layout"], first_player=1)
    np.testing.assert_array_equal(np.asarray(state.game.layout), _layout_ids(env, aec))
    assert int(state.current_player) == 1
    with pytest.raises(InvalidOptionError, match="exactly twice"):
        env.init_from_layout(["R2"] * 28)
    with pytest.raises(InvalidOptionError, match="first_player"):
        env.init_from_layout(record["layout"], first_player=2)
    pel = mj.make("Pelmanism-v0", deck="colour")
    with pytest.raises(InvalidOptionError, match="52 cards"):
        pel.init_from_layout(["AS", "2S"])


def test_options_are_checked() -> None:
    with pytest.raises(InvalidOptionError, match="no JAX backend"):
        mj.make("MemoryBoard-v0")
    with pytest.raises(InvalidOptionError, match="unknown option"):
        mj.make("MemTab-v0", colour="red")
    with pytest.raises(InvalidOptionError, match="num_players"):
        mj.make("MemTab-v0", num_players=7)
    with pytest.raises(InvalidOptionError, match="memory"):
        mj.make("Pelmanism-v0", memory="decay:2")
    with pytest.raises(InvalidOptionError, match="finite"):
        mj.make("MemTab-v0", illegal_action_penalty=float("nan"))
    with pytest.raises(InvalidOptionError, match="built-in opponents"):
        mj.make_single_agent("MemTab-v0", opponents="search")


def test_auto_reset_starts_a_new_game_and_keeps_the_last_rewards() -> None:
    env = mj.make("Pelmanism-v0", deck="pairs:1", num_players=2)
    step = jax.jit(mj.auto_reset(env.step, env.init))
    state = env.init(jax.random.key(0))
    state = step(state, 0, jax.random.key(1))
    state = step(state, 1, jax.random.key(2))  # the only pair: the game ends
    assert bool(state.terminated)
    assert np.asarray(state.rewards).tolist() == [1.0, -1.0]
    assert int(state.step_count) == 0 and np.asarray(state.legal_action_mask).all()
    state = step(state, 0, jax.random.key(3))
    assert not bool(state.terminated) and int(state.step_count) == 1


def test_observe_all_is_the_multi_agent_view() -> None:
    env = mj.make("MemTab-v0", num_players=4, memory="none")
    state = env.init(jax.random.key(2))
    for a in (0, 1, 2, 3):
        state = env.step(state, a)
    every = np.asarray(env.observe_all(state))
    assert every.shape == (4, env.obs_size)
    for p in range(4):
        np.testing.assert_array_equal(every[p], np.asarray(env.observe(state, p)))
    np.testing.assert_array_equal(every[int(state.current_player)], np.asarray(state.observation))


# -- the single-agent view --------------------------------------------------------------
@pytest.mark.parametrize(("env_id", "options", "opponents"), [
    ("MemTab-v0", dict(num_players=2, memory="perfect", reward="win"), "greedy"),
    ("MemTab-v0", dict(num_players=3, memory="window:4", reward="score"), "greedy"),
    ("MemTab-v0", dict(num_players=4, memory="none", reward="win"), "greedy"),
    ("Pelmanism-v0", dict(deck="pairs:6", num_players=2, memory="none", reward="win"), "greedy"),
    ("Pelmanism-v0", dict(deck="quartets:3", num_players=3, memory="window:2", reward="score"),
     "greedy"),
    ("MemTab-v0", dict(num_players=2, memory="none", reward="win"), "expert"),
    ("MemTab-v0", dict(num_players=2, memory="perfect", reward="score"), "expert"),
    ("MemTab-v0", dict(num_players=3, memory="window:4", reward="win"), ["expert", "greedy"]),
    ("MemTab-v0", dict(num_players=4, memory="none", reward="score"), ["greedy", "expert", "expert"]),
])
def test_remembering_opponents_play_as_agents_make_them(env_id: str, options: dict,
                                                        opponents: str | list[str]) -> None:
    """The JAX view with ``greedy`` and ``expert`` opponents plays every episode exactly
    as ``gymnasium.make`` with ``agents.make(...)`` opponents on the same deal."""
    n = options["num_players"]
    view = mj.make_single_agent(env_id, opponents=opponents, learner_seat=1 % n, **options)
    reset = jax.jit(view.reset_from_layout)
    step = jax.jit(view.step)
    rng = np.random.default_rng(1)
    for episode in range(12):
        gym_env = gymnasium.make(env_id, opponents=opponents, learner_seat=1 % n,
                                 max_episode_steps=10**6, **options)
        aec = RAW[env_id](**options)
        aec.reset(seed=episode)
        layout = aec.record()["layout"]
        obs, info = gym_env.reset(seed=episode, options={"layout": layout})
        state = reset(jnp.asarray(_layout_ids(view.env, aec)))
        while True:
            np.testing.assert_array_equal(np.asarray(state.observation), obs)
            np.testing.assert_array_equal(np.asarray(state.legal_action_mask),
                                          info["action_mask"].astype(bool))
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, term, trunc, info = gym_env.step(action)
            state = step(state, jnp.int32(action))
            assert float(state.reward) == pytest.approx(reward, abs=1e-6)
            assert (bool(state.terminated), bool(state.truncated)) == (term, trunc)
            if term or trunc:
                np.testing.assert_array_equal(np.asarray(state.observation), obs)
                break


def test_expert_opponents_play_alike_batched_and_alone() -> None:
    """Under ``vmap`` the host-played ``expert`` gets the whole batch in one call: every
    lane steps exactly as the same state stepped alone."""
    view = mj.make_single_agent("MemTab-v0", opponents="expert", learner_seat="random",
                                num_players=2, memory="none")
    batch, lanes = 24, (0, 7, 23)
    step, step_one = jax.jit(jax.vmap(view.step)), jax.jit(view.step)
    state = jax.jit(jax.vmap(view.reset))(jax.random.split(jax.random.key(3), batch))
    assert set(np.asarray(state.learner).tolist()) == {0, 1}
    rng = np.random.default_rng(2)
    for _ in range(12):
        mask = np.asarray(state.legal_action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        after = step(state, jnp.asarray(actions))
        for lane in lanes:
            one = jax.tree.map(lambda x, i=lane: x[i], state)
            alone = step_one(one, jnp.int32(actions[lane]))
            for x, y in zip(jax.tree.leaves(alone), jax.tree.leaves(after), strict=True):
                if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
                    x, y = jax.random.key_data(x), jax.random.key_data(y)
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y)[lane])
        state = after
    assert np.asarray(state.terminated).any()


def test_expert_opponents_are_memtab_only() -> None:
    with pytest.raises(InvalidOptionError, match=r"pelmanism plays the built-in opponents "
                                                 r"\['random', 'greedy', 'pool'\], got 'expert'"):
        mj.make_single_agent("Pelmanism-v0", opponents="expert", deck="pairs:6")


def test_random_opponents_draw_uniformly_among_legal_flips() -> None:
    view = mj.make_single_agent("MemTab-v0", opponents="random", learner_seat=1)
    env = view.env
    state = env.step(env.step(env.init(jax.random.key(0)), 3), 17)  # seat 0's third flip next
    seen = jnp.full((2, 28), -1, jnp.int8)
    act = jax.jit(jax.vmap(lambda k: view.opponent_action(state, seen, jnp.int32(1), k)[0]))
    draws = np.asarray(act(jax.random.split(jax.random.key(1), 5200)))
    legal = np.asarray(state.legal_action_mask)
    assert legal[draws].all() and legal.sum() == 26
    counts = np.bincount(draws, minlength=28)[legal]
    expected = draws.size / 26
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 60  # 25 degrees of freedom: p < 1e-4 beyond 60


def test_single_agent_episodes_end_and_redeal_when_the_learner_cannot_play() -> None:
    # one kind, learner second: the first player always clears the table
    view = mj.make_single_agent("Pelmanism-v0", deck="pairs:1", learner_seat=1)
    state = jax.jit(view.reset)(jax.random.key(0))
    assert int(state.redeals) == 100 and bool(state.terminated)
    view = mj.make_single_agent("MemTab-v0", opponents=["random", "greedy"], num_players=3,
                                learner_seat="random")
    step = jax.jit(jax.vmap(view.step))
    state = jax.jit(jax.vmap(view.reset))(jax.random.split(jax.random.key(4), 64))
    seats = np.asarray(state.learner)
    assert set(seats.tolist()) == {0, 1, 2}
    rng = np.random.default_rng(0)
    for _ in range(40):
        mask = np.asarray(state.legal_action_mask)
        done = np.asarray(state.terminated | state.truncated)
        assert (mask.any(axis=1) | done).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        state = step(state, jnp.asarray(actions, jnp.int32))
        cur = np.asarray(state.env_state.current_player)
        done = np.asarray(state.terminated | state.truncated)
        assert ((cur == seats) | done).all()
    assert np.asarray(state.terminated).all()  # a MemTab game lasts at most 26 turns


def test_shuffle_is_a_uniform_permutation() -> None:
    """Every card lands on every position equally often, and a deal is a permutation."""
    cards = jnp.arange(6, dtype=jnp.int8)
    deals = np.asarray(jax.vmap(lambda k: mj.shuffle(k, cards))(
        jax.random.split(jax.random.key(9), 30_000)))
    assert (np.sort(deals, axis=1) == np.arange(6)).all()
    counts = np.stack([(deals == c).sum(axis=0) for c in range(6)])  # card x position
    expected = deals.shape[0] / 6
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 70  # 25 degrees of freedom: p < 1e-5 beyond 70
    # all 720 orders of 6 cards occur
    codes = (deals * 6 ** np.arange(6)).sum(axis=1)
    assert np.unique(codes).size == 720


@pytest.mark.parametrize("reserve", [None, 1])
def test_auto_reset_batch_deals_only_the_ended_games(reserve: int | None) -> None:
    """Ended games get new, distinct deals (also when more games end than ``reserve``);
    the others go on unchanged; the episode end is kept on the new game's first state."""
    env = mj.make("Pelmanism-v0", deck="pairs:1", num_players=2)
    batch = 12
    step = jax.jit(mj.auto_reset_batch(env.step, env.init, reserve=reserve))
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), batch))
    states = jax.jit(jax.vmap(env.step))(states, jnp.zeros(batch, jnp.int32))
    # games 0..5 take their pair (the game ends), games 6..11 flip again illegally: the
    # first flip's card is up
    actions = jnp.asarray([1] * 6 + [0] * 6, jnp.int32)
    out = step(states, actions, jax.random.key(5))
    assert np.asarray(out.terminated).all()
    assert np.asarray(out.rewards)[:6].tolist() == [[1.0, -1.0]] * 6
    assert np.asarray(out.rewards)[6:].tolist() == [[-1.0, 0.0]] * 6
    assert (np.asarray(out.step_count) == 0).all()  # every game is new
    env8 = mj.make("MemTab-v0")
    step8 = jax.jit(mj.auto_reset_batch(env8.step, env8.init, reserve=reserve))
    states = jax.vmap(env8.init)(jax.random.split(jax.random.key(1), 64))
    states = jax.jit(jax.vmap(env8.step))(states, jnp.zeros(64, jnp.int32))
    ends = np.arange(64) % 3 == 0  # a third of the games flip illegally: they end
    out = step8(states, jnp.asarray(np.where(ends, 0, 1), jnp.int32), jax.random.key(2))
    layouts = np.asarray(out.game.layout)
    fresh = layouts[ends]
    assert len({row.tobytes() for row in fresh}) == fresh.shape[0]  # independent deals
    np.testing.assert_array_equal(layouts[~ends], np.asarray(states.game.layout)[~ends])
    assert (np.asarray(out.step_count)[~ends] == 2).all() and (np.asarray(out.step_count)[ends] == 0).all()


def _auto_reset_rollout(env: mj.Env, step, batched: bool, batch: int = 32, steps: int = 60):
    """Every state of ``steps`` random legal flips of ``batch`` games through ``step``."""

    def one(states, key):
        act_key, reset_key = jax.random.split(key)
        actions = jax.vmap(mj.uniform_legal)(jax.random.split(act_key, batch), states.legal_action_mask)
        states = step(states, actions, reset_key if batched else jax.random.split(reset_key, batch))
        return states, states

    start = jax.vmap(env.init)(jax.random.split(jax.random.key(0), batch))
    return jax.jit(lambda s: jax.lax.scan(one, s, jax.random.split(jax.random.key(1), steps))[1])(start)


def _plain(leaf: jax.Array) -> np.ndarray:
    typed_key = jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
    return np.asarray(jax.random.key_data(leaf) if typed_key else leaf)


def test_auto_reset_builds_each_observation_once_and_the_same() -> None:
    """``auto_reset_batch`` / ``auto_reset`` of an observing env skip the observations of
    the stepped games and build those of the states they return: the same states as
    stepping with observations throughout (a step function they do not recognise)."""
    env = mj.make("MemTab-v0", num_players=3, memory="window:4")
    wrapped = lambda s, a, k=None: env.step(s, a, k)  # noqa: E731 - not env.step itself
    pairs = [(mj.auto_reset_batch(wrapped, env.init, reserve=2), mj.auto_reset_batch(env.step, env.init,
                                                                                    reserve=2), True),
             (jax.vmap(mj.auto_reset(wrapped, env.init)), jax.vmap(mj.auto_reset(env.step, env.init)), False)]
    for twice, once, batched in pairs:
        a = _auto_reset_rollout(env, twice, batched)
        b = _auto_reset_rollout(env, once, batched)
        assert int(a.terminated.sum()) > 0 and a.observation.shape[-1] == env.obs_size
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
            np.testing.assert_array_equal(_plain(x), _plain(y))


def test_docs_examples_run() -> None:
    import re
    import textwrap
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "jax.md").read_text()
    blocks = re.findall(r"^( *)```python\n(.*?)^ *```", text, re.S | re.M)
    programs = [code for indent, code in blocks if not indent]
    fragments = [textwrap.dedent(code) for indent, code in blocks if indent]  # inside a list item
    assert (len(programs), len(fragments)) == (5, 1)
    for code in fragments:
        compile(code, "docs/jax.md", "exec")
    for code in programs:
        if "memtab_env.jax import gymnax" in code:  # the gymnax extra: tests/test_jax_gymnax.py
            continue
        exec(compile(code, "docs/jax.md", "exec"), {})  # noqa: S102 - our own docs
