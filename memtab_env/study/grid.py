"""The study's grid: its config (``configs/study.yaml``: seeds, memory architectures,
env memory models, tracks, PPO settings), checked field by field (:func:`load_study`),
and its cells (:meth:`Study.cells`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtab_env import untrusted
from memtab_env.errors import MemTabError, reject_unknown_fields

SCORES = ("solo-turns", "benchmark")
#: largest study or run file read
MAX_FILE_BYTES = 8 << 20


class StudyError(MemTabError, ValueError):
    """A study config or run file that does not fit; the message names the file and the
    field."""


#: PPO config fields that each cell sets from its track, model and seed
#: what a study's ``models`` entry may set: the memax model, its layer options, and its
#: width (over the study's ``ppo.recurrent_size``: widths chosen per architecture keep
#: parameter counts comparable)
MODEL_FIELDS = ("memory_model", "memory_kwargs", "recurrent_size")
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
    """name -> ``{memory_model: memax name, memory_kwargs: {...}, recurrent_size: width}``
    (``recurrent_size`` optional: the study's ``ppo`` width otherwise)"""
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


def require_field(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
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
    reject_unknown_fields(data, (f.name for f in dataclasses.fields(Study)), StudyError, f"{where}: unknown")
    seeds = require_field(data, "seeds", list, where)
    if not seeds or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in seeds) \
            or len(set(seeds)) != len(seeds):
        raise StudyError(f"{where}: seeds must be distinct integers >= 0, got {seeds!r:.80}")
    models = require_field(data, "models", dict, where)
    for name, spec in models.items():
        require_field(spec, "memory_model", str, f"{where}: models.{name}")
        extra = sorted(set(spec) - set(MODEL_FIELDS))
        if extra:
            raise StudyError(f"{where}: models.{name}: unknown field(s) {extra}; "
                             f"fields: {', '.join(MODEL_FIELDS)}")
        if not isinstance(spec.get("memory_kwargs", {}), dict):
            raise StudyError(f"{where}: models.{name}.memory_kwargs must be a mapping")
        size = spec.get("recurrent_size", 1)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise StudyError(f"{where}: models.{name}.recurrent_size must be a positive integer, "
                             f"got {size!r}")
    memories = require_field(data, "memories", list, where)
    from memtab_env.memory import parse_memory

    reference = require_field(data, "reference", dict, where)
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
    for tid, spec in require_field(data, "tracks", dict, where).items():
        at = f"{where}: tracks.{tid}"
        if not isinstance(spec, dict):
            raise StudyError(f"{at}: expected a mapping")
        extra = sorted(set(spec) - track_fields)
        if extra or "id" in spec:
            raise StudyError(f"{at}: unknown field(s) {extra or ['id']}; fields: "
                             f"{sorted(track_fields - {'id'})}")
        track = StudyTrack(id=str(tid), env_id=require_field(spec, "env_id", str, at),
                           options=require_field(spec, "options", dict, at),
                           score=require_field(spec, "score", str, at),
                           timesteps=require_field(spec, "timesteps", int, at),
                           opponents=spec.get("opponents", "random"),
                           learner_seat=spec.get("learner_seat", "random"),
                           description=str(spec.get("description", "")),
                           models=tuple(_subset(spec, "models", models, at)),
                           memories=tuple(_subset(spec, "memories", memories, at)),
                           benchmark=str(spec.get("benchmark", "")),
                           ppo=require_field(spec, "ppo", dict, at) if "ppo" in spec else {},
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
            from memtab_env.protocol.tracks import TRACKS

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
            numbers[name] = require_field(data, name, int, where)
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

