"""The training vector env: scalar Gymnasium views in SB3's ``DummyVecEnv`` or
``SubprocVecEnv``, or the game's numba-batched engine (the ``sb3_vec_env`` of its registry
row, a :class:`memtab_env.vector.sb3.BatchedSB3VecEnv`) next to an in-process group of
scalar envs for the opponents the batch cannot play."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from memtab_env.registry import game_spec, load
from memtab_env.train.config import BATCHED_OPPONENTS, Config, ConfigError, batched_games
from memtab_env.train.opponents import OpponentMix, SelfPlayPool


def make_env_fn(cfg: Config, monitor: bool = True) -> Callable[[], Any]:
    """A function that builds one training env (picklable for SubprocVecEnv); with
    ``monitor`` it is wrapped in SB3's ``Monitor`` (episode statistics)."""

    def _init() -> Any:
        from stable_baselines3.common.monitor import Monitor

        opponents = [
            OpponentMix(cfg.opponents, cfg.game, cfg.algo, cfg.pool_size, cfg.pool_deterministic)
            for _ in range(cfg.num_players - 1)
        ]
        env = gymnasium.make(
            cfg.env_id, opponents=opponents, learner_seat=cfg.learner_seat, memory=cfg.memory,
            reward=cfg.reward, num_players=cfg.num_players, illegal_penalty=cfg.illegal_penalty,
            obs_mode="flat", illegal_action="penalty", **cfg.env_options,
        )
        env = SelfPlayPool(env)
        return Monitor(env) if monitor else env

    return _init


def make_vec_env(cfg: Config, seed: int) -> VecEnv:
    """The training vector env (``n_envs`` games; game i is seeded with ``seed + i``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if cfg.vec_env == "batched":
        return batched_vec_env(cfg, seed)
    fns = [make_env_fn(cfg) for _ in range(cfg.n_envs)]
    venv = SubprocVecEnv(fns) if cfg.vec_env == "subproc" else DummyVecEnv(fns)
    venv.seed(seed)
    return venv


def split_counts(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders get the rest)."""
    w = np.asarray(weights, dtype=float) / float(np.sum(weights))
    exact = w * total
    counts = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - counts), kind="stable")[: total - int(counts.sum())]:
        counts[i] += 1
    return counts.tolist()


def batched_vec_env(cfg: Config, seed: int) -> VecEnv:
    """The game's numba-batched engine (its registry row's ``sb3_vec_env``) as an SB3 VecEnv.

    Its opponents are compiled into the batch, so it has ``random`` and ``greedy`` only,
    and all games of one batch share their opponents. The ``n_envs`` games are therefore
    split in proportion to the opponent weights: one batch per built-in opponent, and
    one in-process group of scalar envs (as ``dummy``) for the rest of the mix (e.g.
    ``expert`` and ``self``, drawn per game with their relative weights). The scalar
    envs draw the opponent per game instead.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    spec = game_spec(cfg.env_id)
    if spec.sb3_vec_env is None:
        raise ConfigError(f"vec_env 'batched' plays {batched_games()}, not {cfg.env_id}")
    batched_cls = load(spec.sb3_vec_env)
    active = {n: w for n, w in cfg.opponents.items() if w > 0}
    groups: list[tuple[str, float]] = [(n, w) for n, w in active.items() if n in BATCHED_OPPONENTS]
    rest = {n: w for n, w in active.items() if n not in BATCHED_OPPONENTS}
    if rest:
        groups.append(("scalar", sum(rest.values())))
    counts = split_counts(cfg.n_envs, [w for _, w in groups])
    parts: list[VecEnv] = []
    offset = 0
    for (name, _), count in zip(groups, counts, strict=True):
        if count == 0:
            continue
        if name == "scalar":
            scalar_cfg = dataclasses.replace(cfg, opponents=rest)
            part: VecEnv = DummyVecEnv([make_env_fn(scalar_cfg, monitor=False) for _ in range(count)])
            part.seed(seed + offset)
        else:
            part = batched_cls(
                num_envs=count, seed=seed + offset, opponents=name, learner_seat=cfg.learner_seat,
                memory=cfg.memory, reward=cfg.reward, num_players=cfg.num_players,
                illegal_penalty=cfg.illegal_penalty,
                max_episode_steps=spec.max_episode_steps,
                **cfg.env_options,
            )
        parts.append(part)
        offset += count
    return VecMonitor(parts[0] if len(parts) == 1 else ConcatVecEnv(parts))


class ConcatVecEnv(VecEnv):
    """Several VecEnvs with the same spaces side by side as one (games in order). Every
    part resets in the same step, SB3's convention (``metadata["autoreset_mode"]``)."""

    def __init__(self, parts: Sequence[VecEnv]) -> None:
        from gymnasium.vector import AutoresetMode

        self.parts = list(parts)
        self.bounds = np.cumsum([0] + [p.num_envs for p in self.parts])
        first = self.parts[0]
        super().__init__(int(self.bounds[-1]), first.observation_space, first.action_space)
        self.metadata = {**self.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}

    def _split(self, values: np.ndarray) -> list[np.ndarray]:
        return [values[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]

    def reset(self) -> np.ndarray:
        obs = [p.reset() for p in self.parts]
        self.reset_infos = [info for p in self.parts for info in p.reset_infos]
        return np.concatenate(obs)

    def step_async(self, actions: np.ndarray) -> None:
        for part, acts in zip(self.parts, self._split(np.asarray(actions)), strict=True):
            part.step_async(acts)

    def step_wait(self) -> Any:
        results = [p.step_wait() for p in self.parts]
        obs, rewards, dones, infos = zip(*results, strict=True)
        return (np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones),
                [info for part in infos for info in part])

    def close(self) -> None:
        for p in self.parts:
            p.close()

    def seed(self, seed: int | None = None) -> list[int | None]:  # type: ignore[override]
        out: list[int | None] = []
        for part, start in zip(self.parts, self.bounds[:-1], strict=True):
            out.extend(part.seed(None if seed is None else seed + int(start)))
        return out

    def action_masks(self) -> np.ndarray:
        return np.concatenate([np.asarray(p.env_method("action_masks")) for p in self.parts])

    def _locate(self, indices: Any) -> list[tuple[VecEnv, int]]:
        idx = range(self.num_envs) if indices is None else (
            [indices] if isinstance(indices, (int, np.integer)) else indices)
        out = []
        for i in idx:
            k = int(np.searchsorted(self.bounds, i, side="right")) - 1
            out.append((self.parts[k], int(i - self.bounds[k])))
        return out

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return list(masks) if indices is None else [masks[i] for i in np.atleast_1d(indices)]
        if indices is None:  # broadcast to the parts that have the method
            out: list[Any] = []
            for part in self.parts:
                if part.has_attr(method_name):
                    out.extend(part.env_method(method_name, *method_args, **method_kwargs))
            return out
        return [part.env_method(method_name, *method_args, indices=i, **method_kwargs)[0]
                for part, i in self._locate(indices)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [part.get_attr(attr_name, indices=i)[0] for part, i in self._locate(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        for part, i in self._locate(indices):
            part.set_attr(attr_name, value, indices=i)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [part.env_is_wrapped(wrapper_class, indices=i)[0] for part, i in self._locate(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs
