"""Train and score the cells of the memory study (:mod:`memtab_env.study`), JAX extra.

``memtab study [--preset smoke | --config FILE] [--seeds N] [--timesteps STEPS] [--tracks ...]
[--models ...] [--memories ...] [--out DIR] [--status]`` trains every cell that has no run file yet (a
finished cell is kept: delete its file to redo it; a run file trained otherwise than the
config now trains its cell, other seeds or other PPO fields, is refused by name),
printing a line per cell before it compiles and as it learns, then draws the figures and
the tables from the run files (``--status``: lists which cells are done and which are
to run, and trains nothing). A user's run writes under ``runs/study/<config name>`` (or
``--out``, OUT below): figures in ``figures/``, tables in ``OUT/study.md``. The committed
studies (:data:`~memtab_env.study.COMMITTED_STUDIES`: ``results/study/`` with
``docs/study/`` and ``LEADERBOARD.md``, and the grids ``results/grid/`` and
``results/grid-pelmanism/``, each the folder of its config) are written only with
``--write-committed``, and the other options refuse to point there without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env.atomic import write_json, write_text
from memtab_env.study import (
    COMMITTED_STUDIES,
    RUN_FORMAT,
    Study,
    StudyError,
    StudyTrack,
    benchmark_anchors,
    collect_runs,
    load_run,
    load_study,
    normalised_turns,
    policy_path,
    run_path,
)

#: the per-update training metrics a run file keeps (``recall_accuracy`` only where the
#: recall loss trains: the share of face-down cards seen before that the memories give back)
TRAINING_FIELDS = ("episode_return", "win_rate", "entropy", "recall_accuracy")


def ppo_config(study: Study, track: StudyTrack, memory: str, model: str, seed: int = 0) -> Any:
    """The :class:`memtab_env.jax.ppo.PPOConfig` of one cell."""
    from memtab_env.jax.ppo import PPOConfig

    spec = study.models[model]
    fields = {**study.ppo, **track.ppo, "env_id": track.env_id,
              "env_options": {**track.options, "memory": memory},
              "opponents": track.opponents, "learner_seat": track.learner_seat,
              "memory_model": spec["memory_model"],
              "memory_kwargs": dict(spec.get("memory_kwargs", {})),
              **({"recurrent_size": spec["recurrent_size"]} if "recurrent_size" in spec else {}),
              "total_timesteps": track.timesteps, "seed": seed}
    try:
        return PPOConfig.from_json(fields)
    except (TypeError, ValueError) as exc:
        raise StudyError(f"cell {track.id} / {memory} / {model}: {exc}") from None


class Scorer:
    """Scores of policies on a track's evaluation deals, played in the JAX view with the
    policy's sampled actions (``curve_deals`` for the curves, ``final_deals`` for the
    final score of ``solo-turns`` tracks). ``benchmark`` tracks: the curves only (a
    cheap proxy, run every curve point): every deal once per seat against each of the
    track's reference opponents that the JAX view plays exactly (``random``, ``greedy``),
    normalised with those opponents' anchors (:func:`memtab_env.study.benchmark_anchors`);
    their final scores are the benchmark's own (:func:`memtab_env.study.scores.benchmark_score`)."""

    def __init__(self, study: Study, track: StudyTrack, memory: str, policy: Any,
                 results_dir: Path) -> None:
        import memtab_env.jax as mj
        from memtab_env.jax.evaluate import deal_layouts, make_play
        from memtab_env.protocol.tracks import EVAL_SEED_START

        self.track = track
        options = {**track.options, "memory": memory}
        self.options = options
        self.players = int(options.get("num_players", 2))
        deals = max(study.curve_deals, study.final_deals)
        self.layouts = deal_layouts(track.env_id, options, range(EVAL_SEED_START, EVAL_SEED_START + deals))
        if track.score == "solo-turns":
            self.views = {"solo": mj.make_single_agent(track.env_id, **options)}
        else:
            if self.players != 2 or options.get("reward", "win") != "win":
                raise StudyError(f"track {track.id}: score 'benchmark' needs 2 players and the win reward")
            self.anchors, opponents = benchmark_anchors(track.scored_on, results_dir)
            self.views = {o: mj.make_single_agent(track.env_id, opponents=o, **options)
                          for o in opponents}
        self.plays = {k: make_play(v, policy, deterministic=False) for k, v in self.views.items()}

    def score(self, params: Any, deals: int) -> dict[str, float]:
        import jax
        import jax.numpy as jnp

        layouts = np.repeat(self.layouts[:deals], self.players, axis=0)  # every seat of a deal
        seats = np.tile(np.arange(self.players), deals)
        keys = jax.random.split(jax.random.key(0), len(layouts))
        out = {k: np.asarray(play(params, jnp.asarray(layouts), jnp.asarray(seats, jnp.int32),
                                  keys)["return"]) for k, play in self.plays.items()}
        if self.track.score == "solo-turns":
            turns = float(-out["solo"].mean())
            return {"score": normalised_turns(turns, self.options), "turns": turns}
        # two players, win reward: +1 win, 0 draw (a shared win: half), -1 loss
        rates = {o: float(((r + 1) / 2).mean()) for o, r in out.items()}
        low, high = self.anchors
        mean = float(np.mean(list(rates.values())))
        return {"score": (mean - low) / (high - low), **{f"win_rate_{o}": v for o, v in rates.items()}}


def init_policies(study: Study, track: StudyTrack, memory: str, model: str, out_dir: Path
                  ) -> tuple[list[Any], int]:
    """The trained policies (one per seed) that a track with ``init`` starts the cell
    from, and the learner steps they were trained for: the init track's run of the same
    cell under ``out_dir``, which must exist and hold the study's seeds."""
    from memtab_env.errors import InvalidOptionError
    from memtab_env.jax.ppo import load

    path = run_path(out_dir, track.init, memory, model)
    where = f"cell {track.id} / {memory} / {model}"
    if not path.exists():
        raise StudyError(f"{where} starts from {path}: no such run file (train track "
                         f"{track.init} first)")
    run = load_run(path)
    if list(run["seeds"]) != list(study.seeds):
        raise StudyError(f"{where}: {path} holds seeds {run['seeds']}, the study trains {list(study.seeds)}")
    policies = []
    for seed in study.seeds:
        zip_path = policy_path(path, seed)
        try:
            policy, _ = load(zip_path)
        except (OSError, InvalidOptionError) as exc:
            raise StudyError(f"{where}: the policy of seed {seed}: {exc}") from None
        policies.append(policy)
    return policies, run["timesteps"]


def kept_run_differences(study: Study, track_id: str, memory: str, model: str, path: Path
                         ) -> list[str]:
    """How the run file at ``path`` was trained otherwise than the study trains its cell
    now: its seeds, and every :class:`memtab_env.jax.ppo.PPOConfig` field it records (a
    field it does not record counts as that field's default); empty when it agrees."""
    import json

    from memtab_env.jax.ppo import PPOConfig

    run = load_run(path)
    differences = []
    if list(run["seeds"]) != list(study.seeds):
        differences.append(f"seeds {run['seeds']} (the study: {list(study.seeds)})")
    config = ppo_config(study, study.tracks[track_id], memory, model).to_json()
    defaults = PPOConfig().to_json()
    recorded = run.get("config")
    if not isinstance(recorded, dict):
        return [*differences, "no PPO config recorded"]
    for name in sorted(set(config) - {"seed"}):
        then = recorded.get(name, defaults.get(name))
        now = json.loads(json.dumps(config[name]))
        if then != now:
            differences.append(f"{name} {then!r} (the study: {now!r})")
    return differences


def run_cell(study: Study, track_id: str, memory: str, model: str, out_dir: Path,
             results_dir: Path = Path("results"), log: Any = print) -> dict[str, Any]:
    """Train one cell (every seed side by side), score it, write its run file and its
    policies under ``out_dir``; returns the run. ``results_dir``: the benchmark results
    (anchors of ``benchmark`` tracks)."""
    from memtab_env.jax.ppo import Trainer, count_parameters, save

    track = study.tracks[track_id]
    config = ppo_config(study, track, memory, model)
    trainer = Trainer(config, seeds=study.seeds)
    before = 0  # learner steps of the init track's training, when this cell trains on from it
    if track.init:
        policies, before = init_policies(study, track, memory, model, out_dir)
        try:
            trainer.start_from(policies)
        except ValueError as exc:
            raise StudyError(f"cell {track_id} / {memory} / {model}: {exc}") from None
    scorer = Scorer(study, track, memory, trainer.policy, results_dir)
    points = sorted({max(1, round(config.num_updates * (i + 1) / study.curve_points))
                     for i in range(study.curve_points)})
    curves: list[list[dict]] = [[] for _ in study.seeds]
    training: list[list[dict]] = [[] for _ in study.seeds]
    import jax

    def score_all(at: int) -> None:
        for i, _ in enumerate(study.seeds):
            params = jax.tree.map(lambda x, i=i: x[i], trainer.runner.params)
            curves[i].append({"timesteps": at, **scorer.score(params, study.curve_deals)})

    score_all(before)
    start = time.perf_counter()
    while not trainer.done:
        rows = trainer.update()
        for i, row in enumerate(rows):
            training[i].append({**{k: round(v, 5) for k, v in row.items()
                                   if k in TRAINING_FIELDS},
                                "timesteps": before + trainer.timesteps})
        if trainer.updates_done in points:
            score_all(before + trainer.timesteps)
            log(f"  {track_id} {memory} {model}: {before + trainer.timesteps:>8,} steps, curve score IQM "
                f"{_iqm([c[-1]['score'] for c in curves]):+.3f}")
    seconds = time.perf_counter() - start
    path = run_path(out_dir, track_id, memory, model)
    path.parent.mkdir(parents=True, exist_ok=True)
    policies = []
    for seed, policy in zip(study.seeds, trainer.policies(), strict=True):
        p = policy_path(path, seed)
        save(p, policy, dataclasses.replace(config, seed=seed),
             {"study": {"track": track_id, "memory": memory, "model": model}})
        policies.append(p)
    agent_kwargs: dict[str, Any] = {}
    if track.score == "benchmark":  # the benchmark's own scale, as the leaderboard's
        from memtab_env.study.scores import benchmark_score, final_agent

        agent_kwargs = final_agent(memory, track.scored_on)
        final = [benchmark_score(p, track.scored_on, study.final_deals, agent_kwargs) for p in policies]
    else:
        final = [scorer.score(jax.tree.map(lambda x, i=i: x[i], trainer.runner.params),
                              study.final_deals) for i in range(len(study.seeds))]
    run = {
        "format": RUN_FORMAT,
        "track": track_id,
        "description": track.description,
        "follow_up": track.follow_up,
        "memory": memory,
        "model": model,
        "seeds": list(study.seeds),
        "timesteps": before + trainer.timesteps,
        **({"init": {"track": track.init, "timesteps": before}} if track.init else {}),
        "config": {k: v for k, v in config.to_json().items() if k != "seed"},
        "final_deals": study.final_deals,
        "final_scale": track.score,
        **({"final_agent": agent_kwargs} if agent_kwargs else {}),
        "final": final,
        "curves": curves,
        "training": training,
        "policies": [p.name for p in policies],
        "parameters": count_parameters(trainer.policy),
        "seconds": round(seconds, 1),
        "steps_per_second": round(trainer.timesteps * len(study.seeds) / max(seconds, 1e-9), 1),
        "platform": platform_info(),
    }
    write_json(path, run, indent=1, sort_keys=True)
    log(f"{track_id} {memory} {model}: final IQM {_iqm([f['score'] for f in final]):+.3f} "
        f"({seconds:.0f} s, {run['steps_per_second']:.0f} steps/s)")
    return run


def rescore_cell(study: Study, track_id: str, memory: str, model: str, out_dir: Path,
                 log: Any = print) -> bool:
    """Score the cell's saved policies again on its benchmark track if its run file's
    final scores are not on the benchmark's scale (an older file, scored by the JAX proxy)
    or were played with other agent keyword arguments than
    :func:`memtab_env.study.scores.final_agent` gives. Curves and training are kept; the
    platform of the new scores is recorded as ``final_platform``. Returns whether it did."""
    from memtab_env.study.runs import load_run
    from memtab_env.study.scores import benchmark_score, final_agent

    path = run_path(out_dir, track_id, memory, model)
    track = study.tracks[track_id]
    if track.score != "benchmark" or not path.exists():
        return False
    run = load_run(path)
    agent_kwargs = final_agent(memory, track.scored_on)
    if run.get("final_scale") == "benchmark" and run.get("final_agent", {}) == agent_kwargs:
        return False
    policies = [policy_path(path, seed) for seed in run["seeds"]]
    missing = [p.name for p in policies if not p.is_file()]
    if missing:
        raise StudyError(f"{path}: rescoring needs its policies beside it; missing {', '.join(missing)}")
    start = time.perf_counter()
    run["final"] = [benchmark_score(p, track.scored_on, run["final_deals"], agent_kwargs) for p in policies]
    run["final_scale"] = "benchmark"
    run.pop("final_agent", None)
    if agent_kwargs:
        run["final_agent"] = agent_kwargs
    run["final_platform"] = platform_info()
    write_json(path, run, indent=1, sort_keys=True)
    log(f"{track_id} {memory} {model}: rescored with {agent_kwargs}: final IQM "
        f"{_iqm([f['score'] for f in run['final']]):+.3f} ({time.perf_counter() - start:.0f} s)")
    return True


def platform_info() -> dict[str, Any]:
    """What trained a run: library versions, CPU and JAX devices. Training is bit-identical
    only on the same platform; elsewhere floating-point differences grow over updates."""
    from memtab_env.platform_info import platform_info as info

    return info(("memtab-env", "jax", "jaxlib", "memax", "equinox", "optax", "numpy"))


def _iqm(xs: Sequence[float]) -> float:
    from memtab_env.protocol.metrics import iqm

    return float(iqm(np.asarray(xs, np.float64)))


def report(out_dir: Path, figures_dir: Path | None, leaderboard: Path | None,
           results_dir: Path = Path("results"), study: Study | None = None,
           config: str | Path | None = None, tables: Path | None = None) -> None:
    """Figures and the leaderboard (rebuilt from ``results_dir``, whose ``study/`` holds
    the run files), from the run files under ``out_dir``, audited against ``study``
    (read from ``config``) when given; ``tables``: a Markdown file of the study's tables
    of those run files alone."""
    runs = collect_runs(out_dir, study, results_dir)
    if tables is not None:
        from memtab_env.study.tables import cells_table, in_study_order, leaderboard_section

        tables.parent.mkdir(parents=True, exist_ok=True)
        section = leaderboard_section(runs, f"{out_dir.as_posix().rstrip('/')}/",
                                      Path(config or PRESETS["full"]).as_posix())
        ordered = in_study_order(runs, study) if study else runs
        for track in dict.fromkeys(run["track"] for run in runs):
            cells = [run for run in ordered if run["track"] == track]
            section += [f"### {track}: every cell", "", *cells_table(cells), ""]
        tables.write_text("\n".join(section or ["No run files yet."]) + "\n")
        print(f"tables {tables}")
    if figures_dir is not None:
        from memtab_env.study.figures import draw_curves, draw_finals
        from memtab_env.study.tables import in_study_order

        for path in [*draw_curves(runs, figures_dir),
                     *draw_finals(in_study_order(runs, study) if study else runs, figures_dir)]:
            print(f"figure {path}")
    if leaderboard is not None:
        from memtab_env.protocol.leaderboard import build

        text, _ = build(results_dir, leaderboard, study_config=config)
        write_text(leaderboard, text)
        print(f"rebuilt {leaderboard}")


#: ``--preset``: study configs shipped in ``configs/``
PRESETS = {"full": "configs/study.yaml", "smoke": "configs/study_smoke.yaml"}
#: what ``memtab study`` writes only with ``--write-committed``: the first study's run files
#: and policies, figures and leaderboard (paths relative to the working directory), and
#: every committed study's folder under the results (``COMMITTED_STUDIES``)
COMMITTED = (Path("results/study"), Path("docs/study"), Path("LEADERBOARD.md"))


def committed_folder(config: str | Path) -> str | None:
    """The results folder of the committed study that ``config`` trains (matched by file
    name: ``study_memtab.yaml`` -> ``grid``), or None."""
    return next((folder for folder, path in COMMITTED_STUDIES if Path(path).name == Path(config).name), None)


def _names(values: Any) -> str:
    return ", ".join(map(str, values)) if values else "(none: the config did not load)"


def _parser(study: Study | None) -> argparse.ArgumentParser:
    """The options; the valid track, architecture and memory names in the help come from
    the study config named on the command line (or the default one)."""
    tracks = list(study.tracks) if study else []
    models = list(study.models) if study else []
    memories = [*study.memories, study.reference["memory"]] if study else []
    ap = argparse.ArgumentParser(prog="memtab study", description=(
        "Train and score the memory study's cells (memtab_env.study), then draw its learning "
        "curves and its tables. Cells with a run file are kept, so a stopped run resumes cell by "
        "cell. By default everything goes to a folder of its own (--out); the committed results "
        "(results/study, docs/study, LEADERBOARD.md) are written only with --write-committed."))
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--config", default=None, help=f"the study YAML (default {PRESETS['full']})")
    source.add_argument("--preset", choices=list(PRESETS), default=None,
                        help="a shipped study config: " + ", ".join(f"{k} = {v}" for k, v in PRESETS.items())
                        + " (smoke: one small cell, a few minutes: checks an install)")
    ap.add_argument("--seeds", type=int, default=None, metavar="N",
                    help="train seeds 0 .. N-1 in every cell (default: the config's seeds"
                         + (f", {list(study.seeds)}" if study else "") + ")")
    ap.add_argument("--timesteps", type=int, default=None, metavar="STEPS",
                    help="learner steps per seed in every track (default: each track's budget)")
    ap.add_argument("--tracks", nargs="+", default=None, metavar="TRACK",
                    help=f"only these tracks (default: all): {_names(tracks)}")
    ap.add_argument("--models", nargs="+", default=None, metavar="MODEL",
                    help=f"only these memory architectures (default: all): {_names(models)}")
    ap.add_argument("--memories", nargs="+", default=None, metavar="MEMORY",
                    help=f"only these env memory models (default: all): {_names(memories)}")
    ap.add_argument("--results", default="results",
                    help="the benchmark results (anchors of benchmark tracks; read only unless "
                         "--write-committed)")
    ap.add_argument("--out", default=None,
                    help="folder of the run files, policies, figures (OUT/figures) and tables "
                         "(OUT/study.md); default runs/study/<config name>, or RESULTS/study with "
                         "--write-committed")
    ap.add_argument("--figures", default=None,
                    help="folder of the PNG learning curves (default OUT/figures, or docs/study with "
                         "--write-committed)")
    ap.add_argument("--leaderboard", default=None,
                    help="a leaderboard to rebuild from RESULTS (default: none, or LEADERBOARD.md "
                         "with --write-committed); '' to skip")
    ap.add_argument("--write-committed", action="store_true",
                    help="write a committed study: for " + ", ".join(
                        f"{path} under RESULTS/{folder}" for folder, path in COMMITTED_STUDIES
                        if folder != "study") + " (its figures and tables inside); for any other "
                        "config, run files under RESULTS/study, figures in docs/study, LEADERBOARD.md "
                        "rebuilt")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--report-only", action="store_true", help="train nothing")
    mode.add_argument("--status", action="store_true",
                      help="train and write nothing: list the cells (after --tracks, --models and "
                           "--memories), each done (its IQM, seeds and wall clock from its run file) or "
                           "to run, and count them")
    mode.add_argument("--rescore", action="store_true",
                    help="train nothing; on tracks scored by the benchmark, score again the saved "
                         "policies of the run files whose final scores are not the benchmark's as the "
                         "study plays it now (an older file on the JAX proxy's scale; a perfect-memory "
                         "cell on a track whose env forgets, which plays with recall: "
                         "memtab_env.study.scores.final_agent)")
    return ap


def print_status(study: Study, cells: Sequence[tuple[str, str, str]], out: Path) -> None:
    """``--status``: a line per cell of ``cells``, done (from its run file under ``out``:
    IQM [95% interval], seeds, wall clock; a file trained otherwise than the study trains
    the cell now says so) or to run, then the counts."""
    from memtab_env.study.tables import aggregate

    done = 0
    for k, cell in enumerate(cells, 1):
        head = f"[{k}/{len(cells)}] {' '.join(cell)}"
        path = run_path(out, *cell)
        if not path.exists():
            print(f"{head}: to run", flush=True)
            continue
        run = load_run(path)
        stats = aggregate([run])[cell]
        seconds = run.get("seconds")
        line = (f"{head}: done, IQM {stats['iqm']:.2f} [{stats['lo']:.2f}, {stats['hi']:.2f}] over "
                f"{stats['seeds']} seeds")
        if isinstance(seconds, (int, float)):
            line += f", {seconds:,.0f} s"
        differences = kept_run_differences(study, *cell, path)
        if differences:
            line += f"; trained otherwise than the study trains it now: {'; '.join(differences)}"
        else:
            done += 1
        print(line, flush=True)
    print(f"{done} of {len(cells)} cells done as the config trains them, {len(cells) - done} to run "
          f"(run files under {out})", flush=True)


def _path(value: str | None, default: Path | None) -> Path | None:
    """An output option: unset -> ``default``, ``''`` -> none."""
    return default if value is None else Path(value) if value else None


def _committed(path: Path, results: Path) -> bool:
    """Whether ``path`` is (or lies inside) a committed output of the study."""
    path = path.resolve()
    for root in (*COMMITTED, *(results / folder for folder, _ in COMMITTED_STUDIES)):
        root = root.resolve()
        if path == root or root in path.parents:
            return True
    return False


def overridden(study: Study, seeds: int | None, timesteps: int | None) -> Study:
    """``study`` with ``--seeds N`` (seeds 0 .. N-1) and ``--timesteps`` (every track's
    budget) applied."""
    for name, value in (("--seeds", seeds), ("--timesteps", timesteps)):
        if value is not None and value < 1:
            raise StudyError(f"{name} must be a positive integer, got {value}")
    if seeds is not None:
        study = dataclasses.replace(study, seeds=tuple(range(seeds)))
    if timesteps is not None:
        study = dataclasses.replace(study, tracks={k: dataclasses.replace(t, timesteps=timesteps)
                                                   for k, t in study.tracks.items()})
    return study


def main(argv: Sequence[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", default=None)
    pre.add_argument("--preset", default=None)
    known, _ = pre.parse_known_args(argv)
    config = known.config or PRESETS.get(known.preset or "full", PRESETS["full"])
    try:
        study: Study | None = load_study(config)
        problem = None
    except StudyError as exc:
        study, problem = None, exc
    args = _parser(study).parse_args(argv)
    try:
        if study is None:
            raise problem
        study = overridden(study, args.seeds, args.timesteps)
        results = Path(args.results)
        folder = committed_folder(config) or "study"
        if args.write_committed and folder == "study":  # the first study: docs/study, LEADERBOARD.md
            out = _path(args.out, results / folder)
            figures, board = _path(args.figures, COMMITTED[1]), _path(args.leaderboard, COMMITTED[2])
            tables = None
        else:  # a grid or a user's run: figures and tables inside its own folder
            out = _path(args.out, results / folder if args.write_committed
                        else Path("runs") / "study" / Path(config).stem)
            figures, board = _path(args.figures, out / "figures"), _path(args.leaderboard, None)
            tables = out / "study.md"
        for what, path in (("--out", out), ("--figures", figures), ("--leaderboard", board)):
            if not (args.write_committed or args.status) and path is not None and _committed(path, results):
                raise StudyError(f"{what} {path} is a committed result of the study: writing it "
                                 "takes --write-committed")
        if args.status:
            print_status(study, study.cells(args.tracks, args.models, args.memories), out)
            return 0
        if args.rescore:
            for track, memory, model in study.cells(args.tracks, args.models, args.memories):
                rescore_cell(study, track, memory, model, out, log=lambda line: print(line, flush=True))
        elif not args.report_only:
            cells = study.cells(args.tracks, args.models, args.memories)
            for k, (track, memory, model) in enumerate(cells, 1):
                head = f"[{k}/{len(cells)}] {track} {memory} {model}"
                kept = run_path(out, track, memory, model)
                if kept.exists():
                    differences = kept_run_differences(study, track, memory, model, kept)
                    if differences:
                        raise StudyError(
                            f"{head}: {kept} was trained otherwise than the study trains this "
                            f"cell now: {'; '.join(differences)}. Delete it to train the cell "
                            "again, or run the config it was trained with")
                    print(f"{head}: done (run file exists)", flush=True)
                    continue
                print(f"{head}: {len(study.seeds)} seed(s) x {study.tracks[track].timesteps:,} steps; "
                      "compiling (the first update; cached for reruns) ...", flush=True)
                run_cell(study, track, memory, model, out, results,
                         log=lambda line, k=k: print(f"[{k}/{len(cells)}] {line.strip()}", flush=True))
        report(out, figures, board, results, study, config, tables=tables)
        print(f"run files and policies: {out}")
    except StudyError as exc:
        print(f"memtab study: {exc}")
        return 2
    return 0


def study_main(argv: Sequence[str]) -> int:
    """``memtab study ARGS``."""
    return main(argv)
