"""The ``memtab`` command line.

Subcommands:

- ``memtab play``: play MemTab in the terminal against any agent (see ``agents.play``).
- ``memtab simulate``: play games between built-in or trained agents, print win rates,
  optionally write one record per game.
- ``memtab replay``: check that record files replay through the rules engine.
- ``memtab evaluate`` / ``tournament`` / ``leaderboard``: the benchmark protocol
  (``BENCHMARK.md``; the ``eval`` extra).
- ``memtab train``: train and evaluate a policy (:mod:`memtab_env.train`; the ``train``
  extra, or only ``jax`` for ``algo: jax_ppo``); ``memtab train --config quick`` runs a
  shipped config.
- ``memtab study``: the memory study (:mod:`memtab_env.study`; the ``study`` extra).
- ``memtab site``: the static benchmark site, built from ``results/`` (:mod:`memtab_env.site`).

play, simulate and replay need only the core install; every command's ``--help`` works
on it, and a command that needs an extra says which before it starts.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import numpy as np

from memtab_env import __version__
from memtab_env.errors import MemTabError

#: subcommands implemented in other modules: name -> "module:function(argv)"
EXTERNAL = {
    "play": "memtab_env.agents.play:main",
    "evaluate": "memtab_env.protocol.cli:evaluate_main",
    "tournament": "memtab_env.protocol.cli:tournament_main",
    "leaderboard": "memtab_env.protocol.cli:leaderboard_main",
    "train": "memtab_env.train.run:train_main",
    "study": "memtab_env.study.run:study_main",
    "site": "memtab_env.site.build:site_main",
}


#: what a subcommand needs beyond the core install: checked before it starts working (its
#: ``--help`` needs nothing); ``train`` checks its algorithm's stack itself (torch and
#: Stable-Baselines3 from ``train``, or jax from ``jax`` for ``algo: jax_ppo``)
NEEDS = {
    "evaluate": ("scipy",),
    "tournament": ("scipy", "openskill"),
    "leaderboard": ("scipy",),
    "study": ("jax", "memax", "scipy", "matplotlib"),
}


def missing_extra(cmd: str) -> str | None:
    """The message naming the extra that ``memtab cmd`` needs and lacks, or None."""
    from memtab_env.extras import missing_message

    for module in NEEDS.get(cmd, ()):
        try:
            import_module(module)
        except ModuleNotFoundError as exc:
            return missing_message(exc, f"memtab {cmd}", extra="study" if cmd == "study" else None)
    return None


def simulate_main(argv: Sequence[str]) -> int:
    from memtab_env import agents as agent_lib
    from memtab_env.play import make_raw_env, play_game, win_shares
    from memtab_env.record import write_records

    ap = argparse.ArgumentParser(prog="memtab simulate", description="Play games between agents.")
    ap.add_argument("--game", default="memtab", help="game name or id (default memtab)")
    ap.add_argument("--agents", default="greedy,random",
                    help="comma-separated agent names or model paths, one per seat")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--memory", default="perfect")
    ap.add_argument("--seed", type=int, default=0, help="game i uses seed + i")
    ap.add_argument("--rotate", action="store_true", help="rotate seats every game")
    ap.add_argument("--records", default=None,
                    help="write records: a folder (one .json per game) or a .jsonl file")
    ap.add_argument("--trust-pickle", action="store_true",
                    help="load model files with Stable-Baselines3's unpickling loader (runs code from "
                         "the file); default: as data (weights and plain settings)")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.agents.split(",") if s.strip()]
    if args.records:
        from pathlib import Path

        from memtab_env.protocol.cli import check_writable
        from memtab_env.record import check_records_target

        rec = Path(args.records)
        check_writable(rec if rec.suffix in (".jsonl", ".gz") else rec / "game_000000.json")
        check_records_target(rec)
    extra = {"trust_pickle": True} if args.trust_pickle else {}
    players = [agent_lib.make(n, game=args.game, **(extra if n.endswith(".zip") else {})) for n in names]
    env = make_raw_env(args.game, num_players=len(players), memory=args.memory)
    totals = np.zeros(len(players))
    records = []
    from tqdm import tqdm

    for i in tqdm(range(args.games), desc="games", disable=not sys.stderr.isatty()):
        shift = i % len(players) if args.rotate else 0
        seated = players[shift:] + players[:shift]
        rec = play_game(env, seated, seed=args.seed + i)
        shares = win_shares(rec)
        for seat, share in enumerate(shares):
            totals[(seat + shift) % len(players)] += share
        if args.records:
            rec["agents"] = [names[(s + shift) % len(players)] for s in range(len(players))]
            records.append(rec)
    print(f"{args.games} games of {args.game}, memory={args.memory}"
          f"{', seats rotated' if args.rotate else ''}")
    for name, total in zip(names, totals, strict=True):
        print(f"  {name:<20} win rate {total / args.games:6.1%}")
    if args.records:
        write_records(records, args.records)
        print(f"records written to {args.records}")
    return 0


def replay_main(argv: Sequence[str]) -> int:
    """``memtab replay``: check that record files replay; report on every file."""
    from memtab_env.errors import RecordError
    from memtab_env.record import iter_records, replay

    ap = argparse.ArgumentParser(
        prog="memtab replay",
        description="Check that records replay through the rules engine; every file is reported on, "
                    "a bad one does not stop the others. Records are data: nothing in them is run, "
                    "and a board file they name is refused (records hold their board inline).")
    ap.add_argument("paths", nargs="+", help=".json / .jsonl / .jsonl.gz files or folders of .json files")
    ap.add_argument("--reproduce", type=int, default=0, metavar="N",
                    help="also play the first N records of each file again with the agents they name "
                         "(their 'agents' field: built-in names, or labels given with --agent) and "
                         "report any action those agents do not choose")
    ap.add_argument("--agent", action="append", default=[], metavar="LABEL=NAME_OR_PATH",
                    help="the agent behind a label of the records' 'agents' field (for --reproduce)")
    args = ap.parse_args(argv)
    if args.reproduce < 0:
        ap.error("--reproduce takes a count >= 0")
    mapping = {}
    for item in args.agent:
        label, eq, spec = item.partition("=")
        if not eq or not label or not spec:
            ap.error(f"--agent takes LABEL=NAME_OR_PATH, got {item!r}")
        mapping[label] = spec
    bad_files = good = bad = 0
    for path in args.paths:
        file_bad = 0
        try:
            for i, (where, rec) in enumerate(iter_records(path)):
                try:
                    replay(rec)
                    if i < args.reproduce:
                        from memtab_env.protocol.reproduce import record_players, reproduce_game

                        why = reproduce_game(rec, record_players(rec, mapping, where))
                        if why is not None:
                            raise RecordError(f"not reproduced by the agents it names: {why}")
                    good += 1
                except RecordError as exc:
                    bad += 1
                    file_bad += 1
                    print(f"{where}: record {i}: REJECTED: {exc}")
        except RecordError as exc:
            file_bad += 1
            print(f"{path}: REJECTED: {exc}")
        bad_files += bool(file_bad)
        print(f"{path}: {'ok' if not file_bad else f'{file_bad} problem(s)'}")
    print(f"{good} record(s) replay, {bad} rejected; {bad_files} of {len(args.paths)} file(s) with problems")
    return 1 if bad_files else 0


COMMANDS = {"simulate": simulate_main, "replay": replay_main}


def plain(text: str) -> str:
    """``text`` without reST markup (``literal`` and :role:`target`), for terminals."""
    text = re.sub(r":[a-z]+:`~?([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    return text.replace("``", "")


def main(argv: Sequence[str] | None = None) -> Any:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = sorted([*COMMANDS, *EXTERNAL])
    usage = f"usage: memtab [-h] [--version] {{{','.join(names)}}} ..."
    if not argv:  # argparse's convention for a missing subcommand
        print(f"{usage}\nmemtab: error: a command is required (memtab --help lists them)", file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(f"{usage}\n\n{plain(__doc__ or '')}")
        return 0
    if argv[0] == "--version":
        print(f"memtab-env {__version__}")
        return 0
    cmd, rest = argv[0], argv[1:]
    try:
        if cmd in COMMANDS:
            return COMMANDS[cmd](rest)
        if cmd in EXTERNAL:
            if not {"-h", "--help"} & set(rest) and (message := missing_extra(cmd)) is not None:
                print(message, file=sys.stderr)
                return 2
            module, _, func = EXTERNAL[cmd].partition(":")
            try:
                return getattr(import_module(module), func)(rest)
            except ModuleNotFoundError as exc:
                from memtab_env.extras import extra_for, missing_message

                if extra_for(exc) is None:
                    raise
                print(missing_message(exc, f"memtab {cmd}"), file=sys.stderr)
                return 2
    except MemTabError as exc:
        print(f"memtab {cmd}: error: {exc}", file=sys.stderr)
        return 2
    print(f"memtab: unknown command {cmd!r}; commands: {', '.join(names)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
