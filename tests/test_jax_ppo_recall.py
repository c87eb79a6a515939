"""The JAX PPO's recall loss (``recall_coef``): its targets are the kinds the learner's
own observations showed, its value is a masked cross-entropy, it leaves a run without it
unchanged, and it teaches a memory that can remember to give back the cards it saw."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("memax")
import jax.numpy as jnp  # noqa: E402

import memtab_env.jax as mj  # noqa: E402
from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402
from memtab_env.jax.ppo.algorithm import recall_loss_and_counts  # noqa: E402

TINY = dict(encoder="kinds", recurrent_size=8, set_layers=1, num_envs=4, num_steps=8,
            num_minibatches=2, update_epochs=1, total_timesteps=64)


def _game(env_id: str, memory: str, **options) -> mj.SingleAgentEnv:
    return mj.make_single_agent(env_id, memory=memory, **options)


@pytest.mark.parametrize(("env_id", "options"), [
    ("MemTab-v0", {"num_players": 2}),
    ("Pelmanism-v0", {"num_players": 2, "deck": "pairs:6"}),
])
def test_shown_kinds_are_what_perfect_recall_shows_under_memory_none(env_id: str, options: dict) -> None:
    """Under ``none`` every flip is in the learner's next observation (it shows what was
    revealed since its last action), so the kinds its observations showed are exactly
    what memory ``perfect`` shows of the same game's face-down cards: an oracle computed
    by the env, not by the network's decoding."""
    forgetful, recalling = _game(env_id, "none", **options), _game(env_id, "perfect", **options)
    config = ppo.PPOConfig(env_id=env_id, env_options={**options, "memory": "none"}, **TINY)
    net = ppo.make_policy(config, forgetful)
    reset_a, reset_b = jax.jit(forgetful.reset), jax.jit(recalling.reset)
    step_a, step_b = jax.jit(forgetful.step), jax.jit(recalling.step)
    shown_kinds = jax.jit(lambda obs, start, shown: net.shown_kinds(obs, start, shown))
    a, b = reset_a(jax.random.key(3)), reset_b(jax.random.key(3))
    shown = jnp.full(forgetful.env.game.num_positions, -1, jnp.int8)
    rng = np.random.default_rng(0)
    checked = 0
    for t in range(300):
        start = jnp.bool_(t == 0)
        if bool(a.terminated | a.truncated):
            a, b = reset_a(jax.random.key(t)), reset_b(jax.random.key(t))
            start = jnp.bool_(True)
        shown = shown_kinds(a.observation, start, shown)
        card = np.asarray(b.observation)[np.asarray(net.card_index)]
        status = np.asarray(b.observation)[np.asarray(net.status_index)]
        face_down = status[:, 0] > 0
        want = np.where(card.any(-1), card.argmax(-1), -1)
        np.testing.assert_array_equal(np.asarray(shown)[face_down], want[face_down])
        checked += int((want[face_down] >= 0).sum())
        action = rng.choice(np.flatnonzero(np.asarray(a.legal_action_mask)))
        a, b = step_a(a, jnp.int32(action)), step_b(b, jnp.int32(action))
    assert checked > 100  # remembered face-down cards were compared, not only unknowns


def test_the_recall_loss_is_a_masked_cross_entropy_with_its_counts() -> None:
    logits = jnp.log(jnp.array([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.6, 0.2, 0.2]]]))
    asked = jnp.array([[True, True, True, False]])
    shown = jnp.array([[0, 0, -1, 1]], jnp.int8)  # -1: the last class, "not known"
    loss, right, known = recall_loss_and_counts(logits, asked, shown)
    np.testing.assert_allclose(float(loss), -(np.log(0.5) + np.log(0.1) + np.log(0.6)) / 3, rtol=1e-6)
    assert (float(right), float(known)) == (1.0, 2.0)  # position 0 recalled, 1 not, 3 not asked
    loss, right, known = recall_loss_and_counts(logits, jnp.zeros_like(asked), shown)
    assert (float(loss), float(right), float(known)) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(("fields", "message"), [
    ({"recall_coef": -1.0}, "recall_coef must be a number in"),
    ({"recall_coef": True}, "recall_coef must be a number in"),
    ({"recall_coef": "1"}, "recall_coef must be a number in"),
    ({"recall_coef": 1.0, "encoder": "set"}, "recall_coef needs encoder 'kinds'"),
])
def test_a_bad_recall_coef_is_refused_by_name(fields: dict, message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        ppo.PPOConfig(**{**TINY, **fields}).check()


def test_recall_coef_round_trips_and_a_run_without_it_keeps_its_state(tmp_path: Path) -> None:
    config = ppo.PPOConfig(**TINY, recall_coef=0.5)
    assert ppo.PPOConfig.from_json(config.to_json()) == config
    init, _, _ = ppo.make_train(dataclasses.replace(config, recall_coef=0.0))
    without = init(jax.random.key(0))
    assert without.shown is None  # the training state (and its checkpoint) as before the loss
    init, _, _ = ppo.make_train(config)
    runner = init(jax.random.key(0))
    assert runner.shown.shape == (4, 28) and bool((runner.shown == -1).all())  # MemTab: 28 cards
    assert jax.tree.structure(dataclasses.replace(runner, shown=None)) == jax.tree.structure(without)
    from memtab_env.jax.ppo.checkpoints import load_runner, save_runner

    runner = dataclasses.replace(runner, shown=runner.shown.at[1, 5].set(3))
    save_runner(tmp_path / "state.eqx", runner)
    loaded = load_runner(tmp_path / "state.eqx", init(jax.random.key(7)))
    np.testing.assert_array_equal(np.asarray(loaded.shown), np.asarray(runner.shown))
    with pytest.raises(InvalidOptionError, match="not a training state of this config"):
        load_runner(tmp_path / "state.eqx", without)


def test_an_update_logs_the_recall_metrics_and_fills_the_targets() -> None:
    config = ppo.PPOConfig(**TINY, recall_coef=1.0)
    init, update, _ = ppo.make_train(config)
    runner, metrics = jax.jit(update)(init(jax.random.key(1)))
    assert {"recall_loss", "recall_accuracy"} <= set(metrics)
    assert not {"recall_right", "recall_asked"} & set(metrics)
    assert 0.0 <= float(metrics["recall_accuracy"]) <= 1.0 and float(metrics["recall_loss"]) > 0
    assert bool((runner.shown >= 0).any())  # 8 flips of 4 games showed some kinds
    plain = ppo.make_train(dataclasses.replace(config, recall_coef=0.0))
    assert "recall_loss" not in jax.jit(plain[1])(plain[0](jax.random.key(1)))[1]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "learns"), [("GRU", True), ("MLP", False)])
def test_the_recall_loss_teaches_a_memory_to_give_back_what_it_saw(model: str, learns: bool) -> None:
    """Solo Pelmanism with 3 pairs under ``none``, the recall loss weighted far above
    PPO's, 100 updates: a GRU memory per position learns to give back the kinds it was
    shown (0.98 of them over the last 10 updates when written); an MLP (no memory: it
    sees only the current observation) cannot (0.00), which is what makes the test able
    to fail."""
    config = ppo.PPOConfig(env_id="Pelmanism-v0", env_options={"num_players": 1, "deck": "pairs:3",
                                                               "memory": "none"},
                           encoder="kinds", memory_model=model, recurrent_size=16, set_layers=1,
                           num_envs=32, num_steps=16, num_minibatches=2, update_epochs=2,
                           learning_rate=3e-3, anneal_lr=False, recall_coef=10.0,
                           total_timesteps=32 * 16 * 100)
    init, update, _ = ppo.make_train(config)
    update = jax.jit(update)
    runner = init(jax.random.key(0))
    accuracy = []
    for _ in range(config.num_updates):
        runner, metrics = update(runner)
        accuracy.append(float(metrics["recall_accuracy"]))
    late = float(np.mean(accuracy[-10:]))
    if learns:
        assert late > 0.9, accuracy
    else:
        assert late < 0.3, accuracy
