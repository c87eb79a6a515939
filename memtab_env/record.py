"""Game records (``memtab-record/1``, see ``docs/record_format.md``): make, replay, read, write.

A record says everything about one game: the deal, every action in order with what it
revealed, and the result. :func:`replay` re-runs a record through the engine and raises
:class:`~memtab_env.errors.RecordError` saying where it diverges; a record that replays is
an audited game.

Fields beyond the stable core that this package writes (readers ignore unknown fields):

- ``deal``: ``"seed"`` when ``layout`` was dealt from ``seed`` (replay checks it), or
  ``"layout"`` when the layout was given by the caller (``reset(options={"layout": ...})``);
- ``result.rewards``: the final rewards of the ``win`` scheme, one per seat;
- ``result.illegal_action``: ``{"player", "action"}`` when ``env()`` ended the game because
  of an illegal action (the offender loses, docs/rulings.md "Bad input").
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from memtab_env import __version__
from memtab_env.errors import MemTabError, RecordError
from memtab_env.registry import game_spec, load
from memtab_env.rewards import win_rewards

FORMAT = "memtab-record/1"
REQUIRED = ("format", "game", "env_id", "options", "num_players", "first_player", "layout",
            "actions", "result")


def make_record(env: Any) -> dict[str, Any]:
    """The record of the game so far in a :class:`memtab_env.aec.MemoryGameEnv`."""
    game, state = env.game, env.game_state
    if state is None:
        raise RecordError("no game to record: call reset() first")
    illegal = env._illegal
    over = bool(game.is_over(state) or illegal is not None)
    n = game.num_players
    result: dict[str, Any] = {
        "over": over,
        "scores": np.asarray(game.scores(state)).tolist(),
        "winners": [],
        "instant_win": bool(game.instant_win(state)),
    }
    if illegal is not None:
        result["winners"] = [p for p in range(n) if p != illegal["player"]]
        result["illegal_action"] = dict(illegal)
        result["rewards"] = [float(r) for r in env._final_rewards]
    elif over:
        result["winners"] = list(game.winners(state))
        result["rewards"] = win_rewards(n, result["winners"]).tolist()
    options = {"memory": str(env.memory_spec), "reward": env.reward_scheme, **game.options()}
    return {
        "format": FORMAT,
        "game": env.game_spec.name,
        "env_id": env.game_spec.env_id,
        "package_version": __version__,
        "options": options,
        "seed": env.game_seed,
        "deal": "layout" if env._layout_given else "seed",
        "num_players": n,
        "first_player": game.first_player,
        "layout": game.layout_codes(state),
        "actions": env.action_entries(),
        "result": result,
    }


def _engine_for(record: dict[str, Any]) -> Any:
    spec = game_spec(record["game"])
    if record["env_id"] != spec.env_id:
        raise RecordError(
            f"record is for env {record['env_id']!r} but this package plays {record['game']!r} "
            f"as {spec.env_id!r} (memtab-env {__version__}); records of other versions do not replay"
        )
    engine_cls = load(spec.engine)
    opts = {k: v for k, v in record["options"].items() if k in engine_cls.default_options}
    opts.setdefault("num_players", record["num_players"])
    opts.setdefault("first_player", record["first_player"])
    if opts["num_players"] != record["num_players"] or opts["first_player"] != record["first_player"]:
        raise RecordError("record's options disagree with its num_players / first_player fields")
    return engine_cls(**opts)


def replay(record: dict[str, Any]) -> tuple[Any, Any]:
    """Re-run ``record`` through the engine; return ``(game, final_state)``.

    Raises :class:`RecordError` naming the first point where the record diverges from what
    the rules produce (a different revealed card, the wrong player, an illegal action, a
    different result), or what is malformed.
    """
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise RecordError(f"record is missing field(s) {missing}")
    if record["format"] != FORMAT:
        raise RecordError(f"unknown record format {record['format']!r}; this package reads {FORMAT!r}")
    try:
        game = _engine_for(record)
        state = game.from_layout(record["layout"])
    except MemTabError as exc:
        raise RecordError(f"record does not describe a valid game: {exc}") from exc
    if record.get("deal", "seed") == "seed" and record.get("seed") is not None:
        dealt = game.layout_codes(game.new_game(np.random.default_rng(int(record["seed"]))))
        if dealt != list(record["layout"]):
            raise RecordError(
                f"layout does not match the deal of seed {record['seed']} (deal='seed'); "
                f"first difference at position "
                f"{next(i for i, (a, b) in enumerate(zip(dealt, record['layout'], strict=False)) if a != b)}"
            )
    result = record["result"]
    illegal = result.get("illegal_action")
    codes = game.layout_codes(state)
    for i, entry in enumerate(record["actions"]):
        where = f"action {i} ({entry!r})"
        if not isinstance(entry, dict) or "player" not in entry or "action" not in entry:
            raise RecordError(f"{where}: an action entry needs 'player' and 'action'")
        if game.is_over(state):
            raise RecordError(f"{where}: the game was already over")
        if entry["player"] != game.current_player(state):
            raise RecordError(
                f"{where}: recorded player {entry['player']} but player "
                f"{game.current_player(state)} is on turn"
            )
        try:
            t = game.apply_inplace(state, entry["action"])
        except MemTabError as exc:
            raise RecordError(f"{where}: not legal here: {exc}") from exc
        if t.revealed:
            card = codes[t.revealed[0][0]]
            if entry.get("card") != card:
                raise RecordError(f"{where}: recorded card {entry.get('card')!r}, the deal reveals {card!r}")
        for key, value in t.extra.items():
            if entry.get(key) != value:
                raise RecordError(f"{where}: recorded {key}={entry.get(key)!r}, replay gives {value!r}")
    if illegal is not None:
        if game.is_over(state) or illegal.get("player") != game.current_player(state):
            raise RecordError("result.illegal_action does not name the player on turn")
        try:
            game.apply(state, illegal.get("action"))
        except MemTabError:
            pass
        else:
            raise RecordError(f"result.illegal_action {illegal!r} is a legal action")
        over, winners = True, [p for p in range(game.num_players) if p != illegal["player"]]
    else:
        over = game.is_over(state)
        winners = list(game.winners(state)) if over else []
    expected = {
        "over": over,
        "scores": np.asarray(game.scores(state)).tolist(),
        "winners": winners,
        "instant_win": bool(game.instant_win(state)),
    }
    for key, value in expected.items():
        if key in result and result[key] != value:
            raise RecordError(f"result.{key}: recorded {result[key]!r}, replay gives {value!r}")
    if "rewards" in result and illegal is None and over:
        rewards = win_rewards(game.num_players, winners).tolist()
        if not np.allclose(result["rewards"], rewards):
            raise RecordError(f"result.rewards: recorded {result['rewards']!r}, replay gives {rewards!r}")
    return game, state


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path`` and move it onto ``path`` only when the block
    succeeds: readers never see a half-written file (not even after Ctrl-C). The file gets
    the usual permissions (``0666 & ~umask``), not ``mkstemp``'s private 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb" if binary else "w") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | os.PathLike[str], obj: Any, indent: int | None = 1) -> None:
    """Write JSON to ``path`` atomically (temp file + rename): never a half-written file."""
    with atomic_file(path) as f:
        json.dump(obj, f, indent=indent)
        f.write("\n")


def write_records(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write records atomically: ``.jsonl`` (one JSON object per line), ``.jsonl.gz`` (the
    same, gzip-compressed, reproducible bytes), or any other path as a folder that gets one
    ``game_NNNNNN.json`` file per record."""
    path = Path(path)
    if path.name.endswith(".jsonl.gz"):
        with atomic_file(path, binary=True) as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            for rec in records:
                f.write((json.dumps(rec, separators=(",", ":")) + "\n").encode())
    elif path.suffix == ".jsonl":
        with atomic_file(path) as f:
            for rec in records:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    else:
        for i, rec in enumerate(records):
            write_json_atomic(path / f"game_{i:06d}.json", rec)


def _read_lines(path: Path, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(f"{path}:{n}: not valid JSON: {exc}") from exc


def read_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Read records from a ``.jsonl`` / ``.jsonl.gz`` file, a ``.json`` file or a folder of
    ``.json`` files; :class:`RecordError` names the file (and line) that is not JSON."""
    path = Path(path)
    if not path.exists():
        raise RecordError(f"{path}: no such file or folder")
    if path.is_dir():
        for p in sorted(path.glob("*.json")):
            yield from read_records(p)
    elif path.name.endswith(".gz"):
        try:
            with gzip.open(path, "rt") as f:
                yield from _read_lines(path, f)
        except (OSError, EOFError) as exc:
            raise RecordError(f"{path}: not a readable gzip file ({exc})") from exc
    elif path.suffix == ".jsonl":
        with open(path) as f:
            yield from _read_lines(path, f)
    else:
        try:
            yield json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not valid JSON: {exc}") from exc
