"""Training runs of the JAX PPO: seeds side by side (:func:`make_train` vmapped over
seeds, one compiled call per config and process), the games sharded over devices, and
the loop over updates (:class:`Trainer`, :func:`train`)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.jax.cache import enable_compilation_cache
from memtab_env.jax.ppo.algorithm import Runner, make_train
from memtab_env.jax.ppo.config import PPOConfig
from memtab_env.jax.ppo.networks import ActorCritic

#: the fields of a :class:`Runner` that hold one entry per game: dealt afresh at a stage
#: switch, split over the devices
PER_GAME = ("env_state", "h", "starts", "returns", "discounted", "shown")


def _devices(config: PPOConfig) -> list:
    devices = jax.devices()
    wanted = config.num_devices or len(devices)
    if wanted > len(devices):
        raise InvalidOptionError(f"num_devices {wanted}: only {len(devices)} {devices[0].platform} "
                                 "device(s) here")
    if config.num_envs % wanted:
        raise InvalidOptionError(f"num_envs ({config.num_envs}) must be a multiple of the "
                                 f"{wanted} devices the games are split over")
    return devices[:wanted]


_COMPILED: dict[str, tuple] = {}


def _compiled(config: PPOConfig, stage: int = 0) -> tuple:
    """``(policy, jit(vmap(init)), jit(vmap(update)))`` of ``config`` (its curriculum's
    ``stage``), built once per config and stage in a process, so trainers of one config
    share compiled code."""
    key = json.dumps([config.to_json(), stage], sort_keys=True, default=str)
    if key not in _COMPILED:
        if len(_COMPILED) >= 8:
            _COMPILED.pop(next(iter(_COMPILED)))
        init, update, policy = make_train(config, stage)
        _COMPILED[key] = (policy, jax.jit(jax.vmap(init)), jax.jit(jax.vmap(update)))
    return _COMPILED[key]


def _filled_pool(params: Any, pool: Any) -> Any:
    """A self-play pool (seeds x slots x ...) with ``params`` (seeds x ...) in every slot."""
    return jax.tree.map(lambda x, q: jnp.broadcast_to(x[:, None], q.shape), params, pool)


def _seed_keys(seeds: Sequence[int]) -> jax.Array:
    return jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32))


class Trainer:
    """A run of one or several seeds trained side by side (:func:`make_train` vmapped
    over seeds: one jitted call updates them all). :meth:`update` advances every seed by
    one update and returns one row of plain floats per seed; :meth:`policies` gives the
    current networks; ``runner=`` or :meth:`load_state` resumes. The first update
    compiles, unless jax's persistent compilation cache holds the program
    (:mod:`memtab_env.jax.cache`, enabled here).

    A curriculum (``opponent_switches``, ``perfect_memory_steps``) is one run: each
    stage's update is compiled for its opponents and memory model, and the update that
    starts a stage first deals fresh games (and, for ``pool``, fills the pool with the
    current weights) while the weights, the optimiser's state, the reward statistics and
    the update count carry on. Which stage an update trains in follows from the update
    count alone, so a resumed run switches exactly where an uninterrupted one does."""

    def __init__(self, config: PPOConfig, seeds: Sequence[int] | None = None,
                 runner: Runner | None = None) -> None:
        enable_compilation_cache()
        self.config = config
        self.seeds = list(seeds) if seeds is not None else [config.seed]
        self.stages = config.stages()
        self.policy, self._init, self._update = _compiled(config)
        self.devices = _devices(config)
        self.runner = self.place(runner if runner is not None else self.initial_runner())
        self.seconds = 0.0

    def initial_runner(self, stage: int = 0) -> Runner:
        """A fresh runner of ``stage`` of the curriculum (also the structure
        :func:`load_runner` fills in)."""
        init = self._init if stage == 0 else _compiled(self.config, stage)[1]
        keys = _seed_keys(self.seeds)
        if stage:  # a stage's fresh games are not the run's first deals again
            keys = jax.vmap(lambda k: jax.random.fold_in(k, stage))(keys)
        return init(keys)

    def load_state(self, path: str | Path) -> None:
        """Resume from :func:`save_runner`'s file, saved in whichever stage of the
        curriculum (stages with and without ``pool`` opponents differ in structure)."""
        from memtab_env.jax.ppo.checkpoints import load_runner

        first_error = None
        for stage in range(len(self.stages)):
            try:
                self.runner = self.place(load_runner(path, self.initial_runner(stage)))
                return
            except InvalidOptionError as exc:
                first_error = first_error or exc
        raise first_error

    def _switch(self, stage: int) -> None:
        """Start ``stage``: fresh games of its opponents, the pool filled with the current
        weights when it plays ``pool``; everything else carries on."""
        fresh = self.place(self.initial_runner(stage))
        games = {name: getattr(fresh, name)
                 for name in PER_GAME}
        runner = dataclasses.replace(self.runner, **games)
        if self.stages[stage][1] == "pool":
            pool = _filled_pool(runner.params, runner.pool_params)
            runner = dataclasses.replace(runner, pool_params=pool,
                                         pool_count=jnp.ones_like(runner.pool_count))
        self.runner = runner

    def place(self, runner: Runner) -> Runner:
        """``runner`` on the trainer's devices: the games (and their recurrent states)
        split over the devices, everything else replicated. The jitted update then runs
        sharded (XLA's SPMD partitioner inserts the gradient all-reduce)."""
        if len(self.devices) == 1:
            return runner
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        mesh = Mesh(np.asarray(self.devices), ("games",))
        games = NamedSharding(mesh, PartitionSpec(None, "games"))
        replicated = NamedSharding(mesh, PartitionSpec())
        return Runner(**{f.name: jax.device_put(getattr(runner, f.name),
                                                games if f.name in PER_GAME else replicated)
                         for f in dataclasses.fields(Runner)})

    def start_from(self, policies: Sequence[ActorCritic]) -> None:
        """Start every seed from trained weights (one policy per seed, the network of this
        config), before the first update. Everything else is a fresh run's: the optimiser
        (Adam's initial state holds no weights, only zero moments and a zero count), the
        games and the keys; the learning-rate schedule starts where the config's
        ``lr_offset`` puts it (0: at full rate; a follow-up that sets the steps its init
        run trained, and the whole schedule's ``lr_horizon``, continues that schedule
        instead of restarting it); a self-play pool starts filled
        with the given weights, as a fresh pool is with the initial network's."""
        if self.updates_done:
            raise InvalidOptionError("start_from: this run has already been updated")
        if len(policies) != len(self.seeds):
            raise InvalidOptionError(f"start_from: {len(self.seeds)} seed(s) need "
                                     f"{len(self.seeds)} policies, got {len(policies)}")
        like = jax.tree.map(lambda x: x[0], self.runner.params)
        spec = [(x.shape, x.dtype) for x in jax.tree.leaves(like)]
        params = []
        for i, policy in enumerate(policies):
            p, _ = eqx.partition(policy, eqx.is_inexact_array)
            if jax.tree.structure(p) != jax.tree.structure(like) \
                    or [(x.shape, x.dtype) for x in jax.tree.leaves(p)] != spec:
                raise InvalidOptionError(f"start_from: policy {i} is not the network of this "
                                         "config (other encoder, memory model or sizes)")
            params.append(p)
        stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params)
        pool = self.runner.pool_params
        if pool is not None:
            pool = _filled_pool(stacked, pool)
        self.runner = self.place(dataclasses.replace(self.runner, params=stacked,
                                                     pool_params=pool))

    @property
    def updates_done(self) -> int:
        return int(self.runner.update[0])

    @property
    def timesteps(self) -> int:
        return self.updates_done * self.config.num_envs * self.config.num_steps

    @property
    def done(self) -> bool:
        return self.updates_done >= self.config.num_updates

    def update(self) -> list[dict]:
        start = time.perf_counter()
        done = self.updates_done
        stage = self.config.stage_at(done)
        update = self._update if stage == 0 else _compiled(self.config, stage)[2]
        if done and stage != self.config.stage_at(done - 1):
            self._switch(stage)
        self.runner, metrics = update(self.runner)
        metrics = jax.device_get(metrics)
        self.seconds += time.perf_counter() - start
        extra = {"stage": float(stage)} if len(self.stages) > 1 else {}
        return [{**{k: float(v[i]) for k, v in metrics.items()}, "timesteps": self.timesteps,
                 "seconds": self.seconds, **extra} for i in range(len(self.seeds))]

    def policies(self) -> list[ActorCritic]:
        _, static = eqx.partition(self.policy, eqx.is_inexact_array)
        return [eqx.combine(jax.tree.map(lambda x, i=i: x[i], self.runner.params), static)
                for i in range(len(self.seeds))]


def train(config: PPOConfig, log: Callable[[int, dict], None] | None = None,
          runner: Runner | None = None) -> tuple[ActorCritic, list[dict]]:
    """Run ``config`` (one seed, ``config.seed``); ``log(timesteps, metrics)`` after every
    update. Returns the trained policy and the metrics history (plain floats)."""
    trainer = Trainer(config, runner=runner)
    history = []
    while not trainer.done:
        row = trainer.update()[0]
        history.append(row)
        if log is not None:
            log(row["timesteps"], row)
    return trainer.policies()[0], history
