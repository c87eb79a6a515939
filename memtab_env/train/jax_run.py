"""``algo: jax_ppo``: the JAX PPO of :mod:`memtab_env.jax.ppo` behind the training
command's config checks, run folder, progress bar, TensorBoard logs, checkpoints,
``--resume`` and final evaluation (:mod:`memtab_env.train.run` calls :func:`learn`).

Files of a run: ``model.zip`` (the final policy, a JAX PPO checkpoint that
``memtab_env.agents.make`` plays), ``checkpoints/step_<N>.zip`` (the policy at step
``N``) and ``checkpoints/state_<N>.eqx`` (the whole training state at step ``N``: weights,
optimiser, games, keys; numbers only), both listed with their hashes in the run's
manifest before ``checkpoints/latest.json`` names them. With ``tensorboard: true`` the
curves go to ``tensorboard/jax_ppo_<k>/``: ``metrics.jsonl`` always, event files when
tensorboardX or PyTorch is installed (:class:`ScalarLog`; neither is needed).
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import Any

from memtab_env.atomic import write_json
from memtab_env.train.config import Config, ConfigError, ppo_config
from memtab_env.train.manifest import Manifest


def checkpoint_config(path: str | Path) -> Config:
    """The training config that a JAX PPO checkpoint (a :func:`memtab_env.jax.ppo.save`
    zip, which carries its own config) is evaluated under with ``--evaluate`` and no
    config file: its game, its env options and its network (``exp_name`` ``study`` for a
    policy of ``memtab study``); everything else is the default. :class:`ConfigError`
    when the file is not such a checkpoint."""
    from memtab_env.errors import InvalidOptionError
    from memtab_env.jax.ppo import PPOConfig, read_meta
    from memtab_env.train.config import config_from_dict

    try:
        meta = read_meta(path)
        ppo = PPOConfig.from_json(meta.get("config"))
    except InvalidOptionError as exc:
        raise ConfigError(f"--evaluate {path}: {exc}") from None
    options = dict(ppo.env_options)
    values = {key: options.pop(key) for key in ("num_players", "memory", "reward") if key in options}
    values.update(
        env_id=ppo.env_id, algo="jax_ppo", env_options=options, seed=ppo.seed,
        exp_name="study" if "study" in meta else "",  # a policy of memtab study
        policy={"flat": "mlp"}.get(ppo.encoder, ppo.encoder), set_layers=ppo.set_layers,
        latch_init=ppo.latch_init, memory_model=ppo.memory_model,
        memory_kwargs=dict(ppo.memory_kwargs), recurrent_size=ppo.recurrent_size)
    return config_from_dict(values, where=f"the config in {path}")



class ScalarLog:
    """The JAX PPO's training curves in ``folder``: ``metrics.jsonl`` (one JSON row per
    update, always) and TensorBoard events through ``tensorboardX`` or PyTorch's
    ``SummaryWriter``, whichever is installed (neither is needed: the ``jax`` extra
    alone trains)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._rows = (folder / "metrics.jsonl").open("a", encoding="utf-8")
        self._row: dict[str, float] = {}
        self.events: Any = None
        for module in ("tensorboardX", "torch.utils.tensorboard"):
            try:
                self.events = importlib.import_module(module).SummaryWriter(str(folder))
                break
            except ImportError:  # also torch's writer without the tensorboard package
                continue

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self._row[tag] = float(value)
        if self.events is not None:
            self.events.add_scalar(tag, value, step)

    def flush_row(self, step: int) -> None:
        self._rows.write(json.dumps({"timesteps": int(step), **self._row}) + "\n")
        self._rows.flush()
        self._row = {}

    def close(self) -> None:
        self._rows.close()
        if self.events is not None:
            self.events.close()

def learn(cfg: Config, run_dir: Path, manifest: Manifest, latest: dict[str, Any] | None,
          tb_dir: str | None, launcher: str) -> tuple[Path, int, float, int]:
    """Train (or resume from ``latest``) in ``run_dir``; returns ``(model path, steps
    trained now, seconds, steps in total)``."""
    import numpy as np

    from memtab_env.jax.ppo import Trainer, save, save_runner

    config = ppo_config(cfg)
    ckpt_dir = run_dir / "checkpoints"
    trainer = Trainer(config)
    if latest is not None:
        state = manifest.check(ckpt_dir / latest["state"], "training state")
        trainer.load_state(state)
        print(f"resuming {run_dir} from step {trainer.timesteps:_}")
    else:
        print(f"run {run_dir}")
    per_update = config.num_envs * config.num_steps

    def checkpoint() -> None:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        step = trainer.timesteps
        policy_path = ckpt_dir / f"step_{step:012d}.zip"
        state_path = ckpt_dir / f"state_{step:012d}.eqx"
        save(policy_path, trainer.policies()[0], config)
        save_runner(state_path, trainer.runner)
        manifest.add(policy_path)
        manifest.add(state_path)
        write_json(ckpt_dir / "latest.json", {"step": step, "model": policy_path.name,
                                              "replay_buffer": None, "pool": [],
                                              "state": state_path.name}, indent=2)
        old = sorted(ckpt_dir.glob("step_*.zip"))[: -cfg.keep_checkpoints]
        old += sorted(ckpt_dir.glob("state_*.eqx"))[: -cfg.keep_checkpoints]
        manifest.remove(old)
        for p in old:
            p.unlink(missing_ok=True)

    writer = None
    if tb_dir is not None:
        writer = ScalarLog(Path(tb_dir) / f"jax_ppo_{len(list(Path(tb_dir).glob('jax_ppo_*'))) + 1}")
    bar = None
    if cfg.progress_bar:
        from tqdm.rich import tqdm

        bar = tqdm(total=cfg.total_timesteps, initial=trainer.timesteps, unit="steps")
    start_steps, t0 = trainer.timesteps, time.perf_counter()
    next_checkpoint = (trainer.timesteps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    recent: list[dict] = []
    try:
        while not trainer.done:
            (row,) = trainer.update()
            recent.append(row)
            if bar is not None:
                bar.update(per_update)
            if writer is not None:
                for key, value in row.items():
                    if key not in ("timesteps", "seconds"):
                        writer.add_scalar(f"jax_ppo/{key}", value, trainer.timesteps)
                writer.flush_row(trainer.timesteps)
            if trainer.timesteps >= next_checkpoint:
                checkpoint()
                next_checkpoint = (trainer.timesteps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
            if cfg.verbose and len(recent) >= 10:
                mean = {k: float(np.mean([r[k] for r in recent])) for k in ("episode_return", "win_rate")}
                print(f"{trainer.timesteps:>10_} steps: return {mean['episode_return']:+.3f}, "
                      f"win rate {mean['win_rate']:.3f}")
                recent = []
    except KeyboardInterrupt:
        checkpoint()
        print(f"\ninterrupted: checkpoint written; continue with {launcher} --resume {run_dir}")
        raise
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    seconds = time.perf_counter() - t0
    checkpoint()  # before the final model, whose presence marks the run finished
    model_path = run_dir / "model.zip"
    save(model_path, trainer.policies()[0], config)
    manifest.add(model_path)
    return model_path, trainer.timesteps - start_steps, seconds, trainer.timesteps
