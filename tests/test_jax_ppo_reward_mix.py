"""The training reward's mix: the single-agent view's ``score_change`` (the learner's
score change over a step, opponents' flips included) and the JAX PPO's ``score_reward``,
which adds it, weighted, to the env scheme's reward for training only."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("memax")
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import memtab_env.jax as mj  # noqa: E402
from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402
from memtab_env.jax.ppo import algorithm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(recurrent_size=8, num_envs=4, num_steps=8, num_minibatches=2, update_epochs=1,
            set_layers=1, memory_model="GRU")
MEMTAB = {"env_id": "MemTab-v0", "env_options": {"num_players": 2, "memory": "none", "reward": "win"}}


def _play(view: mj.SingleAgentEnv, seed: int, episodes: int) -> list[list]:
    """Per episode: (score_change, reward, learner's score before, after) of every step,
    the learner flipping uniformly among its legal flips."""
    reset, step = jax.jit(view.reset), jax.jit(view.step)
    scores = jax.jit(view.env.game.scores)
    rng = np.random.default_rng(seed)
    out = []
    for e in range(episodes):
        state = reset(jax.random.key(1000 * seed + e))
        steps = []
        while not bool(state.terminated | state.truncated):
            before = int(scores(state.env_state.game)[int(state.learner)])
            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            state = step(state, jnp.int32(rng.choice(legal)))
            after = int(scores(state.env_state.game)[int(state.learner)])
            steps.append((float(state.score_change), float(state.reward), before, after))
        out.append(steps)
    return out


@pytest.mark.parametrize(("env_id", "options", "opponents"), [
    ("MemTab-v0", {"num_players": 2}, "random"),
    ("MemTab-v0", {"num_players": 3}, "greedy"),
    ("Pelmanism-v0", {"num_players": 2, "deck": "pairs:3"}, "greedy"),
    ("Pelmanism-v0", {"num_players": 1, "deck": "pairs:4", "reward": "turns"}, "random"),
])
def test_score_change_is_the_learners_score_change_over_the_step(env_id, options, opponents) -> None:
    view = mj.make_single_agent(env_id, opponents=opponents, learner_seat="random", **options)
    changed = False
    for steps in _play(view, seed=3, episodes=5):
        assert steps, "an episode with no learner step"
        for change, _, before, after in steps:
            assert change == after - before
            changed |= change != 0
        # an episode's changes add up to the learner's score at its end (0 at the deal,
        # unless the opponents scored for it before its first flip: never in these games)
        assert sum(c for c, *_ in steps) == steps[-1][3] - steps[0][2]
    assert changed, "no step changed the learner's score: the test cannot fail"


def test_a_pair_scores_one_and_a_miss_nothing_on_a_hand_built_deal() -> None:
    view = mj.make_single_agent("Pelmanism-v0", opponents="random", num_players=1,
                                deck="pairs:3", reward="turns", memory="none")
    step = jax.jit(view.step)
    state = view.reset_from_layout(np.asarray([0, 1, 2, 0, 1, 2]))
    assert float(state.score_change) == 0.0
    state = step(state, jnp.int32(0))
    assert float(state.score_change) == 0.0            # one card up: nothing yet
    state = step(state, jnp.int32(1))
    assert float(state.score_change) == 0.0            # a miss
    assert float(state.reward) == -1.0                 # ... ends the turn (turns scheme)
    state = step(state, jnp.int32(0))
    state = step(state, jnp.int32(3))
    assert float(state.score_change) == 1.0            # a pair
    assert float(state.reward) == -1.0                 # (turns counts a pair's turn too)


def test_score_change_survives_auto_reset_like_the_reward() -> None:
    view = mj.make_single_agent("Pelmanism-v0", opponents="random", num_players=1,
                                deck="pairs:1", reward="turns", memory="none")
    step = jax.jit(mj.auto_reset_batch(view.step, view.reset))
    states = jax.jit(jax.vmap(view.reset))(jax.random.split(jax.random.key(0), 8))
    states = step(states, jnp.zeros(8, jnp.int32), jax.random.key(1))
    states = step(states, jnp.ones(8, jnp.int32), jax.random.key(2))  # the one pair: over
    assert np.asarray(states.terminated).all()
    np.testing.assert_array_equal(np.asarray(states.score_change), 1.0)
    assert not np.asarray(view.env.game.scores(states.env_state.game)).any()  # new deals


def _rollout(config: ppo.PPOConfig, steps: int) -> list:
    """``steps`` rollout steps of ``config`` from its init: (transition, score_change)."""
    init, _, policy = algorithm.make_train(config)
    runner = jax.jit(init)(jax.random.key(config.seed))
    view = ppo.make_view(config)
    env_step = mj.auto_reset_batch(view.step, view.reset)
    _, static = eqx.partition(policy, eqx.is_inexact_array)
    one = jax.jit(lambda carry: algorithm.rollout_step(config, static, env_step, carry, None))
    carry = (runner.params, runner.env_state, runner.h, runner.starts, runner.returns,
             runner.discounted, runner.reward_stats, runner.shown, runner.key)
    out = []
    for _ in range(steps):
        carry, transition = one(carry)
        out.append((jax.tree.map(np.asarray, transition), np.asarray(carry[1].score_change)))
    return out


def test_the_training_reward_is_the_schemes_plus_the_weighted_score_change() -> None:
    base = ppo.PPOConfig(**TINY, **MEMTAB, total_timesteps=64, normalize_reward=False)
    mixed = dataclasses.replace(base, score_reward=0.25)
    plain, mix = _rollout(base, 40), _rollout(mixed, 40)
    nonzero = 0
    for (t0, change0), (t1, change1) in zip(plain, mix, strict=True):
        np.testing.assert_array_equal(t0["action"], t1["action"])  # the same play: only the reward moves
        np.testing.assert_array_equal(change0, change1)
        np.testing.assert_allclose(t1["reward"], t0["reward"] + 0.25 * change1, atol=1e-6)
        np.testing.assert_array_equal(t1["won"], t0["won"])          # the scheme's win
        np.testing.assert_array_equal(t0["won"], t0["done"] & (t0["reward"] > 0))
        nonzero += int((change1 != 0).sum())
    assert nonzero, "no score changed in 40 steps: the test cannot fail"
    assert any(t["done"].any() for t, _ in mix), "no episode ended: the won check is empty"


def test_a_mix_trains_other_weights() -> None:
    base = ppo.PPOConfig(**TINY, **MEMTAB, total_timesteps=64)
    weights = {}
    for weight in (0.0, 0.1):
        policy, _ = ppo.train(dataclasses.replace(base, score_reward=weight))
        weights[weight] = jax.tree.leaves(eqx.filter(policy, eqx.is_array))
    assert any(not np.array_equal(np.asarray(a), np.asarray(b))
               for a, b in zip(weights[0.0], weights[0.1], strict=True))


@pytest.mark.parametrize(("value", "message"), [
    (-0.1, r"score_reward must be a number in \[0, 100.0\]"),
    (101, r"score_reward must be a number in \[0, 100.0\]"),
    (float("nan"), r"score_reward must be a number in \[0, 100.0\]"),
    (True, r"score_reward must be a number"),
    ("0.1", r"score_reward must be a number"),
])
def test_score_reward_errors_name_the_field(value, message) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        ppo.PPOConfig(**TINY, **MEMTAB, score_reward=value).check()


def test_score_reward_round_trips_through_checkpoints(tmp_path: Path) -> None:
    config = ppo.PPOConfig(**TINY, **MEMTAB, score_reward=0.05)
    path = ppo.save(tmp_path / "p.zip", ppo.make_policy(config), config)
    assert ppo.load(path)[1] == config
    assert ppo.PPOConfig.from_json(json.loads(json.dumps(config.to_json()))).score_reward == 0.05


def test_checkpoints_from_before_the_mix_train_on_the_scheme_alone() -> None:
    path = ROOT / "results/study/pelmanism-solo-none/none__GRU__s0.zip"
    with zipfile.ZipFile(path) as z:
        assert "score_reward" not in json.loads(z.read("policy.json"))["config"]
    assert ppo.load(path)[1].score_reward == 0.0
