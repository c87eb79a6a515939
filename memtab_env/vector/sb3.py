"""The batched single-agent views as Stable-Baselines3 ``VecEnv`` s.

``MaskablePPO("MlpPolicy", MemTabSB3VecEnv(num_envs=64, opponents="greedy"))`` trains on
it directly: :meth:`BatchedSB3VecEnv.action_masks` returns the (B, A) bool masks that
sb3-contrib asks for (through ``env_method("action_masks")``).

Each game's adapter (the ``sb3_vec_env`` of its registry row, ``sb3_vec_env.py`` in the
game's folder; all of them importable from :mod:`memtab_env.vector`):

- ``MemTabSB3VecEnv`` over ``MemTabVectorEnv`` (A = 28);
- ``PelmanismSB3VecEnv`` over ``PelmanismVectorEnv`` (A = P, the deck's positions);
- ``MemoryBoardSB3VecEnv`` over ``MemoryBoardVectorEnv`` (A = 2 P + 2, the board game's
  actions).

All are :class:`BatchedSB3VecEnv` with its ``vector_env_class`` set: one adapter for any
batched view with the vector envs' API (``reset``/``step``, ``_masks``, ``info`` with
``illegal_action``, ``final_obs`` and ``final_info`` holding ``scores`` and
``learner_seat``).

SB3 conventions: ``reset()`` returns the observations only (seeds from :meth:`seed`, reset
infos in ``reset_infos``); ``step_wait()`` returns ``(obs, rewards, dones, infos)`` with
``dones = terminated | truncated``, one info dict per env, and for a finished episode
``infos[i]["terminal_observation"]`` and ``infos[i]["TimeLimit.truncated"]``; an illegal
action (penalty mode) sets ``infos[i]["illegal_action"] = True``. Rewards are float32.
Wrap it in ``VecMonitor`` for episode statistics. Auto-reset is SB3's: in the same step
(``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``), so the observations and
:meth:`BatchedSB3VecEnv.action_masks` after a step are always those of a game in progress
(never an empty mask); the finished episode's last observation is
``infos[i]["terminal_observation"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)


class BatchedSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over the batched vector env ``vector_env_class``.

    Args:
        num_envs: B.
        seed: seeds of the first ``reset()`` (game ``i`` gets ``seed + i``); ``None`` draws
            fresh entropy. :meth:`seed` sets the seeds of the next reset.
        **kwargs: the options of ``vector_env_class`` (``opponents``, ``learner_seat``,
            ``memory``, ``reward``, ``num_players``, ``max_episode_steps``, ...).
    """

    #: the batched Gymnasium vector env this adapter wraps (set by subclasses)
    vector_env_class: ClassVar[type[Any]]

    def __init__(self, num_envs: int = 1, seed: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("copy", True)
        self.venv = self.vector_env_class(num_envs=num_envs, **kwargs)
        self.render_mode = None
        super().__init__(
            self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space
        )
        self.metadata = {**self.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}
        if seed is not None:
            self.seed(seed)
        self._actions: np.ndarray | None = None

    # -- VecEnv API -------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        if all(s is None for s in self._seeds):
            seed: Any = None
        elif any(s is None for s in self._seeds):
            fresh = np.random.default_rng().integers(2**63, size=self.num_envs)
            seed = [int(f) if s is None else int(s) for s, f in zip(self._seeds, fresh, strict=True)]
        else:
            seed = [int(s) for s in self._seeds]  # type: ignore[arg-type]
        obs, info = self.venv.reset(seed=seed)
        seats = info["learner_seat"].tolist()
        self.reset_infos = [{"learner_seat": s} for s in seats]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(info["illegal_action"]).tolist():
            infos[i]["illegal_action"] = True
        if dones.any():
            final_obs = info["final_obs"]
            final_info = info["final_info"]
            for i in np.flatnonzero(dones).tolist():
                infos[i]["terminal_observation"] = final_obs[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                infos[i]["scores"] = final_info["scores"][i].tolist()
                infos[i]["learner_seat"] = int(final_info["learner_seat"][i])
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def action_masks(self) -> np.ndarray:
        """(B, A) bool: the learner's legal actions in every game (sb3-contrib)."""
        return self.venv._masks.astype(bool)

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of the shared vector env (or of this adapter), once per index."""
        for obj in (self.venv, self):
            if hasattr(obj, attr_name):
                value = getattr(obj, attr_name)
                return [value for _ in self._indices(indices)]
        raise AttributeError(f"{type(self).__name__} has no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Sets the attribute on the shared vector env (all games share it)."""
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks`` gives one (A,) bool row per env (what sb3-contrib stacks);
        other methods are called once on the shared vector env, the result repeated."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return list(masks[idx]) if indices is not None else list(masks)
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:  # type: ignore[override]
        """Seeds of the next ``reset()``: game ``i`` gets ``seed + i``."""
        if seed is None:
            self._seeds = [None] * self.num_envs
        else:
            self._seeds = [int(seed) + i for i in range(self.num_envs)]
        return self._seeds
