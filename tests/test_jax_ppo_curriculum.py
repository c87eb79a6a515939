"""The JAX PPO's opponent curriculum (``opponent_switches``): one run whose opponents
change at given learner steps, with the weights, the optimiser, the reward statistics
and the learning-rate schedule carried on, fresh games at each switch, the pool filled
with the current weights when self-play starts, and a resume that switches exactly where
an uninterrupted run does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("memax")
import jax.numpy as jnp  # noqa: E402

from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402

#: 16 learner steps per update: switches at 16 and 40 start updates 1 and 3
TWO_PLAYER = dict(env_id="Pelmanism-v0", env_options={"num_players": 2, "deck": "pairs:3", "memory": "none"},
                  encoder="flat", memory_model="MLP", recurrent_size=8, num_envs=4, num_steps=4,
                  num_minibatches=2, update_epochs=1, total_timesteps=80, pool_size=2, snapshot_every=1)
SWITCHES = "greedy@16,pool@40"


def _config(**kw) -> ppo.PPOConfig:
    return ppo.PPOConfig(**{**TWO_PLAYER, "opponent_switches": SWITCHES, **kw}).check()


def _leaves_equal(a, b) -> bool:
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(x), np.asarray(y))
                                      for x, y in zip(la, lb, strict=True))


@pytest.mark.parametrize(("switches", "message"), [
    ("greedy", "is not NAME@STEPS"),
    ("greedy@many", "is not NAME@STEPS"),
    ("@100", "is not NAME@STEPS"),
    ("nobody@100", "unknown opponents 'nobody'; allowed: ['random', 'greedy', 'pool', 'expert']"),
    ("greedy@0", "must come after step 0"),
    ("greedy@100,pool@50", "'pool@50' must come after step 100"),
    ("random@100", "switches to the opponents already playing"),
    (["greedy@100"], "opponent_switches must be a string"),
])
def test_a_bad_curriculum_is_refused_naming_the_item(switches, message) -> None:
    with pytest.raises(InvalidOptionError, match="opponent_switches") as info:
        ppo.PPOConfig(**{**TWO_PLAYER, "opponent_switches": switches}).check()
    assert message in str(info.value)


def test_a_curriculum_on_a_game_played_alone_is_refused() -> None:
    alone = {**TWO_PLAYER, "env_options": {**TWO_PLAYER["env_options"], "num_players": 1}}
    ppo.PPOConfig(**alone).check()
    with pytest.raises(InvalidOptionError, match="'greedy@16': a game with num_players 1 has no "
                                                 "opponents to switch"):
        ppo.PPOConfig(**{**alone, "opponent_switches": "greedy@16"}).check()


def test_stages_and_the_update_each_trains_in() -> None:
    config = _config()
    assert config.opponent_stages() == [(0, "random"), (16, "greedy"), (40, "pool")]
    assert [config.stage_at(u) for u in range(5)] == [0, 1, 1, 2, 2]  # updates start at 0, 16, 32, 48, 64
    assert config.uses_pool and not ppo.PPOConfig(**TWO_PLAYER).uses_pool
    assert ppo.PPOConfig(**TWO_PLAYER).opponent_stages() == [(0, "random")]


def test_the_curriculum_round_trips_through_a_checkpoint(tmp_path: Path) -> None:
    config = _config()
    assert ppo.PPOConfig.from_json(config.to_json()) == config
    path = tmp_path / "model.zip"
    ppo.save(path, ppo.make_policy(config), config)
    assert ppo.load(path)[1].opponent_switches == SWITCHES


@pytest.fixture(scope="module")
def run() -> list[ppo.Runner]:
    """The runner before every update of an uninterrupted curriculum run, and after the
    last (two seeds side by side)."""
    trainer = ppo.Trainer(_config(), seeds=[0, 1])
    runners = [trainer.runner]
    rows = []
    while not trainer.done:
        rows.append(trainer.update())
        runners.append(trainer.runner)
    return runners, rows


def test_weights_optimiser_and_schedule_carry_over_a_switch(run) -> None:
    runners, rows = run
    config = _config()
    # the learning rate follows one schedule over the whole run (no restart at a switch)
    for update, per_seed in enumerate(rows):
        assert per_seed[0]["learning_rate"] == pytest.approx(float(config.learning_rate_at(update * 16)))
        assert per_seed[0]["stage"] == config.stage_at(update)
    # Adam's step count goes on: one step per minibatch of every update, never reset
    counts = [int(np.asarray(leaf).max()) for leaf in jax.tree.leaves(runners[-1].opt_state)
              if jnp.issubdtype(np.asarray(leaf).dtype, jnp.integer)]
    assert max(counts) == config.num_updates * config.update_epochs * config.num_minibatches
    assert all(int(u) == config.num_updates for u in runners[-1].update)


def test_a_switch_deals_fresh_games_and_a_switch_to_pool_fills_the_pool(run) -> None:
    runners, _ = run
    # update 3 starts the pool stage: before it, the pool still holds the initial weights
    before_pool, after_pool = runners[3], runners[4]
    assert not _leaves_equal(before_pool.pool_params, jax.tree.map(
        lambda x, q: jnp.broadcast_to(x[:, None], q.shape), before_pool.params, before_pool.pool_params))
    assert before_pool.pool_params is not None and int(before_pool.pool_count[0]) == 1
    # after it: the switch put the weights of its start in every slot, then one snapshot
    slot0 = jax.tree.map(lambda q: q[:, 0], after_pool.pool_params)
    assert _leaves_equal(slot0, before_pool.params)
    assert [int(c) for c in after_pool.pool_count] == [2, 2]
    # the games of the pool stage carry its opponents' state (the structure changes)
    assert before_pool.env_state.pool_seats is None and after_pool.env_state.pool_seats is not None


def test_a_resumed_run_switches_where_an_uninterrupted_one_does(run, tmp_path: Path) -> None:
    runners, _ = run
    config = _config()
    for saved_after in (1, 3):  # saved just before the switch to greedy, and to pool
        path = tmp_path / f"state{saved_after}.eqx"
        ppo.save_runner(path, runners[saved_after])
        trainer = ppo.Trainer(config, seeds=[0, 1])
        trainer.load_state(path)
        assert trainer.updates_done == saved_after
        while not trainer.done:
            trainer.update()
        assert _leaves_equal(trainer.runner.params, runners[-1].params), saved_after
        assert _leaves_equal(trainer.runner.opt_state, runners[-1].opt_state), saved_after


def test_a_state_of_another_config_is_refused(run, tmp_path: Path) -> None:
    runners, _ = run
    path = tmp_path / "state.eqx"
    ppo.save_runner(path, runners[1])
    other = ppo.Trainer(dataclasses.replace(_config(), recurrent_size=16), seeds=[0, 1])
    with pytest.raises(InvalidOptionError, match="not a training state of this config"):
        other.load_state(path)


# -- the memory curriculum: memory `perfect` first, then the env's own -----------------
def test_the_memory_curriculum_is_a_stage_of_the_run() -> None:
    config = _config(perfect_memory_steps=24)
    assert config.stages() == [(0, "random", "perfect"), (16, "greedy", "perfect"),
                               (24, "greedy", "none"), (40, "pool", "none")]
    assert [config.stage_at(u) for u in range(5)] == [0, 1, 2, 3, 3]  # updates start at 0, 16, 32, 48
    assert config.opponent_stages() == [(0, "random"), (16, "greedy"), (40, "pool")]
    # a switch on the same step as an opponent switch is one stage; under `perfect` none
    assert _config(perfect_memory_steps=16).stages() == [
        (0, "random", "perfect"), (16, "greedy", "none"), (40, "pool", "none")]
    perfect = {**TWO_PLAYER["env_options"], "memory": "perfect"}
    assert _config(perfect_memory_steps=24, env_options=perfect).stages() == [
        (0, "random", "perfect"), (16, "greedy", "perfect"), (40, "pool", "perfect")]
    assert ppo.PPOConfig(**TWO_PLAYER).stages() == [(0, "random", "none")]
    assert ppo.PPOConfig.from_json(config.to_json()) == config
    for bad in (-1, 1.5, True, "16"):
        with pytest.raises(InvalidOptionError, match="perfect_memory_steps must be an integer"):
            _config(perfect_memory_steps=bad)


def test_the_memory_curriculum_trains_under_perfect_then_the_envs_memory() -> None:
    """The learner's observations in the games of the first stage are those of memory
    ``perfect``, from the switch on those of memory ``none``; the weights go on learning
    across the switch."""
    config = ppo.PPOConfig(**{**TWO_PLAYER, "num_envs": 16, "total_timesteps": 320,
                              "perfect_memory_steps": 128}).check()
    observe = {m: jax.jit(jax.vmap(ppo.make_view(dataclasses.replace(
        config, env_options={**config.env_options, "memory": m})).env.observe)) for m in ("perfect", "none")}
    trainer = ppo.Trainer(config, seeds=[0])
    seen = []
    while not trainer.done:
        before = trainer.runner.params
        stage = trainer.update()[0]["stage"]
        assert not _leaves_equal(before, trainer.runner.params)
        games = jax.tree.map(lambda x: x[0], trainer.runner.env_state)
        same = {m: bool(np.array_equal(np.asarray(view(games.env_state, games.learner)),
                                       np.asarray(games.observation))) for m, view in observe.items()}
        seen.append((stage, same["perfect"], same["none"]))
    assert seen == [(0.0, True, False)] * 2 + [(1.0, False, True)] * 3
