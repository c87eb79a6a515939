"""memtab_env.jax.gymnax: a gymnax Environment under gymnax's own auto-reset and wrappers
(``LogWrapper``, ``FlattenObservationWrapper``), and the PureJaxRL-style example at a
tiny budget. Needs the ``gymnax`` extra (``.ci/run`` runs this file in an environment of
its own: gymnax caps gymnasium below the test suite's)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnax", reason="the gymnax extra (tested by .ci/run in its own environment)")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from gymnax.environments import environment, spaces  # noqa: E402
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper  # noqa: E402

from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import gymnax as mg  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("env_id", "options"), [("MemTab-v0", {"opponents": "greedy"}),
                                                 ("Pelmanism-v0", {"deck": "pairs:4", "num_players": 3})])
def test_make_gives_a_gymnax_environment(env_id: str, options: dict) -> None:
    env, params = mg.make(env_id, **options)
    assert isinstance(env, environment.Environment) and env.name == env_id
    assert params == env.default_params and params.max_steps_in_episode == env.view.env.max_game_length
    space = env.observation_space(params)
    assert isinstance(space, spaces.Box) and space.dtype == jnp.int8
    assert space.shape == (env.view.obs_size + env.num_actions,)
    action_space = env.action_space(params)
    assert isinstance(action_space, spaces.Discrete) and action_space.n == env.num_actions
    obs, state = env.reset(jax.random.key(0), params)
    assert space.contains(obs) and obs.shape == space.shape
    observation, mask = env.split_observation(obs)
    np.testing.assert_array_equal(np.asarray(observation), np.asarray(state.view.observation))
    np.testing.assert_array_equal(np.asarray(mask), np.asarray(state.view.legal_action_mask))
    assert mask.dtype == jnp.bool_ and bool(mask.any())


def test_wrapped_rollout_auto_resets_and_logs_episodes() -> None:
    """64 games under LogWrapper(FlattenObservationWrapper(env)), masked random flips:
    gymnax's auto-reset starts every next episode, the mask rides in the observation, and
    LogWrapper's returns are the sums of the rewards of each episode."""
    env, params = mg.make("Pelmanism-v0", deck="pairs:4", opponents="random", reward="score")
    num_actions = env.num_actions
    wrapped = LogWrapper(FlattenObservationWrapper(env))
    batch, steps = 64, 60
    keys = jax.random.split(jax.random.key(0), batch)
    obs, state = jax.vmap(wrapped.reset, in_axes=(0, None))(keys, params)

    def one(carry, key):
        obs, state = carry
        act_key, step_key = jax.random.split(key)
        mask = mg.split_observation(obs, num_actions)[1]
        action = jax.random.categorical(act_key, jnp.where(mask, 0.0, -jnp.inf), axis=-1)
        out = jax.vmap(wrapped.step, in_axes=(0, 0, 0, None))(jax.random.split(step_key, batch), state,
                                                              action, params)
        obs2, state2, reward, terminated, truncated, info = out
        legal = jnp.take_along_axis(mask, action[:, None], axis=1)[:, 0]
        return (obs2, state2), (reward, terminated | truncated, info["returned_episode_returns"],
                                info["final_observation"], state2.env_state.time, legal)

    _, (reward, done, logged, final, time, legal) = jax.jit(
        lambda c, k: jax.lax.scan(one, c, jax.random.split(k, steps)))((obs, state), jax.random.key(1))
    reward, done, logged, final, time, legal = map(np.asarray, (reward, done, logged, final, time, legal))
    assert legal.all() and done.sum() > batch  # every game finished at least once
    assert (time[done] == 0).all() and (time[~done] > 0).all()
    assert final[done][:, -num_actions:].all()  # a finished episode's mask: all 1
    for g in range(batch):
        total = 0.0
        for t in range(steps):
            total += reward[t, g]
            if done[t, g]:
                assert logged[t, g] == pytest.approx(total, abs=1e-5)
                total = 0.0


def test_time_limit_truncates() -> None:
    env, params = mg.make("MemTab-v0")
    params = params.replace(max_steps_in_episode=3)
    obs, state = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    flags = []
    for t in range(3):
        action = jnp.argmax(env.split_observation(obs)[1])
        obs, state, _, terminated, truncated, info = step(jax.random.key(t), state, action, params)
        flags.append((bool(terminated), bool(truncated)))
    assert flags == [(False, False), (False, False), (False, True)] and int(state.time) == 0


def test_pool_opponents_are_refused() -> None:
    with pytest.raises(InvalidOptionError, match="pool"):
        mg.make("MemTab-v0", opponents="pool", pool_policy=object())


def test_purejaxrl_example_trains_with_masked_logits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example at a tiny budget: it compiles, trains, never samples an illegal flip."""
    spec = importlib.util.spec_from_file_location("purejaxrl_ppo", ROOT / "examples" / "purejaxrl_ppo.py")
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, example)  # dataclasses look their module up
    spec.loader.exec_module(example)
    metrics = example.main(["--env-id", "Pelmanism-v0", "--option", "deck=pairs:3",
                            "--option", "num_players=1", "--option", "reward=turns",
                            "--total-timesteps", "256", "--num-envs", "8",
                            "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "1",
                            "--hidden", "16"])
    assert metrics["illegal_actions"].sum() == 0 and metrics["episodes"].sum() > 0
    assert np.isfinite(metrics["value_loss"]).all() and (metrics["entropy"] > 0).all()
    assert (metrics["mean_return"][metrics["episodes"] > 0] <= -3).all()  # three pairs: three turns at least


def test_docs_gymnax_example_runs() -> None:
    import re

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "jax.md").read_text(), re.S)
    (code,) = [b for b in blocks if "memtab_env.jax import gymnax" in b]
    exec(compile(code, "docs/jax.md", "exec"), {})  # noqa: S102 - our own docs
