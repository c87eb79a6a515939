"""The memory study: which memory architecture does how well, under which memory model.

Protocol (``configs/study.yaml`` holds every number; ``memtab study`` runs it):

- **Cells.** Every memory architecture of ``models`` (memax models behind the
  position-equivariant set encoder of :mod:`memtab_env.jax.ppo`: a memory per position)
  x every env memory model of ``memories`` (``none``, ``window:4``), plus the
  ``reference`` cell (no memory architecture, ``perfect`` memory: what a memoryless
  policy reaches when the env remembers for it), on every track of ``tracks``.
- **Seeds.** Each cell trains every seed of ``seeds`` with the same PPO settings and the
  track's fixed sample budget (``timesteps`` learner steps); the seeds train side by
  side in one compiled call (:class:`memtab_env.jax.ppo.Trainer`), each with its own
  weights, games and samples.
- **Scores.** A track's score is normalised: 0 = uniformly random play, 1 = a fixed
  strong reference. ``solo-turns`` (Pelmanism solo): ``(E_random - T) / (E_random -
  E_opt)``, ``T`` the mean number of turns over the track's deals, ``E_random = n**2`` and
  ``E_opt`` the exact optimum of perfect-memory play
  (:mod:`memtab_env.games.pelmanism.values`). ``benchmark`` (``memtab-2p-none``): the
  benchmark track of that id (``BENCHMARK.md``: its deals, every deal once per seat, win
  shares) against its reference opponents that the JAX view plays exactly (``random``
  and ``greedy``; ``expert`` is a Python agent, left to the full protocol), normalised
  between the mean win rates of ``random`` and of the track's strongest agent over the
  same opponents, read from their committed results (:func:`benchmark_anchors`). The
  best policies are also scored by the full protocol through the AEC env
  (``memtab evaluate``), as every leaderboard entry is.
- **Play.** Policies play their sampled actions (the stochastic policy PPO trains; a
  memoryless policy's most likely flip repeats itself for ever under memory ``none``).
- **Deals.** Final scores use the first ``final_deals`` of the benchmark's evaluation
  deals (deal ``i`` from seed ``EVAL_SEED_START + i``, never used in training), the
  learning curves the first ``curve_deals``, ``curve_points`` times per run, all played
  in the JAX view (the differential tests hold it equal to the AEC env flip for flip).
- **Aggregates.** Per cell: the interquartile mean (IQM) over seeds and its 95%
  stratified-bootstrap interval (:func:`memtab_env.benchmark.metrics.stratified_bootstrap`,
  Agarwal et al., "Deep RL at the Edge of the Statistical Precipice", 2021); across
  tracks: the same with tracks as strata.
- **Files.** One run file per cell (``results/study/<track>/<memory>__<model>.json``,
  format ``memtab-study-run/1``: config, per-seed curves and final scores, timing and
  ``platform``, the library versions, CPU and devices that trained it; older run files
  lack it) and the trained policies beside it (``<memory>__<model>__s<seed>.zip``, JAX
  PPO checkpoints that ``memtab_env.agents.make(path)`` plays). ``LEADERBOARD.md``'s
  memory study section and the figures in ``docs/study/`` are recomputed from the run
  files, which are read as untrusted data and checked (:func:`load_run`).

This module is the protocol and the report (no JAX); :mod:`memtab_env.study.run` trains.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtab_env import untrusted
from memtab_env.errors import MemTabError

RUN_FORMAT = "memtab-study-run/1"
SCORES = ("solo-turns", "benchmark")
#: largest study or run file read
MAX_FILE_BYTES = 8 << 20


class StudyError(MemTabError, ValueError):
    """A study config or run file that does not fit; the message names the file and the
    field."""


#: PPO config fields that each cell sets from its track, model and seed
CELL_FIELDS = ("env_id", "env_options", "opponents", "learner_seat", "memory_model",
               "memory_kwargs", "total_timesteps", "seed")


@dataclass(frozen=True)
class StudyTrack:
    """A game setup of the study and how it is scored."""

    id: str
    env_id: str
    options: dict[str, Any]
    """env options except ``memory`` (the study's other axis)"""
    score: str
    """``solo-turns`` or ``benchmark`` (the benchmark track :attr:`scored_on`)"""
    timesteps: int
    """the fixed sample budget of every run: learner steps"""
    opponents: str = "random"
    """the training opponents (built-in JAX opponents: ``random`` or ``greedy``)"""
    learner_seat: int | str = "random"
    description: str = ""
    models: tuple[str, ...] = ()
    """only these architectures of the study (empty: all of them, plus the reference)"""
    memories: tuple[str, ...] = ()
    """only these memory models of the study (empty: all of them, plus the reference); a
    track restricted by either is a follow-up: its cells are those named, no reference"""

    benchmark: str = ""
    """``benchmark`` score: the benchmark track whose deals and anchors score it (empty:
    the track's own id)"""
    ppo: dict[str, Any] = field(default_factory=dict)
    """:class:`memtab_env.jax.ppo.PPOConfig` fields of this track's runs, over the
    study's (not those a cell sets: env, options, opponents, seat, model, budget, seed)"""
    init: str = ""
    """a track earlier in the config whose run of the same cell gives each seed its
    starting weights: this track trains on from there (a fresh optimiser and
    learning-rate schedule over its own ``timesteps``; its runs count the steps of both)"""

    @property
    def follow_up(self) -> bool:
        return bool(self.models or self.memories)

    @property
    def scored_on(self) -> str:
        return self.benchmark or self.id


@dataclass(frozen=True)
class Study:
    """Everything the study depends on (``configs/study.yaml``)."""

    seeds: tuple[int, ...]
    models: dict[str, dict[str, Any]]
    """name -> ``{memory_model: memax name, memory_kwargs: {...}}``"""
    memories: tuple[str, ...]
    reference: dict[str, str]
    """``{model: name, memory: perfect}``: the memoryless reference cell"""
    tracks: dict[str, StudyTrack]
    ppo: dict[str, Any] = field(default_factory=dict)
    """:class:`memtab_env.jax.ppo.PPOConfig` fields shared by every run"""
    curve_points: int = 10
    curve_deals: int = 100
    final_deals: int = 200

    def cells(self, tracks: Sequence[str] | None = None, models: Sequence[str] | None = None,
              memories: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """``(track, memory, model)`` of every cell, in the config's order, optionally
        only those named."""
        for kind, chosen, known in (("track", tracks, self.tracks), ("model", models, self.models),
                                    ("memory", memories, (*self.memories, self.reference["memory"]))):
            unknown = [c for c in chosen or () if c not in known]
            if unknown:
                raise StudyError(f"unknown {kind}(s) {unknown}; the study has {list(known)}")
        out = []
        for t, track in self.tracks.items():
            if tracks and t not in tracks:
                continue
            pairs = [(mem, m) for mem in track.memories or self.memories
                     for m in track.models or self.models]
            if not track.follow_up:
                pairs.append((self.reference["memory"], self.reference["model"]))
            out += [(t, mem, m) for mem, m in pairs
                    if (not models or m in models) and (not memories or mem in memories)]
        return out


def _subset(spec: dict[str, Any], key: str, allowed: Sequence[str], where: str) -> list[str]:
    """A track's ``models`` or ``memories``: distinct names the study defines."""
    chosen = spec.get(key, [])
    if not isinstance(chosen, list) or len(set(map(str, chosen))) != len(chosen) \
            or any(c not in allowed for c in chosen):
        raise StudyError(f"{where}: {key} must be a list of distinct names among "
                         f"{list(allowed)}, got {chosen!r:.80}")
    return chosen


def _require(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise StudyError(f"{where}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise StudyError(f"{where}: field {key!r} must be {names}, got {value!r:.80}")
    return value


def _check_init(track: StudyTrack, earlier: dict[str, StudyTrack], memories: Sequence[str],
                models: dict[str, Any], where: str) -> None:
    """A track that trains on from ``init``: that track comes before it and trains every
    cell it names."""
    if track.init not in earlier or track.init == track.id:
        raise StudyError(f"{where}: init must name a track earlier in the config, got "
                         f"{track.init!r}; earlier tracks: {[t for t in earlier if t != track.id]}")
    if not track.follow_up:
        raise StudyError(f"{where}: a track with init is a follow-up: name its models or memories")
    source = earlier[track.init]
    mine = {(mem, m) for mem in track.memories or memories for m in track.models or models}
    theirs = {(mem, m) for mem in source.memories or memories for m in source.models or models}
    missing = sorted(mine - theirs)
    if missing:
        raise StudyError(f"{where}: init track {track.init!r} does not train the cell(s) "
                         f"{missing} (memory, model) that this track starts from it")
    if (source.env_id, source.options) != (track.env_id, track.options):
        raise StudyError(f"{where}: init track {track.init!r} plays another game or options")


def study_from_dict(data: Any, where: str = "study") -> Study:
    """A :class:`Study` from parsed YAML, every field checked (clear errors)."""
    if not isinstance(data, dict):
        raise StudyError(f"{where}: expected a mapping")
    known = {f.name for f in dataclasses.fields(Study)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise StudyError(f"{where}: unknown field(s) {unknown}; fields: {sorted(known)}")
    seeds = _require(data, "seeds", list, where)
    if not seeds or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in seeds) \
            or len(set(seeds)) != len(seeds):
        raise StudyError(f"{where}: seeds must be distinct integers >= 0, got {seeds!r:.80}")
    models = _require(data, "models", dict, where)
    for name, spec in models.items():
        _require(spec, "memory_model", str, f"{where}: models.{name}")
        extra = sorted(set(spec) - {"memory_model", "memory_kwargs"})
        if extra:
            raise StudyError(f"{where}: models.{name}: unknown field(s) {extra}; "
                             "fields: memory_model, memory_kwargs")
        if not isinstance(spec.get("memory_kwargs", {}), dict):
            raise StudyError(f"{where}: models.{name}.memory_kwargs must be a mapping")
    memories = _require(data, "memories", list, where)
    from memtab_env.memory import parse_memory

    reference = _require(data, "reference", dict, where)
    for mem in [*memories, reference.get("memory")]:
        try:
            parse_memory(mem)
        except (TypeError, ValueError) as exc:
            raise StudyError(f"{where}: memory {mem!r}: {exc}") from None
    if reference.get("model") not in models or set(reference) != {"model", "memory"}:
        raise StudyError(f"{where}: reference must be {{model: one of {list(models)}, memory: ...}}, "
                         f"got {reference!r:.80}")
    tracks = {}
    track_fields = {f.name for f in dataclasses.fields(StudyTrack)}
    for tid, spec in _require(data, "tracks", dict, where).items():
        at = f"{where}: tracks.{tid}"
        if not isinstance(spec, dict):
            raise StudyError(f"{at}: expected a mapping")
        extra = sorted(set(spec) - track_fields)
        if extra or "id" in spec:
            raise StudyError(f"{at}: unknown field(s) {extra or ['id']}; fields: "
                             f"{sorted(track_fields - {'id'})}")
        track = StudyTrack(id=str(tid), env_id=_require(spec, "env_id", str, at),
                           options=_require(spec, "options", dict, at),
                           score=_require(spec, "score", str, at),
                           timesteps=_require(spec, "timesteps", int, at),
                           opponents=spec.get("opponents", "random"),
                           learner_seat=spec.get("learner_seat", "random"),
                           description=str(spec.get("description", "")),
                           models=tuple(_subset(spec, "models", models, at)),
                           memories=tuple(_subset(spec, "memories", memories, at)),
                           benchmark=str(spec.get("benchmark", "")),
                           ppo=_require(spec, "ppo", dict, at) if "ppo" in spec else {},
                           init=str(spec.get("init", "")))
        per_cell = sorted(set(track.ppo) & set(CELL_FIELDS))
        if per_cell:
            raise StudyError(f"{at}: ppo must not set {per_cell} (each cell sets them: "
                             f"{list(CELL_FIELDS)})")
        if track.score not in SCORES:
            raise StudyError(f"{at}: score must be one of {list(SCORES)}, got {track.score!r}")
        if "memory" in track.options:
            raise StudyError(f"{at}: options must not set memory (the study's memories do)")
        if track.timesteps < 1:
            raise StudyError(f"{at}: timesteps must be positive")
        if track.benchmark and track.score != "benchmark":
            raise StudyError(f"{at}: field benchmark is for score 'benchmark' only")
        if track.score == "benchmark":
            from memtab_env.benchmark.tracks import TRACKS

            if track.scored_on not in TRACKS:
                raise StudyError(f"{at}: score 'benchmark' needs a benchmark track of that id "
                                 f"(or a field benchmark naming one); tracks: {list(TRACKS)}")
        tracks[str(tid)] = track
        if track.init:
            _check_init(track, tracks, memories, models, at)
    ppo = data.get("ppo", {})
    if not isinstance(ppo, dict):
        raise StudyError(f"{where}: ppo must be a mapping of PPO config fields")
    numbers = {}
    for name in ("curve_points", "curve_deals", "final_deals"):
        if name in data:
            numbers[name] = _require(data, name, int, where)
            if numbers[name] < 1:
                raise StudyError(f"{where}: {name} must be positive")
    return Study(seeds=tuple(seeds), models=models, memories=tuple(memories), reference=reference,
                 tracks=tracks, ppo=ppo, **numbers)


def load_study(path: str | Path) -> Study:
    """Read and check the study YAML ``path`` (safe YAML, size-limited): a file, or the
    name of a shipped config (``study``: the package's copy of ``configs/study.yaml``)."""
    import yaml

    from memtab_env.train.config import ConfigError, config_path

    try:
        path = config_path(path)
    except ConfigError as exc:
        raise StudyError(str(exc)) from None
    text = untrusted.decode(untrusted.read_bytes(path, StudyError, MAX_FILE_BYTES), str(path), StudyError)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: not valid YAML ({exc})") from None
    return study_from_dict(data, str(path))


# -- scores -----------------------------------------------------------------------------
def solo_turns_bounds(options: dict[str, Any]) -> tuple[float, float]:
    """``(E_random, E_opt)``: the expected turns of uniformly random and of optimal
    solo Pelmanism play for the deck of ``options`` (pairs decks)."""
    from memtab_env.games.pelmanism.rules import parse_deck
    from memtab_env.games.pelmanism.values import (
        solo_optimal_expected_turns,
        solo_random_expected_turns,
    )

    deck = parse_deck(options.get("deck", "standard"))
    if deck.num_cards != 2 * deck.num_pairs or deck.num_kinds != deck.num_pairs:
        raise StudyError(f"score solo-turns needs a deck of pairs (pairs:N), got {deck.spec!r}")
    n = deck.num_pairs
    return float(solo_random_expected_turns(n)), float(solo_optimal_expected_turns(n, exact=False))


def normalised_turns(turns: float, options: dict[str, Any]) -> float:
    random, optimum = solo_turns_bounds(options)
    return (random - turns) / (random - optimum)


def benchmark_anchors(track_id: str, results_dir: str | Path) -> tuple[tuple[float, float], list[str]]:
    """``((low, high), opponents)`` for scoring a policy on the benchmark track
    ``track_id`` against the reference opponents that the JAX view plays (``random``,
    ``greedy``): the mean win rate over those opponents of ``random`` (low) and of the
    track's strongest agent (high), read from their committed result files
    (``results/<track>/random.json`` and ``<strongest>.json``, the files the track's own
    anchors come from), checked as every result is."""
    from memtab_env.benchmark.results import ResultError, load_result
    from memtab_env.benchmark.tracks import TRACKS

    track = TRACKS[track_id]
    opponents = [o for o in track.opponents if o in ("random", "greedy")]
    anchors = []
    for agent in ("random", track.strongest):
        path = Path(results_dir) / track_id / f"{agent}.json"
        try:
            result = load_result(path)
        except (OSError, ResultError) as exc:
            raise StudyError(f"the anchors of {track_id} come from {path}: {exc}") from None
        runs = result["runs"]
        anchors.append(sum(run["opponents"][o]["win_rate"] for run in runs for o in opponents)
                       / (len(runs) * len(opponents)))
    return (anchors[0], anchors[1]), opponents


# -- run files --------------------------------------------------------------------------
def run_path(out_dir: Path, track: str, memory: str, model: str) -> Path:
    return Path(out_dir) / track / f"{memory.replace(':', '')}__{model}.json"


def policy_path(run_file: Path, seed: int) -> Path:
    """The trained policy of ``seed`` beside the cell's run file."""
    return run_file.with_name(f"{run_file.stem}__s{seed}.zip")


def load_run(path: Path) -> dict[str, Any]:
    """A run file, checked: the format, the cell, one final score and one curve per
    seed, finite numbers. :class:`StudyError` naming the file and the field otherwise."""
    run = untrusted.load_json(path, StudyError)
    where = str(path)
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        raise StudyError(f"{where}: format must be {RUN_FORMAT!r}")
    for key, kind in (("track", str), ("memory", str), ("model", str), ("seeds", list),
                      ("final", list), ("curves", list), ("timesteps", int)):
        _require(run, key, kind, where)
    if not isinstance(run.get("follow_up", False), bool):
        raise StudyError(f"{where}: follow_up must be true or false")
    n = len(run["seeds"])
    if n == 0 or len(run["final"]) != n or len(run["curves"]) != n:
        raise StudyError(f"{where}: seeds, final and curves must have one entry per seed")
    for i, final in enumerate(run["final"]):
        score = _require(final, "score", (int, float), f"{where}: final[{i}]")
        if not math.isfinite(score):
            raise StudyError(f"{where}: final[{i}].score must be finite")
    for i, curve in enumerate(run["curves"]):
        if not isinstance(curve, list) or not all(
                isinstance(p, dict) and isinstance(p.get("timesteps"), int)
                and isinstance(p.get("score"), (int, float)) and math.isfinite(p["score"])
                for p in curve):
            raise StudyError(f"{where}: curves[{i}] must be a list of {{timesteps, score}}")
    return run


def collect_runs(out_dir: str | Path) -> list[dict[str, Any]]:
    """Every run file under ``out_dir`` (sorted by path), checked."""
    root = Path(out_dir)
    runs = []
    for path in sorted(root.rglob("*.json")):
        obj = untrusted.load_json(path, StudyError)
        if isinstance(obj, dict) and obj.get("format") == RUN_FORMAT:
            run = load_run(path)
            run["_path"] = path
            runs.append(run)
    return runs


def aggregate(runs: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, float]]:
    """``(track, memory, model) -> {iqm, lo, hi, seeds}`` of the final scores."""
    from memtab_env.benchmark.metrics import stratified_bootstrap

    out = {}
    for run in runs:
        scores = [f["score"] for f in run["final"]]
        point, lo, hi = stratified_bootstrap([scores])
        out[(run["track"], run["memory"], run["model"])] = {
            "iqm": point, "lo": lo, "hi": hi, "seeds": len(scores)}
    return out


def leaderboard_section(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The memory study section of ``LEADERBOARD.md`` (Markdown lines; none without
    runs), recomputed from the run files: one table per track, cells ranked by IQM, and
    the architectures across tracks (IQM over seeds x tracks, strata: tracks)."""
    from memtab_env.benchmark.metrics import stratified_bootstrap

    if not runs:
        return []
    cells = aggregate(runs)
    lines = [
        "## Memory study",
        "",
        "Generated from the run files under `results/study/` (protocol: "
        "[docs/study.md](docs/study.md), `memtab study --config configs/study.yaml`). "
        "Memory architectures (memax models, a memory per position behind the set encoder) "
        "trained by the JAX PPO at a fixed sample budget per track; normalised final score "
        "(0 = random play, 1 = the track's strong reference), IQM over training seeds with "
        "a 95% stratified-bootstrap interval.",
        "",
    ]
    tracks = list(dict.fromkeys(r["track"] for r in runs))
    for track in tracks:
        rows = [(k, v) for k, v in cells.items() if k[0] == track]
        rows.sort(key=lambda kv: (-kv[1]["iqm"], kv[0][1], kv[0][2]))
        run = next(r for r in runs if r["track"] == track)
        lines += [f"### {track}", "", f"{run.get('description', '')} Budget: "
                  f"{run['timesteps']:,} learner steps per seed.", "",
                  "| # | memory model | architecture | seeds | IQM normalised | 95% interval |",
                  "|---|---|---|---|---|---|"]
        for rank, ((_, memory, model), v) in enumerate(rows, 1):
            lines.append(f"| {rank} | `{memory}` | {model} | {v['seeds']} | {v['iqm']:.2f} | "
                         f"[{v['lo']:.2f}, {v['hi']:.2f}] |")
        lines.append("")
    grid = [t for t in tracks if not any(r.get("follow_up") for r in runs if r["track"] == t)]
    if len(grid) > 1:
        lines += ["### Across tracks", "",
                  "Per memory model and architecture present on every track of the full grid "
                  "(follow-up tracks left out): IQM over seeds x tracks, 95% "
                  "stratified-bootstrap interval (strata: tracks).", "",
                  "| memory model | architecture | IQM normalised | 95% interval |",
                  "|---|---|---|---|"]
        mine = [r for r in runs if r["track"] in grid]
        pairs = sorted({(r["memory"], r["model"]) for r in mine})
        rows = []
        for memory, model in pairs:
            strata = [[f["score"] for f in r["final"]] for r in mine
                      if r["memory"] == memory and r["model"] == model]
            if len(strata) == len(grid):
                point, lo, hi = stratified_bootstrap(strata)
                rows.append((-point, memory, model, lo, hi))
        for neg, memory, model, lo, hi in sorted(rows):
            lines.append(f"| `{memory}` | {model} | {-neg:.2f} | [{lo:.2f}, {hi:.2f}] |")
        lines.append("")
    return lines
