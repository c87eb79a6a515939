"""The training run: config, seeding, envs, model, learning, saving and the final
evaluation, top to bottom (cleanrl style). ``memtab train`` and the repository's
``train.py`` both call :func:`main`.

Outputs go to ``runs/<run_name>/`` where the run name carries env id, experiment name,
algorithm, seed and start time: ``model.zip``, ``config.yaml`` (the exact config, with the
command line), ``eval.json``, ``tensorboard/``, ``checkpoints/`` and, for self-play,
``pool/`` (the frozen snapshots).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memtab_env.agents.model_data import is_jax_checkpoint
from memtab_env.platform_info import platform_info
from memtab_env.train.command_line import build_parser, cli_overrides
from memtab_env.train.config import (
    Config,
    ConfigError,
    config_from_dict,
    dump_yaml,
    load_yaml,
    validate_config,
)


def seed_everything(seed: int, torch_threads: int) -> None:
    """Seed Python's, NumPy's and PyTorch's global generators as Stable-Baselines3's
    ``set_random_seed`` does (the envs and the model get their own seeds from the config).
    PyTorch is left out where it is not installed: ``jax_ppo`` needs only the jax extra."""
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the legacy global generator, as SB3 seeds it
    try:
        import torch
    except ModuleNotFoundError:
        return
    torch.manual_seed(seed)
    torch.set_num_threads(torch_threads)


def run_name(cfg: Config) -> str:
    """``<env id>__<exp name>__<algo>__s<seed>__<YYYYmmdd-HHMMSS>``."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{cfg.env_id}__{cfg.exp_name or 'run'}__{cfg.algo}__s{cfg.seed}__{stamp}"


def find_resume_dir(arg: str, runs_dir: str) -> Path:
    """The run folder named by ``--resume`` (``latest``: the newest folder of ``runs_dir``
    that has a checkpoint)."""
    if arg != "latest":
        path = Path(arg)
        if not (path / "config.yaml").exists():
            raise ConfigError(f"--resume {arg}: no config.yaml there (not a run folder)")
        return path
    runs = [p for p in Path(runs_dir).glob("*") if (p / "checkpoints" / "latest.json").exists()]
    if not runs:
        raise ConfigError(f"--resume: no run with a checkpoint under {runs_dir}/")
    return max(runs, key=lambda p: (p / "checkpoints" / "latest.json").stat().st_mtime)


def eval_out(model_path: Path, runs_dir: str) -> Path:
    """Where ``--evaluate MODEL`` writes without ``--out``: ``eval.json`` next to a run's
    ``model.zip`` (a folder under ``runs_dir``), ``<runs_dir>/evaluations/<stem>_eval.json``
    for any other model, so the files shipped beside a policy are never overwritten."""
    model_path = model_path.resolve()
    runs = Path(runs_dir).resolve()
    if model_path.is_relative_to(runs):
        name = "eval.json" if model_path.name == "model.zip" else f"{model_path.stem}_eval.json"
        return model_path.with_name(name)
    return runs / "evaluations" / f"{model_path.stem}_eval.json"


def read_latest(ckpt_dir: Path) -> dict[str, Any] | None:
    """``checkpoints/latest.json`` checked field by field (None when there is none yet):
    ``step`` (an integer >= 0), ``model`` (``step_<12 digits>.zip`` of that step),
    ``replay_buffer`` (null or ``replay_buffer_<12 digits>.pkl``), ``pool`` (snapshot
    names), and for ``jax_ppo`` runs ``state`` (``state_<12 digits>.eqx``, the training
    state); :class:`ConfigError` naming the file and the field otherwise."""
    from memtab_env import untrusted

    path = ckpt_dir / "latest.json"
    if not path.exists():
        return None
    obj = untrusted.load_json(path, ConfigError)
    fields = {"step", "model", "replay_buffer", "pool"}
    if not isinstance(obj, dict) or set(obj) - {"state"} != fields:
        got = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ConfigError(f"{path}: expected an object with the fields {sorted(fields)}, got {got!r:.120}")
    step = obj["step"]
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < 10**12:
        raise ConfigError(f"{path}: field step: expected an integer in [0, 10**12), got {step!r:.40}")
    if obj["model"] != f"step_{step:012d}.zip":
        raise ConfigError(f"{path}: field model: expected 'step_{step:012d}.zip', got {obj['model']!r:.60}")
    if obj["replay_buffer"] not in (None, f"replay_buffer_{step:012d}.pkl"):
        raise ConfigError(f"{path}: field replay_buffer: expected null or 'replay_buffer_{step:012d}.pkl', "
                          f"got {obj['replay_buffer']!r:.60}")
    if "state" in obj and obj["state"] != f"state_{step:012d}.eqx":
        raise ConfigError(f"{path}: field state: expected 'state_{step:012d}.eqx', got {obj['state']!r:.60}")
    pool = obj["pool"]
    if not isinstance(pool, list) or not all(isinstance(p, str) and re.fullmatch(r"snapshot_\d{12}\.zip", p)
                                             for p in pool):
        raise ConfigError(f"{path}: field pool: expected a list of snapshot_<12 digits>.zip names")
    return obj


def finished(run_dir: Path, cfg: Config) -> int | None:
    """The step count of ``run_dir``'s final model when it already reached
    ``cfg.total_timesteps`` (nothing left to resume), else None."""
    latest = read_latest(run_dir / "checkpoints")
    if not (run_dir / "model.zip").exists() or latest is None:
        return None
    step = int(latest["step"])
    return step if step >= cfg.total_timesteps else None


def check_runs_dir(runs_dir: Path) -> None:
    """Fail now if runs can not be written under ``runs_dir`` (before any work)."""
    probe = runs_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"runs_dir {runs_dir}: cannot be written (no write permission in {probe})")


def _config_text(run_dir: Path, cfg: Config, command: str, resuming: bool) -> str:
    """``config.yaml``'s text: the config with its command; on a resume the original
    command lines are kept and the resume's command added."""
    text = dump_yaml(cfg, command)
    old = run_dir / "config.yaml"
    if resuming and old.exists():
        first = [line for line in old.read_text(errors="replace").splitlines() if line.startswith("#")]
        if first and first[0] != f"# {command}":
            body = text.split("\n", 1)[1]
            text = "\n".join([*first, f"# resumed: {command}"]) + "\n" + body
    return text


def _learn_sb3(cfg: Config, run_dir: Path, manifest: Any, resume_dir: Path | None,
               tb_dir: str | None, launcher: str) -> tuple[Path, int, float, int]:
    """Stable-Baselines3 training in ``run_dir`` (new or resumed); returns ``(model path,
    steps trained now, seconds, steps in total)``."""
    from memtab_env.train.callbacks import Checkpoints, GameStats, SelfPlay, atomic_save, pool_paths
    from memtab_env.train.model import algo_class, make_model
    from memtab_env.train.vec import make_vec_env

    ckpt_dir, pool_dir = run_dir / "checkpoints", run_dir / "pool"
    cls = algo_class(cfg.algo)
    latest = read_latest(ckpt_dir) if resume_dir is not None else None
    if resume_dir is not None and latest is None:
        # killed before its first checkpoint: the run starts again in its own folder
        stale = [p for p in pool_dir.glob("snapshot_*.zip")] if pool_dir.exists() else []
        manifest.remove(stale)
        for p in stale:
            p.unlink()
        print(f"{run_dir} has no checkpoint yet: starting it again from step 0")
    if latest is not None:
        from memtab_env.agents.sb3_policy import moved_objects

        step = int(latest["step"])
        # only files this run wrote are loaded (the checkpoint is unpickled to resume it)
        checkpoint = manifest.check(ckpt_dir / latest["model"], "checkpoint")
        replay_buffer = (manifest.check(ckpt_dir / latest["replay_buffer"], "replay buffer")
                         if latest["replay_buffer"] else None)
        later = [s for s in pool_paths(pool_dir, manifest) if int(s.stem.split("_")[1]) > step]
        manifest.remove(later)  # snapshots taken after the checkpoint are redone
        for snap in later:
            snap.unlink()
        env = make_vec_env(cfg, seed=cfg.seed + step)  # fresh games, not a replay of the start
        model = cls.load(checkpoint, env=env, device=cfg.device, tensorboard_log=tb_dir,
                         custom_objects=moved_objects(checkpoint))
        if replay_buffer is not None:
            model.load_replay_buffer(replay_buffer)
        print(f"resuming {run_dir} from step {model.num_timesteps:_}")
    else:
        env = make_vec_env(cfg, seed=cfg.seed)
        model = make_model(cfg, env, tb_dir)
        print(f"run {run_dir}")

    # -- learn -------------------------------------------------------------------------
    checkpoints = Checkpoints(ckpt_dir, cfg.checkpoint_every, cfg.keep_checkpoints,
                              pool_dir if cfg.selfplay else None, manifest)
    callbacks = [GameStats(cfg.num_players, cfg.reward), checkpoints]
    if cfg.selfplay:
        selfplay = SelfPlay(pool_dir, cfg.snapshot_every, manifest)
        selfplay.prepare(model, env)
        callbacks.append(selfplay)
    remaining = cfg.total_timesteps - model.num_timesteps
    t0 = time.perf_counter()
    start_steps = model.num_timesteps
    if remaining > 0:
        try:
            model.learn(remaining, callback=callbacks, progress_bar=cfg.progress_bar,
                        tb_log_name=cfg.algo, reset_num_timesteps=resume_dir is None)
        except KeyboardInterrupt:
            path = checkpoints.save()
            print(f"\ninterrupted: checkpoint {path} written; continue with "
                  f"{launcher} --resume {run_dir}")
            env.close()
            raise
    seconds = time.perf_counter() - t0
    steps = model.num_timesteps - start_steps
    env.close()
    # the final checkpoint before the final model: a run with model.zip is finished
    # (:func:`finished`), so its last checkpoint must already hold the final pool
    checkpoints.save(model)
    model_path = run_dir / "model.zip"
    atomic_save(model, model_path, manifest)
    return model_path, steps, seconds, int(model.num_timesteps)


def main(argv: Sequence[str] | None = None, prog: str = "train.py") -> Path:
    """Train (or resume, or only evaluate) as the command line says; returns the run
    folder (the evaluation JSON's path with ``--evaluate``). ``prog`` is the command's
    name in messages and in the saved config (``train.py`` or ``memtab train``)."""
    parser = build_parser(prog=prog, description=(
        "Train a policy for a memtab-env game with Stable-Baselines3 or the JAX PPO "
        "(algo jax_ppo), then evaluate it (docs/training.md)."))
    args = parser.parse_args(argv)
    words = list(argv) if argv is not None else sys.argv[1:]
    launcher = "python train.py" if prog == "train.py" else prog
    command = f"{launcher} " + " ".join(shlex.quote(a) for a in words)
    overrides = cli_overrides(args)

    # -- config ------------------------------------------------------------------------
    resume_dir: Path | None = None
    if args.evaluate and not Path(args.evaluate).is_file():
        raise ConfigError(f"--evaluate {args.evaluate}: no such model file")
    if args.resume:
        if args.config:
            raise ConfigError("--resume reads the run's own config.yaml; do not pass --config")
        runs_dir = overrides.get("runs_dir", Config.runs_dir)
        resume_dir = find_resume_dir(args.resume, runs_dir)
        cfg = load_yaml(resume_dir / "config.yaml")
    elif args.config:
        cfg = load_yaml(args.config, args.env)
    elif args.evaluate and (Path(args.evaluate).parent / "config.yaml").exists():
        cfg = load_yaml(Path(args.evaluate).parent / "config.yaml")
    elif args.evaluate and is_jax_checkpoint(args.evaluate):  # it carries its config
        from memtab_env.train.jax_run import checkpoint_config

        cfg = checkpoint_config(args.evaluate)
    elif args.evaluate and Path(args.evaluate).with_suffix(".yaml").exists():
        cfg = load_yaml(Path(args.evaluate).with_suffix(".yaml"))
    elif args.evaluate:
        raise ConfigError(f"--evaluate {args.evaluate}: no config.yaml in its folder and no "
                          f"{Path(args.evaluate).with_suffix('.yaml').name} beside it: give --config FILE")
    else:
        raise ConfigError("give --config FILE (or --resume RUN_DIR, or --evaluate MODEL_ZIP)")
    source = getattr(cfg, "source", None)
    cfg = config_from_dict(overrides, base=cfg, where="the command line", from_cli=True)
    cfg.source = source  # type: ignore[attr-defined]
    validate_config(cfg, overrides)
    try:  # the training stack is an extra
        import scipy  # noqa: F401 - the final evaluation's statistics
        if cfg.algo == "jax_ppo":
            import jax  # noqa: F401
            import memax  # noqa: F401
        else:
            import stable_baselines3  # noqa: F401
            import torch  # noqa: F401
    except ModuleNotFoundError as exc:
        from memtab_env.extras import missing_message

        extra = "jax" if cfg.algo == "jax_ppo" and exc.name in ("jax", "memax") else "train"
        raise ConfigError(missing_message(exc, "training", extra=extra)) from None

    from memtab_env.train.evaluation import evaluate, print_table, write_eval

    if args.evaluate:
        seed_everything(cfg.seed, cfg.torch_threads)
        model_path = Path(args.evaluate)
        report = evaluate(model_path, cfg)
        from memtab_env.agents.shipped import study_seed_config

        report["config"] = study_seed_config(model_path) or report["config"]  # a study seed's stages
        out = Path(args.out) if args.out else eval_out(model_path, cfg.runs_dir)
        write_eval(report, out)
        print_table(report, f"{model_path} ({cfg.env_id}, {cfg.memory} memory)")
        print(f"evaluation written to {out}")
        return out

    if resume_dir is not None and (done := finished(resume_dir, cfg)) is not None:
        if not (resume_dir / "eval.json").exists():  # killed during its final evaluation
            from memtab_env.train.manifest import Manifest

            model_path = Manifest.load(resume_dir).check(resume_dir / "model.zip", "final model")
            seed_everything(cfg.seed, cfg.torch_threads)
            report = evaluate(model_path, cfg)
            report["training"] = {"timesteps": done, "command": command}
            write_eval(report, resume_dir / "eval.json")
            print_table(report, f"{resume_dir.name}: evaluation")
            print(f"{resume_dir} had finished training; evaluation written to {resume_dir / 'eval.json'}")
        print(f"{resume_dir} already finished: {done:_} steps of total_timesteps {cfg.total_timesteps:_}; "
              f"nothing to resume (to train further: {launcher} --resume {resume_dir} "
              f"--total-timesteps N with N > {done:_})")
        return resume_dir

    # -- seed everything ---------------------------------------------------------------
    check_runs_dir(Path(cfg.runs_dir))
    seed_everything(cfg.seed, cfg.torch_threads)

    # -- run folder --------------------------------------------------------------------
    from memtab_env.atomic import write_text
    from memtab_env.train.manifest import Manifest, clean_leftovers

    run_dir = resume_dir or Path(cfg.runs_dir) / run_name(cfg)
    ckpt_dir = run_dir / "checkpoints"
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest.load(run_dir)
    if resume_dir is not None and not manifest.path.exists() and (ckpt_dir / "latest.json").exists():
        raise ConfigError(f"--resume {run_dir}: the run has no manifest.json (it was written by an older "
                          "version), so nothing says which of its files it wrote; start a new run")
    for p in clean_leftovers(run_dir, manifest):
        print(f"removed {p} (left by an interrupted write, or not written by this run)")
    config_text = _config_text(run_dir, cfg, command, resume_dir is not None)
    write_text(run_dir / "config.yaml", config_text)
    tb_dir = str(run_dir / "tensorboard") if cfg.tensorboard else None

    # -- learn -------------------------------------------------------------------------
    latest = read_latest(ckpt_dir) if resume_dir is not None else None
    if cfg.algo == "jax_ppo":
        from memtab_env.train.jax_run import learn

        if resume_dir is not None and latest is None:
            print(f"{run_dir} has no checkpoint yet: starting it again from step 0")
        model_path, steps, seconds, total = learn(cfg, run_dir, manifest, latest, tb_dir, launcher)
    else:
        model_path, steps, seconds, total = _learn_sb3(cfg, run_dir, manifest, resume_dir, tb_dir,
                                                       launcher)
    print(f"trained {steps:_} steps in {seconds:.0f} s ({steps / max(seconds, 1e-9):.0f} steps/s); "
          f"{total:_} in total")

    # -- evaluate ----------------------------------------------------------------------
    t0 = time.perf_counter()
    report = evaluate(model_path, cfg)
    report["training"] = {"timesteps": total, "seconds_this_session": round(seconds, 1),
                          "steps_per_second": round(steps / max(seconds, 1e-9), 1),
                          "command": command, "platform": platform_info()}
    out = run_dir / "eval.json"
    write_eval(report, out)
    print_table(report, f"{run_dir.name}: evaluation ({time.perf_counter() - t0:.0f} s)")
    print(f"model: {model_path}\nevaluation: {out}")
    return run_dir


def cli(argv: Sequence[str] | None = None, prog: str = "train.py") -> int:
    """:func:`main` as a command: a config error is one line on stderr, exit status 2;
    Ctrl-C exits with 130 (a checkpoint is written first)."""
    try:
        main(argv, prog=prog)
    except ConfigError as error:
        print(f"{prog}: config error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def train_main(argv: Sequence[str]) -> int:
    """``memtab train ARGS``."""
    return cli(argv, prog="memtab train")
