"""The JAX PPO (memtab_env.jax.ppo): seeds side by side, checkpoints as data, resuming,
sharding, the JAX evaluation against the AEC env, and ``algo: jax_ppo`` in train.py."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("memax")
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from memtab_env.errors import InvalidOptionError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402

TINY = dict(recurrent_size=8, num_envs=4, num_steps=4, num_minibatches=2, update_epochs=1,
            total_timesteps=48, set_layers=1)


def _config(**kw) -> ppo.PPOConfig:
    fields = {**TINY, "memory_model": "GRU",
              "env_options": {"num_players": 2, "memory": "none"}, **kw}
    return ppo.PPOConfig(**fields)


def _arrays(tree):
    return jax.tree.leaves(eqx.filter(tree, eqx.is_array))


def _assert_same(a, b, **tol) -> None:
    for x, y in zip(_arrays(a), _arrays(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), **tol)


def test_a_seed_trains_the_same_whichever_seeds_train_beside_it() -> None:
    config = _config()
    first = ppo.Trainer(config, seeds=[3, 5])
    beside = ppo.Trainer(config, seeds=[1, 3])
    for _ in range(2):
        row = first.update()[0]
        rows = beside.update()
    assert len(rows) == 2 and rows[1]["timesteps"] == row["timesteps"] == 32
    assert rows[1]["policy_loss"] == pytest.approx(row["policy_loss"], rel=1e-4, abs=1e-6)
    _assert_same(first.policies()[0], beside.policies()[1], rtol=1e-5, atol=1e-6)
    # and the other seed is another run
    diff = [float(jnp.abs(x - y).max()) for x, y in
            zip(_arrays(beside.policies()[0]), _arrays(beside.policies()[1]), strict=True)]
    assert max(diff) > 1e-3


def test_reward_normalisation_keeps_running_moments() -> None:
    from memtab_env.jax.ppo.algorithm import update_stats

    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=n).astype(np.float32) for n in (5, 17, 64)]
    stats = jnp.array([0.0, 0.0, 1.0], jnp.float32)
    for b in batches:
        stats = update_stats(stats, jnp.asarray(b))
    everything = np.concatenate(batches)
    assert float(stats[0]) == everything.size
    assert float(stats[1]) == pytest.approx(everything.mean(), rel=1e-5)
    assert float(stats[2]) == pytest.approx(everything.var(), rel=1e-4)


def test_resuming_from_a_saved_state_continues_the_same_run(tmp_path: Path) -> None:
    config = _config(total_timesteps=48)
    straight = ppo.Trainer(config)
    for _ in range(3):
        straight.update()
    first = ppo.Trainer(config)
    first.update()
    ppo.save_runner(tmp_path / "state.eqx", first.runner)
    again = ppo.Trainer(config)
    again.runner = ppo.load_runner(tmp_path / "state.eqx", again.initial_runner())
    assert again.updates_done == 1
    again.update()
    again.update()
    assert again.done
    _assert_same(straight.policies()[0], again.policies()[0], rtol=1e-5, atol=1e-6)
    (tmp_path / "bad.eqx").write_bytes(b"not a state")
    with pytest.raises(InvalidOptionError, match="not a training state"):
        ppo.load_runner(tmp_path / "bad.eqx", again.initial_runner())


def test_checkpoints_are_data_and_agents_make_plays_them(tmp_path: Path) -> None:
    from memtab_env.agents import make as make_agent

    from memtab_env.memtab_v0 import raw_env
    from memtab_env.play import play_game

    config = _config()
    policy, history = ppo.train(config)
    assert len(history) == 3 and all(np.isfinite(h["value_loss"]) for h in history)
    path = ppo.save(tmp_path / "policy.zip", policy, config, {"note": "x"})
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["policy.eqx", "policy.json"]
        meta = json.loads(z.read("policy.json"))
    assert meta["format"] == ppo.CHECKPOINT_FORMAT and meta["note"] == "x"
    again, config2 = ppo.load(path)
    assert config2 == config
    _assert_same(policy, again, rtol=0, atol=0)
    agent = make_agent(str(path))
    assert isinstance(agent, ppo.JaxPPOAgent)
    record = play_game(raw_env(num_players=2, memory="none"), [agent, make_agent("random")], seed=3)
    assert record["result"]["winners"]
    # another number of players: refused by name, not a shape error from inside JAX
    with pytest.raises(InvalidOptionError, match=r"trained on MemTab-v0 .* observation of shape"):
        play_game(raw_env(num_players=3, memory="none"), [agent, *[make_agent("random")] * 2], seed=3)
    # untrusted files: a clear error, nothing executed
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("policy.json", json.dumps({"format": "other"}))
        z.writestr("policy.eqx", b"")
    with pytest.raises(InvalidOptionError, match="format must be"):
        ppo.load(bad)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("policy.json", json.dumps({"format": ppo.CHECKPOINT_FORMAT,
                                              "config": {**config.to_json(), "recurrent_size": 9}}))
        z.writestr("policy.eqx", zipfile.ZipFile(path).read("policy.eqx"))
    with pytest.raises(InvalidOptionError, match="does not fit the config"):
        ppo.load(bad)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("policy.json", json.dumps({"format": ppo.CHECKPOINT_FORMAT,
                                              "config": {**config.to_json(), "evil": 1}}))
        z.writestr("policy.eqx", b"")
    with pytest.raises(InvalidOptionError, match="unknown PPO config field"):
        ppo.load(bad)
    with pytest.raises(InvalidOptionError, match="algo must be 'jax_ppo'"):
        ppo.JaxPPOAgent(path, algo="MaskablePPO")
    with pytest.raises(InvalidOptionError, match="multiple of num_minibatches"):
        ppo.PPOConfig(num_envs=10, num_minibatches=4).check()


@pytest.mark.parametrize(("env_id", "options", "opponents", "encoder"), [
    ("MemTab-v0", {"num_players": 2, "memory": "none"}, "greedy", "set"),
    pytest.param("MemTab-v0", {"num_players": 2, "memory": "none"}, "greedy", "kinds",
                 marks=pytest.mark.slow),
])
def test_jax_evaluation_plays_as_the_agent_plays_through_the_aec_env(
        tmp_path: Path, env_id: str, options: dict, opponents: str, encoder: str) -> None:
    """The study's JAX play (most likely flips) gives every game the return that the same
    policy, as an agent, gets through the AEC env against the same (deterministic)
    opponents, deal for deal and seat for seat."""
    import importlib

    from memtab_env.agents import make as make_agent

    import memtab_env.jax as mj
    from memtab_env.jax.evaluate import deal_layouts, play_deals
    from memtab_env.play import play_game
    from memtab_env.registry import game_spec

    config = _config(env_id=env_id, env_options=options, opponents=opponents, encoder=encoder)
    policy, _ = ppo.train(config)
    path = ppo.save(tmp_path / "p.zip", policy, config)
    view = mj.make_single_agent(env_id, opponents=opponents, **options)
    seeds = list(range(40, 52))
    n = options["num_players"]
    layouts = np.repeat(deal_layouts(env_id, options, seeds), n, axis=0)
    seats = np.tile(np.arange(n), len(seeds))
    out = play_deals(view, policy, layouts, seats)
    spec = game_spec(env_id)
    raw = importlib.import_module(spec.aec_module).raw_env
    for i, (seed, seat) in enumerate(zip(np.repeat(seeds, n), seats, strict=True)):
        players = [make_agent(opponents, game=spec.name) for _ in range(n)]
        players[seat] = make_agent(str(path))
        record = play_game(raw(**options), players, seed=int(seed))
        # solo, turns reward: minus the turns (two flips each, extra turns included)
        expected = -len(record["actions"]) / 2 if n == 1 else record["result"]["rewards"][seat]
        assert float(out["return"][i]) == pytest.approx(expected, abs=1e-6), (seed, seat)
        assert int(out["steps"][i]) == sum(1 for a in record["actions"] if a["player"] == seat)


@pytest.mark.slow
def test_sharded_training_equals_one_device(tmp_path: Path) -> None:
    """Two (forced host) devices: the games are split, the run is the same run. The
    sharded run is a subprocess (the device count is fixed when JAX starts); the
    one-device run is this process's, whose programs the other tests here compiled."""
    code = f"""
import jax
from memtab_env.jax import ppo
assert len(jax.devices()) == 2
config = ppo.PPOConfig.from_json({{**{_config().to_json()!r}, "num_devices": 2}})
two = ppo.Trainer(config)
assert len(two.runner.env_state.observation.sharding.device_set) == 2
while not two.done:
    two.update()
ppo.save({str(tmp_path / "two.zip")!r}, two.policies()[0], config)
"""
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    one = ppo.Trainer(_config())
    while not one.done:
        one.update()
    two, _ = ppo.load(tmp_path / "two.zip")
    _assert_same(one.policies()[0], two, rtol=0, atol=1e-4)
    with pytest.raises(InvalidOptionError, match="device"):
        ppo.Trainer(_config(num_devices=64))


# -- train.py with algo: jax_ppo ---------------------------------------------------------
def test_train_py_trains_checkpoints_resumes_and_evaluates_with_jax_ppo(tmp_path: Path) -> None:
    """Also the smoke test of the jax extra alone (.ci/run runs it without torch or SB3)."""
    import importlib.util

    from memtab_env.train.run import main

    config = tmp_path / "jax.yaml"
    config.write_text(f"""
MemTab-v0:
  algo: jax_ppo
  policy: set
  memory: none
  memory_model: GRU
  recurrent_size: 8
  set_layers: 1
  opponents: {{random: 1.0}}
  n_envs: 4
  n_steps: 4
  batch_size: 8
  n_epochs: 1
  total_timesteps: 32
  checkpoint_every: 16
  eval_opponents: [random]
  eval_games: 4
  progress_bar: false
  runs_dir: {tmp_path / "runs"}
""")
    run_dir = main(["--config", str(config)])
    assert ppo.read_meta(run_dir / "model.zip")["config"]["memory_model"] == "GRU"
    latest = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert latest["step"] == 32 and latest["state"] == "state_000000000032.eqx"
    report = json.loads((run_dir / "eval.json").read_text())
    assert report["algo"] == "jax_ppo" and report["results"]["random"]["games"] == 4
    rows = [json.loads(line) for line in (run_dir / "tensorboard" / "jax_ppo_1" / "metrics.jsonl").open()]
    assert [r["timesteps"] for r in rows] == [16, 32] and "jax_ppo/episode_return" in rows[0]
    events = list((run_dir / "tensorboard").rglob("events.out.tfevents.*"))
    writers = [m for m in ("tensorboardX", "torch") if importlib.util.find_spec(m)]
    assert bool(events) == bool(writers), (events, writers)
    # out of its run folder, a checkpoint is evaluated under the config it carries
    alone = tmp_path / "alone" / "policy.zip"
    alone.parent.mkdir()
    shutil.copy(run_dir / "model.zip", alone)
    main(["--evaluate", str(alone), "--eval_games", "2", "--eval_opponents", "[greedy]",
          "--runs_dir", str(tmp_path / "runs")])
    report = json.loads((tmp_path / "runs" / "evaluations" / "policy_eval.json").read_text())
    assert report["config"]["memory"] == "none" and report["config"]["memory_model"] == "GRU"
    assert report["results"]["greedy"]["games"] == 2
    main(["--resume", str(run_dir), "--total_timesteps", "48"])
    latest = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert latest["step"] == 48
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "checkpoints/state_000000000048.eqx" in manifest["files"]


@pytest.mark.parametrize(("override", "message"), [
    (["--opponents", "{random: 0.5, expert: 0.5}"], "one built-in JAX opponent"),
    (["--batch_size", "5"], "batch_size 5"),
    (["--memory_model", "Telepathy"], "memax has no memory model 'Telepathy'"),
    (["--env", "MemoryBoard-v0"], "the JAX backend's games"),
    (["--policy", "set", "--latch_init", "true"], "latch_init needs encoder 'kinds'"),
    (["--policy", "kinds", "--algo", "maskable_ppo"], "policy 'kinds' works with algo jax_ppo only"),
])
def test_jax_ppo_config_errors_name_the_field(tmp_path: Path, override, message) -> None:
    from memtab_env.train.config import ConfigError
    from memtab_env.train.run import main

    config = tmp_path / "jax.yaml"
    config.write_text("MemTab-v0:\n  algo: jax_ppo\n  opponents: {random: 1.0}\n"
                      "MemoryBoard-v0:\n  algo: jax_ppo\n  opponents: {random: 1.0}\n")
    with pytest.raises(ConfigError, match=message):
        main(["--config", str(config), "--runs_dir", str(tmp_path / "runs"), *override])


@pytest.mark.slow
def test_a_run_started_from_weights_is_a_fresh_run_with_those_weights() -> None:
    config = _config(opponents="pool", pool_size=2, snapshot_every=1)
    # started from its own initial network, a run trains exactly as a fresh one
    fresh, warm = ppo.Trainer(config, seeds=[3, 4]), ppo.Trainer(config, seeds=[3, 4])
    warm.start_from(ppo.Trainer(config, seeds=[3, 4]).policies())
    for _ in range(2):
        assert warm.update()[1]["policy_loss"] == pytest.approx(fresh.update()[1]["policy_loss"])
    keys_as_data = functools.partial(jax.tree.map, lambda x: jax.random.key_data(x)
                                     if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)
    _assert_same(keys_as_data(warm.runner), keys_as_data(fresh.runner), rtol=1e-6, atol=1e-7)
    # started from another run's trained weights: those weights, a fresh optimiser and pool
    trained = ppo.Trainer(config, seeds=[7])
    trained.update()
    weights = trained.policies()[0]
    other = ppo.Trainer(config, seeds=[3])
    other.start_from([weights])
    ours = eqx.partition(weights, eqx.is_inexact_array)[0]
    _assert_same(jax.tree.map(lambda x: x[0], other.runner.params), ours, rtol=0, atol=0)
    _assert_same(other.runner.opt_state, ppo.Trainer(config, seeds=[3]).runner.opt_state,
                 rtol=0, atol=0)
    for slot in range(2):  # the self-play pool starts filled with them
        _assert_same(jax.tree.map(lambda x, s=slot: x[0, s], other.runner.pool_params), ours,
                     rtol=0, atol=0)
    assert other.updates_done == 0 and other.update()[0]["timesteps"] == 16
    with pytest.raises(InvalidOptionError, match="already been updated"):
        other.start_from([weights])
    with pytest.raises(InvalidOptionError, match="2 seed.s. need 2 policies, got 1"):
        ppo.Trainer(config, seeds=[3, 4]).start_from([weights])
    with pytest.raises(InvalidOptionError, match="policy 0 is not the network of this config"):
        ppo.Trainer(_config(recurrent_size=6), seeds=[3]).start_from([weights])


@pytest.mark.slow
def test_self_play_pool_keeps_snapshots_and_pool_seats_play_them() -> None:
    import memtab_env.jax as mj

    config = _config(opponents="pool", pool_size=2, snapshot_every=1, memory_model="MLP",
                     total_timesteps=48)
    trainer = ppo.Trainer(config)
    snapshots = []
    for _ in range(3):
        trainer.update()
        snapshots.append(trainer.policies()[0])
    runner = trainer.runner
    assert int(runner.pool_count[0]) == 4  # the initial network, then one per update
    # a ring of 2: slot 1 holds the snapshot after update 3 (count 3 -> slot 1), slot 0 update 2
    for slot, policy in ((0, snapshots[1]), (1, snapshots[2])):
        pool_slot = jax.tree.map(lambda x, s=slot: x[0, s], runner.pool_params)
        ours = eqx.partition(policy, eqx.is_inexact_array)[0]
        for x, y in zip(jax.tree.leaves(pool_slot), jax.tree.leaves(ours), strict=True):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # a pool seat samples its flips from a snapshot: legal flips, whole games
    view = mj.make_single_agent("MemTab-v0", opponents="pool", pool_policy=trainer.policy,
                                learner_seat=0, num_players=2, memory="none")
    pool = (jax.tree.map(lambda x: x[0], runner.pool_params), jnp.int32(2))
    step = jax.jit(jax.vmap(lambda s, a: view.step(s, a, pool=pool)))
    states = jax.jit(jax.vmap(lambda k: view.reset(k, pool=pool)))(jax.random.split(jax.random.key(0), 16))
    assert set(np.asarray(states.pool_seats[0][:, 1]).tolist()) <= {0, 1}
    rng = np.random.default_rng(0)
    for _ in range(60):
        mask = np.asarray(states.legal_action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask], np.int32)
        states = step(states, jnp.asarray(actions))
    assert np.asarray(states.terminated).all()
    # every game ended by its rules (an illegal flip ends a game with the cards left on the table)
    assert np.asarray(states.env_state.game.over).all()
    with pytest.raises(InvalidOptionError, match="pool_policy"):
        mj.make_single_agent("MemTab-v0", opponents="pool")


@pytest.mark.parametrize("encoder", ["set", "kinds"])
@pytest.mark.parametrize(("env_id", "options"), [
    ("MemTab-v0", {"num_players": 2, "memory": "none"}),
    pytest.param("Pelmanism-v0", {"num_players": 1, "deck": "pairs:6", "memory": "none"},
                 marks=pytest.mark.slow),
])
def test_set_encoders_are_equivariant_over_positions(encoder: str, env_id: str, options: dict) -> None:
    """Relabelling the positions of a whole observation sequence (their status and card
    fields) relabels the logits the same way and leaves the values unchanged."""
    import gymnasium

    from memtab_env.registry import game_spec, make_encoder

    config = _config(env_id=env_id, env_options=options, encoder=encoder, recurrent_size=8,
                     set_layers=2)
    policy = ppo.make_policy(config)
    env = gymnasium.make(env_id, **{k: v for k, v in options.items()})
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    seq = [obs]
    for _ in range(5):
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(rng.choice(legal)))
        assert not (term or trunc)
        seq.append(obs)
    seq = np.stack(seq).astype(np.float32)
    layout = make_encoder(game_spec(env_id).name, **{k: v for k, v in options.items()
                                                     if k != "memory"}).token_layout()
    p = layout["positions"]
    perm = rng.permutation(p)
    moved = seq.copy()
    for name in ("status", "card"):
        lo, hi = layout[name]
        block = seq[:, lo:hi].reshape(len(seq), p, -1)
        moved[:, lo:hi] = block[:, perm].reshape(len(seq), -1)
    starts = np.zeros(len(seq), bool)
    starts[0] = True
    masks = np.ones((len(seq), p), bool)
    h0 = policy.initial_state()
    _, logits, values = policy(h0, jnp.asarray(seq), jnp.asarray(starts), jnp.asarray(masks))
    _, logits2, values2 = policy(h0, jnp.asarray(moved), jnp.asarray(starts), jnp.asarray(masks))
    np.testing.assert_allclose(np.asarray(logits2), np.asarray(logits)[:, perm], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(values2), np.asarray(values), rtol=1e-4, atol=1e-5)
    # and the logits do depend on the positions' cards (not a constant network)
    assert float(np.ptp(np.asarray(logits)[-1])) > 1e-4



@pytest.mark.slow
def test_a_latch_memory_keeps_the_card_its_position_showed() -> None:
    """``latch_init``: a fresh policy's memory at a position writes when the position
    shows a card, a pattern of its own for each kind, and keeps it while the card is face
    down and no longer shown; positions that never showed a card stay empty."""
    from memtab_env.registry import make_encoder

    layout = make_encoder("memtab", num_players=2).token_layout()
    p, k, steps = layout["positions"], layout["kinds"], 12
    policy = ppo.make_policy(_config(encoder="kinds", latch_init=True, recurrent_size=32))

    def states(kind: int) -> np.ndarray:
        obs = np.zeros((steps, layout["size"]), np.float32)
        lo, hi = layout["status"]
        status = np.zeros((steps, p, (hi - lo) // p), np.float32)
        status[:, :, 0] = 1.0  # face down ...
        status[0, 0] = [0.0, 1.0, 0.0, 0.0]  # ... but position 0 face up at the first step
        card = np.zeros((steps, p, k), np.float32)
        card[0, 0, kind] = 1.0
        obs[:, slice(*layout["status"])] = status.reshape(steps, -1)
        obs[:, slice(*layout["card"])] = card.reshape(steps, -1)
        starts = np.arange(steps) == 0
        hs, _, _ = policy(policy.initial_state(), jnp.asarray(obs), jnp.asarray(starts),
                          jnp.ones((steps, p), bool))
        return np.asarray(hs[0][0])  # [positions, steps, units]

    h3, h5 = states(3), states(5)
    written, kept = h3[0, 0], h3[0, -1]
    assert np.linalg.norm(written) > 1.0
    assert np.linalg.norm(kept - written) < 0.1 * np.linalg.norm(written)  # kept 11 steps
    assert np.linalg.norm(h5[0, 0] - written) > 0.5 * np.linalg.norm(written)  # kinds differ
    assert np.abs(h3[1:]).max() == 0.0  # never shown: nothing written
    # without the latch the same network has no such memory
    plain = ppo.make_policy(_config(encoder="kinds", recurrent_size=32))
    hs, _, _ = plain(plain.initial_state(), jnp.zeros((2, layout["size"])), jnp.asarray([True, False]),
                     jnp.ones((2, p), bool))
    assert np.abs(np.asarray(hs[0][0])[1:]).max() > 0.0
    for bad in (dict(encoder="set", latch_init=True), dict(encoder="kinds", memory_model="LSTM",
                                                           latch_init=True)):
        with pytest.raises(InvalidOptionError, match="latch_init needs encoder 'kinds' and memory_mod"):
            _config(**bad).check()


def test_train_py_policies_name_the_jax_encoders() -> None:
    from memtab_env.train.config import config_from_dict, ppo_config

    for policy, encoder in (("mlp", "flat"), ("set", "set"), ("kinds", "kinds")):
        cfg = config_from_dict({"env_id": "MemTab-v0", "algo": "jax_ppo", "policy": policy,
                                "opponents": {"random": 1.0}, "latch_init": policy == "kinds"})
        cfg.validate()
        config = ppo_config(cfg)
        assert (config.encoder, config.latch_init) == (encoder, policy == "kinds")


@pytest.mark.slow
def test_training_keeps_the_set_networks_constants_constant() -> None:
    """Training moves weights only: the observation scale and the kinds network's
    off-diagonal mask (which keeps it equivariant over positions) stay as built."""
    for encoder in ("set", "kinds"):
        trainer = ppo.Trainer(_config(encoder=encoder))
        before = trainer.policies()[0]
        trainer.update()
        after = trainer.policies()[0]
        np.testing.assert_array_equal(np.asarray(after.scale), np.asarray(before.scale))
        if encoder == "kinds":
            p = after.off_diagonal.shape[0]
            np.testing.assert_array_equal(np.asarray(after.off_diagonal), 1.0 - np.eye(p))
        moved = [float(jnp.abs(x - y).max()) for x, y in
                 zip(_arrays(after), _arrays(before), strict=True)]
        assert max(moved) > 0.0  # the update did move the weights


def _bench_module() -> ModuleType:
    """``benchmarks/bench_jax_ppo.py`` as a module (it is a script, not in the package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_jax_ppo.py"
    spec = importlib.util.spec_from_file_location("bench_jax_ppo", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.mark.slow
def test_the_throughput_benchmark_measures_collection_alone() -> None:
    """``benchmarks/bench_jax_ppo.py --env-only``: both sides' random legal play runs
    and gives a rate (the figures themselves are printed, never asserted)."""
    pytest.importorskip("sb3_contrib")
    bench = _bench_module()
    rates = bench.env_rates(num_envs=4, rollouts=1)
    assert len(rates) == 2 and all(np.isfinite(r) and r > 0 for r in rates)


def test_the_throughput_breakdown_splits_collection_from_epochs() -> None:
    """``--breakdown`` fits seconds per step = collection + epochs x epoch: rates made from
    a known split give it back, and noisy ones the least-squares line."""
    bench = _bench_module()
    collection, epoch = 25e-6, 20e-6
    rates = [1 / (collection + e * epoch) for e in (1, 2, 4)]
    assert bench.fit_breakdown([1, 2, 4], rates) == pytest.approx((collection, epoch))
    # seconds per step 3, 5, 10 at 1, 2, 4 epochs: the line 0.5 + 2.357 x epochs
    fitted = bench.fit_breakdown([1, 2, 4], [1 / 3, 1 / 5, 1 / 10])
    assert fitted == pytest.approx((0.5, 33 / 14))
