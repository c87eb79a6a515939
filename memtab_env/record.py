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

import gzip
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env import __version__, untrusted
from memtab_env.atomic import TMP_PREFIX, atomic_file
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


#: largest seed a record may name (numpy seeds are non-negative integers)
MAX_SEED = 2**128
_SCALAR = (str, int, float, bool, type(None))


def _bad(field: str, what: str) -> RecordError:
    return RecordError(f"field {field}: {what}")


def check_record(record: Any) -> dict[str, Any]:
    """Check the shape of ``record`` (types of the core fields, sizes, ranges) before it
    touches an engine; return it or raise :class:`RecordError` naming the field, what it
    holds and what is allowed. Unknown extra fields are allowed (``docs/record_format.md``)."""
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise RecordError(f"record is missing field(s) {missing}")
    if record["format"] != FORMAT:
        raise _bad("format", f"unknown record format {record['format']!r:.60}; this package reads {FORMAT!r}")
    for key in ("game", "env_id"):
        if not isinstance(record[key], str):
            raise _bad(key, f"expected a string, got {type(record[key]).__name__}")
    options = record["options"]
    if not isinstance(options, dict):
        raise _bad("options", f"expected an object, got {type(options).__name__}")
    for key, value in options.items():
        if not isinstance(value, _SCALAR) and not (key == "board" and isinstance(value, dict)):
            raise _bad(f"options.{key}", f"expected a string, number, boolean or null, got "
                       f"{type(value).__name__}")
    for key in ("num_players", "first_player"):
        value = record[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 64:
            raise _bad(key, f"expected an integer in [0, 64], got {value!r:.60}")
    seed = record.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < MAX_SEED):
        raise _bad("seed", f"expected null or an integer in [0, 2**128), got {seed!r:.60}")
    if record.get("deal", "seed") not in ("seed", "layout"):
        raise _bad("deal", f"expected 'seed' or 'layout', got {record.get('deal')!r:.60}")
    layout = record["layout"]
    if not isinstance(layout, list) or not all(isinstance(c, (str, int)) and not isinstance(c, bool)
                                               for c in layout):
        raise _bad("layout", "expected a list of card codes (strings) or kind ids")
    actions = record["actions"]
    if not isinstance(actions, list):
        raise _bad("actions", f"expected a list, got {type(actions).__name__}")
    for i, entry in enumerate(actions):
        if not isinstance(entry, dict) or "player" not in entry or "action" not in entry:
            raise _bad(f"actions[{i}]", "an action entry is an object with 'player' and 'action'")
        for key in ("player", "action"):
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
                raise _bad(f"actions[{i}].{key}", f"expected a non-negative integer, got {value!r:.60}")
        for key, value in entry.items():
            if not isinstance(value, _SCALAR):
                raise _bad(f"actions[{i}].{key}", f"expected a scalar, got {type(value).__name__}")
    result = record["result"]
    if not isinstance(result, dict):
        raise _bad("result", f"expected an object, got {type(result).__name__}")
    kinds = {"over": bool, "instant_win": bool, "scores": list, "winners": list, "rewards": list,
             "illegal_action": dict}
    for key, kind in kinds.items():
        if key in result and not isinstance(result[key], kind):
            raise _bad(f"result.{key}", f"expected {kind.__name__}, got {type(result[key]).__name__}")
    for key in ("scores", "winners", "rewards"):
        for k, v in enumerate(result.get(key, [])):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) > 1e12:
                raise _bad(f"result.{key}[{k}]", f"expected a finite number, got {v!r:.60}")
    for key in ("scores", "rewards"):  # one per seat
        if key in result and len(result[key]) != record["num_players"]:
            raise _bad(f"result.{key}", f"expected one entry per seat ({record['num_players']}), "
                                        f"got {len(result[key])}")
    illegal = result.get("illegal_action")
    if illegal is not None:
        p = illegal.get("player")
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < record["num_players"]:
            raise _bad("result.illegal_action.player", f"expected a seat, got {p!r:.60}")
        if not isinstance(illegal.get("action"), _SCALAR):
            raise _bad("result.illegal_action.action", "expected a scalar")
    return record


def engine_for(record: dict[str, Any], root: Path | None = None, base: Path | None = None) -> Any:
    """The engine of a checked record (:func:`check_record`): its game at its env version,
    with its options (a board file only inside ``root``); :class:`RecordError` otherwise."""
    spec = game_spec(record["game"])
    if record["env_id"] != spec.env_id:
        raise RecordError(
            f"record is for env {record['env_id']!r:.60} but this package plays {record['game']!r} "
            f"as {spec.env_id!r} (memtab-env {__version__}); records of other versions do not replay"
        )
    engine_cls = load(spec.engine)
    opts = {k: v for k, v in record["options"].items() if k in engine_cls.default_options}
    board = opts.get("board")
    if isinstance(board, str) and board != "default":
        # a board file named by a record: only inside the records' own tree
        if root is None:
            raise _bad("options.board", f"names the file {board!r:.80}; a record read without a "
                       "results tree may only hold its board inline")
        opts["board"] = untrusted.resolve_inside(board, base or root, [root], RecordError, "record",
                                                 ("options", "board"))
    opts.setdefault("num_players", record["num_players"])
    opts.setdefault("first_player", record["first_player"])
    if opts["num_players"] != record["num_players"] or opts["first_player"] != record["first_player"]:
        raise RecordError("record's options disagree with its num_players / first_player fields")
    return engine_cls(**opts)


def replay(record: dict[str, Any], root: str | os.PathLike[str] | None = None,
           base: str | os.PathLike[str] | None = None) -> tuple[Any, Any]:
    """Re-run ``record`` through the engine; return ``(game, final_state)``.

    Raises :class:`RecordError` naming the first point where the record diverges from what
    the rules produce (a different revealed card, the wrong player, an illegal action, a
    different result), or what is malformed (:func:`check_record`). A board file named in
    the record's options is read only when it lies inside ``root`` (relative paths from
    ``base``, default ``root``); without ``root`` a record must hold its board inline.
    """
    check_record(record)
    try:
        game = engine_for(record, None if root is None else Path(root),
                           None if base is None else Path(base))
        state = game.from_layout(record["layout"])
    except MemTabError as exc:
        if isinstance(exc, RecordError):
            raise
        raise RecordError(f"record does not describe a valid game: {exc}") from exc
    except (TypeError, ValueError, OverflowError) as exc:
        raise RecordError(f"record does not describe a valid game: {exc}") from exc
    if record.get("deal", "seed") == "seed" and record.get("seed") is not None:
        dealt = game.layout_codes(game.new_game(np.random.default_rng(int(record["seed"]))))
        if dealt != list(record["layout"]):
            first = next((i for i, (a, b) in enumerate(zip(dealt, record["layout"], strict=False)) if a != b),
                         min(len(dealt), len(record["layout"])))
            raise RecordError(
                f"layout does not match the deal of seed {record['seed']} (deal='seed'); "
                f"first difference at position {first}"
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
        except (MemTabError, IndexError, TypeError, ValueError, OverflowError) as exc:
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
        except (MemTabError, IndexError, TypeError, ValueError, OverflowError):
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


def check_records_target(path: str | os.PathLike[str]) -> None:
    """Refuse (:class:`RecordError`) a records folder that already holds files: two runs'
    records never mix. A file target is replaced whole, so it is always allowed."""
    path = Path(path)
    if path.name.endswith(".jsonl.gz") or path.suffix == ".jsonl":
        return
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise RecordError(f"{path}: already exists and is not an empty folder; records of two runs "
                          "never mix: choose a new folder (or a .jsonl / .jsonl.gz file)")


def write_records(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write records atomically: ``.jsonl`` (one JSON object per line), ``.jsonl.gz`` (the
    same, gzip-compressed, reproducible bytes), or any other path as a folder that gets one
    ``game_NNNNNN.json`` file per record. A folder is written under a temporary name and
    renamed into place; it must not exist or be empty (:func:`check_records_target`)."""
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
        check_records_target(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=TMP_PREFIX, suffix=f".{path.name}"))
        umask = os.umask(0)
        os.umask(umask)
        try:
            os.chmod(tmp, 0o777 & ~umask)
            for i, rec in enumerate(records):
                with open(tmp / f"game_{i:06d}.json", "w") as f:
                    json.dump(rec, f, indent=1)
                    f.write("\n")
            check_records_target(path)
            if path.exists():
                path.rmdir()
            os.rename(tmp, path)
        except BaseException:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
            raise


def iter_records(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
                 ) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` for every record of a ``.jsonl`` / ``.jsonl.gz`` file (``where``
    is ``FILE:LINE``), a ``.json`` file (``FILE``) or a folder of ``.json`` files (sorted).

    Files are untrusted data (:mod:`memtab_env.untrusted`): only regular files are read,
    within size limits, as strict UTF-8 JSON; anything else raises :class:`RecordError`
    naming the file and the line. With ``root``, every file of a folder must resolve
    (links followed) inside ``root``. Records are not validated here (:func:`replay` does)."""
    path = Path(path)
    st = untrusted.stat_path(path, RecordError, "file or folder")
    if stat.S_ISDIR(st.st_mode):
        try:
            names = sorted(p for p in path.iterdir() if p.name.endswith(".json"))
        except OSError as exc:
            raise RecordError(f"{path}: cannot list the folder ({exc.strerror or exc})") from None
        if not names:
            raise RecordError(f"{path}: a folder of records without any .json file")
        for p in names:
            if root is not None:
                untrusted.resolve_inside(p.name, path, [Path(root)], RecordError, str(path), (p.name,))
            yield str(p), untrusted.load_json(p, RecordError)
    elif path.name.endswith(".jsonl.gz") or path.suffix == ".jsonl":
        empty = True
        for n, line in untrusted.iter_lines(path, RecordError):
            empty = False
            yield f"{path}:{n}", untrusted.loads_json(line, str(path), RecordError, line=n)
        if empty:
            raise RecordError(f"{path}: empty; a records file holds one JSON record per line")
    elif path.name.endswith(".gz"):
        raise RecordError(f"{path}: a compressed records file must end in .jsonl.gz")
    else:
        yield str(path), untrusted.load_json(path, RecordError)


def read_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Read records from a ``.jsonl`` / ``.jsonl.gz`` file, a ``.json`` file or a folder of
    ``.json`` files (see :func:`iter_records`); :class:`RecordError` names the file and
    line that cannot be read."""
    for _, rec in iter_records(path):
        yield rec
