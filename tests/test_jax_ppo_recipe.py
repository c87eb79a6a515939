"""The JAX PPO's training recipe: the update's whole-sequence replay equals step-by-step
play for every wired memax architecture (resets mid-sequence included), whole-episode
rollouts, the learning-rate schedule, the parameter count, and the recipe's fields
through checkpoints (new and old)."""

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

from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402

PELMANISM = {"env_id": "Pelmanism-v0",
             "env_options": {"num_players": 1, "deck": "pairs:3", "reward": "turns", "memory": "none"}}
TINY = dict(recurrent_size=8, num_envs=4, num_steps=4, num_minibatches=2, update_epochs=1,
            total_timesteps=48, set_layers=1)
ROOT = Path(__file__).resolve().parents[1]


def _config(**kw) -> ppo.PPOConfig:
    return ppo.PPOConfig(**{**TINY, **PELMANISM, "memory_model": "GRU", **kw})


STEPS = 11


def _perturbed(h):
    """``h`` with random noise on its real and complex leaves (a uniform shift can vanish
    in a normalised state), flags and counters kept."""
    leaves, tree = jax.tree.flatten(h)
    keys = jax.random.split(jax.random.key(7), len(leaves))
    return jax.tree.unflatten(tree, [
        x + jax.random.normal(k, x.shape, x.dtype) if jnp.issubdtype(x.dtype, jnp.inexact) else x
        for x, k in zip(leaves, keys, strict=True)])


@pytest.fixture(scope="module")
def played() -> tuple:
    """Observations and legal masks of random play (a new game at every start), the
    sequence starting inside an episode (a carried state) and episodes starting at 3, 6,
    7 (an episode of one step) and 10: resets mid-sequence."""
    view = ppo.make_view(_config())
    starts = np.zeros(STEPS, bool)
    starts[[3, 6, 7, 10]] = True
    key = jax.random.key(1)
    reset, step = jax.jit(view.reset), jax.jit(view.step)
    state = reset(key)
    obs, masks = [], []
    for t in range(STEPS):
        if starts[t] and t:
            state = reset(jax.random.fold_in(key, t))
        obs.append(state.observation)
        masks.append(state.legal_action_mask)
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        state = step(state, jnp.int32(legal[t % len(legal)]), jax.random.fold_in(key, 100 + t))
    return jnp.stack(obs), jnp.stack(masks), jnp.asarray(starts)


# every architecture but Attention (the slowest to compile) under the flat encoder, and GRU
# under the set one (the set encoder runs the same memory over the positions); the other
# cases with -m slow
REPLAY_CASES = [
    pytest.param(model, encoder, id=f"{model}-{encoder}",
                 marks=[pytest.mark.slow] if (encoder == "set" and model != "GRU") or model == "Attention"
                 else [])
    for model in ppo.MEMORY_MODELS for encoder in ("set", "flat")
]


@pytest.mark.parametrize(("model", "encoder"), REPLAY_CASES)
def test_whole_sequence_replay_equals_step_by_step_play(model: str, encoder: str, played: tuple) -> None:
    """The update replays a rollout as one sequence from the rollout's first state, with
    the recurrent state reset where an episode starts; playing it one step at a time (as
    the rollout does) gives the same logits, values and final state."""
    obs, masks, starts = played
    policy = ppo.make_policy(_config(memory_model=model, encoder=encoder))
    steps = STEPS
    # the rollout's first state is a carried one, not the initial state
    h0 = policy.initial_state()
    for t in range(3):
        h0, _, _ = policy.step(h0, obs[t], jnp.asarray(t == 0), masks[t])
    hs, logits, values = policy(h0, obs, starts, masks)
    h, step_logits, step_values = h0, [], []
    for t in range(steps):
        h, lg, v = policy.step(h, obs[t], starts[t], masks[t])
        step_logits.append(lg)
        step_values.append(v)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(jnp.stack(step_logits)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(values), np.asarray(jnp.stack(step_values)),
                               rtol=1e-4, atol=1e-5)
    last = (jax.vmap(policy.memory.latest_recurrent_state)(hs) if encoder == "set"
            else policy.memory.latest_recurrent_state(hs))
    for x, y in zip(jax.tree.leaves(last), jax.tree.leaves(h), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-5)
    # the carried state counts until the first reset, and only until then (in the states:
    # a model may not read them at every step, DeltaNet's ReLU query can be all zero)
    other = _perturbed(h0)
    hs_other, logits_other, _ = policy(other, obs, starts, masks)
    np.testing.assert_allclose(np.asarray(logits_other)[3:], np.asarray(logits)[3:], rtol=1e-4, atol=1e-5)
    time_axis = 1 if encoder == "set" else 0
    moved = [np.abs(np.take(np.asarray(x, np.complex64) - np.asarray(y, np.complex64), range(3),
                            time_axis)).max(initial=0.0)
             for x, y in zip(jax.tree.leaves(hs_other), jax.tree.leaves(hs), strict=True)
             if jnp.issubdtype(x.dtype, jnp.inexact)]
    if model != "MLP":  # no recurrent state to carry
        assert max(moved) > 1e-6


def test_every_wired_architecture_has_a_parameter_count() -> None:
    counts = {m: ppo.count_parameters(ppo.make_policy(_config(memory_model=m))) for m in ppo.MEMORY_MODELS}
    assert all(c > 0 for c in counts.values())
    policy = ppo.make_policy(_config(memory_model="GRU"))
    leaves = jax.tree.leaves(eqx.filter(policy, eqx.is_inexact_array))
    assert counts["GRU"] == sum(x.size for x in leaves) - policy.scale.size  # the scale is a constant
    wider = ppo.count_parameters(ppo.make_policy(_config(memory_model="GRU", recurrent_size=16)))
    assert wider > counts["GRU"]


@pytest.mark.slow
def test_fresh_rollouts_deal_new_games_and_reset_memory_every_update() -> None:
    """With ``fresh_rollouts`` an update does not depend on the games and memories the
    previous rollout left; without it, it does."""
    for fresh in (True, False):
        init, update, _ = ppo.make_train(_config(fresh_rollouts=fresh))
        runner = init(jax.random.key(0))
        runner, _ = update(runner)
        other = dataclasses.replace(
            runner, h=_perturbed(runner.h),
            env_state=init(jax.random.key(9)).env_state, starts=jnp.zeros_like(runner.starts))
        a, _ = update(runner)
        b, _ = update(other)
        diff = max(float(jnp.abs(x - y).max()) for x, y in
                   zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params), strict=True))
        assert (diff == 0.0) == fresh, (fresh, diff)


def _old_linear(config: ppo.PPOConfig, update: int) -> float:
    """The schedule before ``lr_schedule`` existed: linear to zero over the updates."""
    return config.learning_rate * (1.0 - update / config.num_updates)


def test_learning_rate_schedules() -> None:
    batch = 16
    base = _config(total_timesteps=160, learning_rate=1e-3)  # 10 updates of 16 steps
    for u in range(10):
        assert float(base.learning_rate_at(u * batch)) == pytest.approx(_old_linear(base, u), rel=1e-6)
    assert float(_config(anneal_lr=False).learning_rate_at(10_000)) == pytest.approx(2e-3)
    floor = dataclasses.replace(base, lr_floor=0.25)
    assert float(floor.learning_rate_at(160)) == pytest.approx(2.5e-4)
    assert float(floor.learning_rate_at(80)) == pytest.approx(1e-3 * (0.25 + 0.75 * 0.5))
    cosine = dataclasses.replace(base, lr_schedule="cosine", lr_floor=0.1)
    assert float(cosine.learning_rate_at(0)) == pytest.approx(1e-3)
    assert float(cosine.learning_rate_at(80)) == pytest.approx(1e-3 * 0.55)
    assert float(cosine.learning_rate_at(10_000)) == pytest.approx(1e-4)
    warm = dataclasses.replace(base, lr_schedule="constant", lr_warmup=64)
    assert [float(warm.learning_rate_at(s)) for s in (0, 32, 64, 128)] == pytest.approx(
        [0.0, 5e-4, 1e-3, 1e-3])
    # a follow-up continues its init run's schedule: 80 steps done of a 160-step horizon
    follow = dataclasses.replace(base, total_timesteps=80, lr_offset=80, lr_horizon=160)
    assert float(follow.learning_rate_at(0)) == pytest.approx(float(base.learning_rate_at(80)))
    assert float(follow.learning_rate_at(48)) == pytest.approx(float(base.learning_rate_at(128)))


def test_the_optimiser_steps_at_the_scheduled_rate() -> None:
    """Adam's first steps have the size of the learning rate: the optimiser follows
    ``learning_rate_at`` update by update (every minibatch of an update alike)."""
    config = _config(total_timesteps=64, learning_rate=1e-2, lr_schedule="cosine", lr_floor=0.5)
    tx = ppo.algorithm.optimiser(config)
    params = {"w": jnp.zeros(3)}
    state = tx.init(params)
    sizes = []
    for _ in range(config.num_updates * config.update_epochs * config.num_minibatches):
        updates, state = tx.update({"w": jnp.full(3, 0.01)}, state, params)
        sizes.append(float(jnp.abs(updates["w"][0])))
    per_update = config.update_epochs * config.num_minibatches
    want = [float(config.learning_rate_at(u * config.num_envs * config.num_steps))
            for u in range(config.num_updates)]
    assert sizes[::per_update] == pytest.approx(want, rel=2e-3)  # Adam: g / (|g| + eps)
    assert want[0] > want[-1] > 0.5 * config.learning_rate


@pytest.mark.parametrize(("fields", "message"), [
    ({"lr_schedule": "step"}, "lr_schedule must be one of"),
    ({"lr_floor": 1.5}, r"lr_floor must be a number in \[0, 1\]"),
    ({"lr_warmup": -1}, r"lr_warmup must be an integer in \[0, "),
    ({"lr_horizon": 10**14}, r"lr_horizon must be an integer in \[0, "),
    ({"lr_offset": 1.5}, r"lr_offset must be an integer in \[0, "),
    ({"fresh_rollouts": "yes"}, "fresh_rollouts must be true or false"),
    ({"perfect_memory_steps": -5}, r"perfect_memory_steps must be an integer in \[0, "),
])
def test_recipe_field_errors_name_the_field(fields: dict, message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        _config(**fields).check()


def test_recipe_fields_round_trip_through_checkpoints(tmp_path: Path) -> None:
    config = _config(fresh_rollouts=True, lr_schedule="cosine", lr_floor=0.1, lr_warmup=32,
                     lr_horizon=4096, lr_offset=1024, perfect_memory_steps=2048)
    policy = ppo.make_policy(config)
    path = ppo.save(tmp_path / "p.zip", policy, config)
    loaded, again = ppo.load(path)
    assert again == config
    for x, y in zip(jax.tree.leaves(eqx.filter(policy, eqx.is_array)),
                    jax.tree.leaves(eqx.filter(loaded, eqx.is_array)), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert ppo.PPOConfig.from_json(json.loads(json.dumps(config.to_json()))) == config


def test_checkpoints_from_before_the_recipe_fields_load_with_the_old_behaviour() -> None:
    """A committed checkpoint names none of the recipe's fields: it loads, and its config
    trains as it did (carried rollouts, linear annealing to zero)."""
    path = ROOT / "results/study/pelmanism-solo-none/none__GRU__s0.zip"
    with zipfile.ZipFile(path) as z:
        saved = json.loads(z.read("policy.json"))["config"]
    assert not {"fresh_rollouts", "lr_schedule", "lr_floor", "perfect_memory_steps"} & set(saved)
    policy, config = ppo.load(path)
    assert not config.fresh_rollouts and config.anneal_lr
    assert config.stages() == [(0, config.opponents, config.env_options["memory"])]
    assert ppo.count_parameters(policy) > 0
    for u in (0, 7, config.num_updates - 1):
        assert float(config.learning_rate_at(u * config.num_envs * config.num_steps)) == pytest.approx(
            _old_linear(config, u), rel=1e-5)
