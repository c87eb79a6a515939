"""Callbacks of a run: game statistics for TensorBoard, checkpoints for ``--resume`` and
the self-play snapshots."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from memtab_env.atomic import write_json, write_with
from memtab_env.train.manifest import Manifest


class GameStats(BaseCallback):
    """Logs the learner's win rate (shared wins count 1/k) and illegal actions."""

    def __init__(self, num_players: int, reward: str, window: int = 200) -> None:
        super().__init__()
        self.num_players, self.reward = num_players, reward
        self.wins: deque[float] = deque(maxlen=window)
        self.illegal_steps = 0
        self.steps = 0
        self.illegal_total = 0

    def _share(self, info: dict[str, Any], reward: float) -> float | None:
        if info.get("TimeLimit.truncated"):
            return 0.0
        winners = info.get("winners")
        if winners is not None:
            return 1.0 / len(winners) if info["learner_seat"] in winners else 0.0
        if self.reward == "win":  # winners share +1, losers -1: the reward gives the share
            return reward if reward > 0 else (1.0 / self.num_players if reward == 0 else 0.0)
        return None

    def _on_step(self) -> bool:
        infos, dones, rewards = self.locals["infos"], self.locals["dones"], self.locals["rewards"]
        for info, done, reward in zip(infos, dones, rewards, strict=True):
            self.steps += 1
            if info.get("illegal_action"):
                self.illegal_steps += 1
                self.illegal_total += 1
            if done:
                share = self._share(info, float(reward))
                if share is not None:
                    self.wins.append(share)
        return True

    def _on_rollout_end(self) -> None:
        if self.wins:
            self.logger.record("rollout/win_rate", float(np.mean(self.wins)))
        if self.steps:
            self.logger.record("rollout/illegal_rate", self.illegal_steps / self.steps)
        self.logger.record("rollout/illegal_total", self.illegal_total)
        self.steps = self.illegal_steps = 0


class Checkpoints(BaseCallback):
    """Saves ``checkpoints/step_<N>.zip`` every ``every`` steps (plus the replay buffer for
    DQN), records them in the run's manifest, then ``checkpoints/latest.json``; keeps the
    ``keep`` most recent. Every file is written under a temporary name and renamed
    (:mod:`memtab_env.train.manifest`), so a kill at any moment leaves a checkpoint to
    resume from."""

    def __init__(self, directory: Path, every: int, keep: int, pool_dir: Path | None,
                 manifest: Manifest) -> None:
        super().__init__()
        self.directory, self.every, self.keep, self.pool_dir = directory, every, keep, pool_dir
        self.manifest = manifest
        self.next = every

    def _on_training_start(self) -> None:
        self.next = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.save()
            self.next = (self.num_timesteps // self.every + 1) * self.every
        return True

    def save(self, model: Any = None) -> Path:
        """Write a checkpoint of ``model`` (default: the model being trained) at its
        current step count now."""
        model = self.model if model is None else model
        self.directory.mkdir(parents=True, exist_ok=True)
        step = model.num_timesteps
        path = self.directory / f"step_{step:012d}.zip"
        atomic_save(model, path, self.manifest)
        replay = None
        if hasattr(model, "replay_buffer") and model.replay_buffer is not None:
            replay = self.directory / f"replay_buffer_{step:012d}.pkl"
            write_with(replay, model.save_replay_buffer)
            self.manifest.add(replay)
        pool = [p.name for p in pool_paths(self.pool_dir, self.manifest)] if self.pool_dir else []
        latest = {"step": step, "model": path.name, "replay_buffer": replay.name if replay else None,
                  "pool": pool}
        write_json(self.directory / "latest.json", latest, indent=2)
        old = sorted(self.directory.glob("step_*.zip"))[: -self.keep]
        old += sorted(self.directory.glob("replay_buffer_*.pkl"))[: -self.keep]
        self.manifest.remove(old)
        for p in old:
            p.unlink(missing_ok=True)
        return path


class SelfPlay(BaseCallback):
    """Adds a frozen snapshot of the learner to ``pool/`` every ``every`` steps and hands
    the pool to every env's opponents (call :meth:`prepare` before learning: the envs
    are reset before callbacks start, and their opponents need a pool by then). The pool
    is the snapshots the run's manifest lists, unchanged; they are loaded as data."""

    def __init__(self, pool_dir: Path, every: int, manifest: Manifest) -> None:
        super().__init__()
        self.pool_dir, self.every, self.manifest = pool_dir, every, manifest
        self.next = every

    def prepare(self, model: Any, env: VecEnv) -> None:
        """Snapshot ``model`` if the pool is empty, or if the schedule took a snapshot at the
        model's step that is missing (a run killed while writing it resumes from the
        checkpoint of that very step), and give the pool to ``env``."""
        self.pool_dir.mkdir(parents=True, exist_ok=True)
        step = model.num_timesteps
        here = self.pool_dir / f"snapshot_{step:012d}.zip"
        due = step > 0 and step // self.every > (step - env.num_envs) // self.every
        if not pool_paths(self.pool_dir, self.manifest) or (due and not self.manifest.verified(here)):
            atomic_save(model, here, self.manifest)
        env.env_method("set_pool", [str(p) for p in pool_paths(self.pool_dir, self.manifest)])

    def _on_training_start(self) -> None:
        self.next = (self.num_timesteps // self.every + 1) * self.every
        self.logger.record("selfplay/pool_size", len(pool_paths(self.pool_dir, self.manifest)))

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            atomic_save(self.model, self.pool_dir / f"snapshot_{self.num_timesteps:012d}.zip", self.manifest)
            paths = [str(p) for p in pool_paths(self.pool_dir, self.manifest)]
            self.training_env.env_method("set_pool", paths)
            self.logger.record("selfplay/pool_size", len(paths))
            self.next = (self.num_timesteps // self.every + 1) * self.every
        return True


def pool_paths(pool_dir: Path | None, manifest: Manifest) -> list[Path]:
    """The snapshots of ``pool_dir`` that ``manifest`` lists with their hash (a file that
    the run did not write is never part of the pool)."""
    if not pool_dir or not pool_dir.exists():
        return []
    return [p for p in sorted(pool_dir.glob("snapshot_*.zip")) if manifest.verified(p)]


def atomic_save(model: Any, path: Path, manifest: Manifest | None = None) -> None:
    """``model.save`` under a temporary name (one no glob of the run matches), renamed onto
    ``path``, then recorded in ``manifest``."""
    write_with(path, model.save)
    if manifest is not None:
        manifest.add(path)
