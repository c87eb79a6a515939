"""``memtab evaluate``, ``memtab tournament`` and ``memtab leaderboard`` (``BENCHMARK.md``).

Each ``*_main(argv)`` parses its arguments and returns an exit status: 0 on success, 1
when a check fails (a rejected result), 2 on a usage error, 130 when interrupted (files
are written atomically, so an interrupted command leaves no half-written file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memtab_env import atomic
from memtab_env.errors import InvalidOptionError
from memtab_env.protocol.backends import BACKENDS, AgentSpec, make_backend
from memtab_env.protocol.tracks import TRACKS, get_track


def _console() -> Any:
    from rich.console import Console

    # a terminal gets its own width; a pipe or file gets lines wide enough for the tables
    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def _rate(f: dict[str, Any]) -> str:
    lo, hi = f["win_rate_ci"]
    return f"{100 * f['win_rate']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def _diff(f: dict[str, Any]) -> str:
    ci = f["score_diff_ci"]
    return f"{f['score_diff']:+.2f}" + ("" if ci is None else f" [{ci[0]:+.2f}, {ci[1]:+.2f}]")


def _bar(total: int, desc: str, disable: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", disable=disable or not sys.stderr.isatty())


def _backend_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--backend", choices=BACKENDS, default="inprocess",
                    help="where games are played (default inprocess; results never depend on it)")
    ap.add_argument("--workers", type=int, default=None,
                    help="processes (multiprocessing) or CPUs of a new local Ray cluster")
    ap.add_argument("--ray-address", default=None,
                    help="Ray cluster to join (e.g. auto, ray://host:10001); default RAY_ADDRESS or a "
                         "new local cluster")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")


def _tracks_text() -> str:
    rows = [f"  {t.id:<16} {t.description} ({t.env_id} {json.dumps(dict(t.options))}; opponents "
            f"{', '.join(t.opponents)}; {t.deals} deals)" for t in TRACKS.values()]
    return "tracks:\n" + "\n".join(rows)


def _kwargs(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidOptionError(
            f"--agent-kwargs must be a JSON object, e.g. '{{\"simulations\": 16}}': {exc}"
        ) from exc
    if not isinstance(value, dict):
        raise InvalidOptionError("--agent-kwargs must be a JSON object")
    return value


def evaluate_main(argv: Sequence[str]) -> int:
    """``memtab evaluate``: an agent on a track against its reference opponents."""
    from memtab_env.protocol.backends import one_thread_per_worker

    one_thread_per_worker()  # this process plays games too (the in-process backend)
    from memtab_env.protocol.evaluate import build_result, evaluate, resolve_agent, total_games
    from memtab_env.protocol.results import read_record_file, save_result, write_record_file

    ap = argparse.ArgumentParser(
        prog="memtab evaluate",
        description="Play a track's evaluation deals against its reference opponents (every deal once "
                    "per seat rotation) and report win rates with 95% intervals. A saved model is "
                    "loaded as data (weights and plain settings, nothing unpickled) unless "
                    "--trust-pickle is given.",
        epilog=_tracks_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", action="append", required=True, metavar="NAME_OR_PATH",
                    help="built-in agent name or saved model (.zip); repeat for several training runs "
                         "of one method (IQM over runs)")
    ap.add_argument("--track", required=True, help=f"one of {', '.join(TRACKS)}")
    ap.add_argument("--games", type=int, default=None, metavar="N",
                    help="number of deals (default: the track's protocol); each is played once per seat "
                         "against every opponent")
    ap.add_argument("--name", default=None, help="label of the agent in tables and the leaderboard")
    ap.add_argument("--agent-kwargs", default=None, metavar="JSON",
                    help="keyword arguments for the agent, e.g. '{\"simulations\": 16}'")
    ap.add_argument("--out", default=None, metavar="FILE", help="write the result JSON here")
    ap.add_argument("--records", default=None, metavar="PATH",
                    help="write one record per game: a .jsonl.gz or .jsonl file, or a folder")
    ap.add_argument("--trust-pickle", action="store_true",
                    help="load model files with Stable-Baselines3's own loader, which unpickles (runs "
                         "code from the file); default: rebuild the policy from its weights and plain "
                         "settings, and refuse a file that needs unpickling")
    ap.add_argument("--from-records", default=None, metavar="PATH",
                    help="play nothing: recompute the result from the records of an earlier evaluation "
                         "of the same agent(s) (e.g. after the track's anchors changed); the result "
                         "points to records only when --records is given too")
    _backend_args(ap)
    args = ap.parse_args(list(argv))
    track = get_track(args.track)
    deals = track.deals if args.games is None else args.games
    track.seeds(deals)  # checks the range
    if args.out:
        check_writable(Path(args.out))
    if args.records:
        from memtab_env.record import check_records_target

        rec = Path(args.records)
        check_writable(rec if rec.name.endswith((".jsonl", ".jsonl.gz")) else rec / "game_000000.json")
        check_records_target(rec)
    kwargs = _kwargs(args.agent_kwargs)
    if len(args.agent) > 1 and not args.name:
        raise InvalidOptionError("several --agent runs need --name (the label of the method)")
    from memtab_env.protocol.results import label_problem

    if args.name is not None and (why := label_problem(args.name)) is not None:
        raise InvalidOptionError(f"--name: {why}")
    agents = [resolve_agent(a, track.game, kwargs, args.name, build=not args.from_records,
                            trust_pickle=args.trust_pickle) for a in args.agent]
    label = args.name or agents[0][0].name
    if (why := label_problem(label)) is not None:
        raise InvalidOptionError(f"the label of {args.agent[0]!r:.80}: {why}; give --name")
    console = _console()
    how = (f"from the records in {args.from_records}" if args.from_records
           else f"backend {args.backend}")
    console.print(f"[bold]{label}[/bold] on track [bold]{track.key}[/bold] ({track.description}): "
                  f"{deals} deals x {track.num_players} seat rotations x {len(track.opponents)} opponents"
                  f"{f' x {len(agents)} runs' if len(agents) > 1 else ''} = "
                  f"{total_games(track, len(agents), deals)} games, {how}")
    if deals < track.deals:
        console.print(f"[yellow]note:[/yellow] {deals} deals, fewer than the protocol's {track.deals}: "
                      "valid, but the leaderboard does not list it")
    backend = make_backend("inprocess" if args.from_records else args.backend, args.workers,
                           args.ray_address)
    try:
        if args.from_records:
            records = list(read_record_file(args.from_records))
            result = build_result(track, deals, label, [d for _, d in agents], records)
        else:
            with _bar(total_games(track, len(agents), deals), "games", args.no_progress) as bar:
                result, records = evaluate(track, agents, label, deals, backend,
                                           progress=lambda _i, n: bar.update(n))
        if args.records:
            write_record_file(records, args.records)
        if args.out and args.records:
            result["records"] = os.path.relpath(Path(args.records).resolve(),
                                                Path(args.out).resolve().parent).replace(os.sep, "/")
        if args.out:
            save_result(args.out, result)
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]: files are written whole or not at all")
        return 130
    finally:
        backend.close()
    _print_result(console, result)
    if args.records:
        console.print(f"records: {args.records} ({len(records)} games)")
    if args.out:
        console.print(f"result: {args.out}")
    return 0


def _print_result(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    track = get_track(result["track"]["id"])
    for i, run in enumerate(result["runs"]):
        spec = result["agent"]["runs"][i]["spec"]
        title = f"{result['agent']['label']} on {track.key}"
        if len(result["runs"]) > 1:
            title += f", run {i} ({spec})"
        table = Table(title=title)
        for col in ("opponent", "games", "win rate % [95% CI]", "won/shared/lost", "by seat %",
                    "score diff [95% CI]"):
            table.add_column(col, justify="left" if col == "opponent" else "right")
        for opp, f in run["opponents"].items():
            table.add_row(opp, str(f["games"]), _rate(f), f"{f['wins']}/{f['shared_wins']}/{f['losses']}",
                          " ".join(f"{100 * s:.0f}" for s in f["win_rate_by_seat"]), _diff(f))
        f = run["overall"]
        table.add_row("[bold]all[/bold]", str(f["games"]), _rate(f), "", "", _diff(f))
        console.print(table)
        if run["normalised_score"] is not None:
            lo, hi = run["normalised_ci"]
            console.print(f"normalised score {run['normalised_score']:.3f} [{lo:.3f}, {hi:.3f}] "
                          f"(0 = random, 1 = {track.strongest})")
    s = result["summary"]
    if s["normalised_iqm"] is not None:
        lo, hi = s["normalised_iqm_ci"]
        console.print(f"over {s['runs']} runs: IQM normalised score {s['normalised_iqm']:.3f} "
                      f"[{lo:.3f}, {hi:.3f}] (stratified bootstrap, 95%)")


def _parse_agents(text: str, game: str, trust_pickle: bool = False) -> list[AgentSpec]:
    from memtab_env.protocol.evaluate import resolve_agent

    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        label, eq, spec = item.partition("=")
        if not eq:
            label, spec = "", item
        out.append(resolve_agent(spec, game, label=label or None, trust_pickle=trust_pickle)[0])
    return out


def tournament_main(argv: Sequence[str]) -> int:
    """``memtab tournament``: round robin with seat rotation, openskill ratings, payoff matrix."""
    from memtab_env.protocol.backends import one_thread_per_worker

    one_thread_per_worker()
    from rich.table import Table

    from memtab_env.protocol.tournament import plot, tournament, tournament_jobs

    ap = argparse.ArgumentParser(
        prog="memtab tournament",
        description="Round robin on a track's evaluation deals with seat rotation; openskill "
                    "(Plackett-Luce) ratings, the pairwise payoff matrix and a plot.",
        epilog=_tracks_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", required=True,
                    help="comma-separated agent names or model paths (LABEL=PATH to name a model)")
    ap.add_argument("--track", required=True, help=f"one of {', '.join(TRACKS)}")
    ap.add_argument("--games", type=int, default=50, metavar="N",
                    help="deals per table (default 50), each played once per seat rotation")
    ap.add_argument("--out", default=None, metavar="FILE", help="write the summary JSON here")
    ap.add_argument("--trust-pickle", action="store_true",
                    help="load model files with Stable-Baselines3's unpickling loader (runs code from "
                         "the file); default: as data")
    ap.add_argument("--plot", default=None, metavar="FILE.png",
                    help="write the plot here (default: next to --out; without --out, no plot); "
                         "'none' for no plot. Nothing is written unless --out or --plot asks")
    _backend_args(ap)
    args = ap.parse_args(list(argv))
    track = get_track(args.track)
    track.seeds(args.games)
    if args.out:
        check_writable(Path(args.out))
    agents = _parse_agents(args.agents, track.game, args.trust_pickle)
    console = _console()
    backend = make_backend(args.backend, args.workers, args.ray_address)
    jobs = tournament_jobs(track, agents, args.games, args.games)
    total = sum(len(j.deals) * len(j.rotations) for j in jobs)
    console.print(f"tournament on [bold]{track.key}[/bold] ({track.description}): {len(agents)} agents, "
                  f"{total} games, backend {args.backend}")
    try:
        with _bar(total, "games", args.no_progress) as bar:
            summary = tournament(track, agents, args.games, backend, progress=lambda _i, n: bar.update(n))
        if args.out:
            atomic.write_json(args.out, summary)
        plot_path = args.plot or (str(Path(args.out).with_suffix(".png")) if args.out else None)
        if plot_path not in (None, "none"):
            plot(summary, plot_path)
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]")
        return 130
    finally:
        backend.close()
    table = Table(title=f"openskill Plackett-Luce ratings, {track.key}")
    for col in ("#", "agent", "mu", "sigma", "mu - 3 sigma"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for rank, name in enumerate(summary["order"], 1):
        r = summary["ratings"][name]
        table.add_row(str(rank), name, f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}")
    console.print(table)
    names = [a["label"] for a in summary["agents"]]
    pay = Table(title="payoff: row vs column", caption="1 = row won, 1/2 = tie, 0 = column won")
    pay.add_column("")
    for n in names:
        pay.add_column(n, justify="right")
    for n, row in zip(names, summary["payoff"], strict=True):
        pay.add_row(n, *["–" if v is None else f"{v:.3f}" for v in row])
    console.print(pay)
    if args.out:
        console.print(f"summary: {args.out}")
    if plot_path != "none":
        console.print(f"plot: {plot_path}")
    return 0


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0, got {value}")
    return value


def check_writable(path: Path) -> None:
    """Fail now (:class:`InvalidOptionError`) if ``path`` cannot be written: before any
    work, not after it."""
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if path.is_dir():
        raise InvalidOptionError(f"{path}: is a folder; give the path of a file to write")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK) or \
            (path.exists() and not os.access(path, os.W_OK)):
        raise InvalidOptionError(f"{path}: cannot be written (no write permission in {probe})")


def leaderboard_main(argv: Sequence[str]) -> int:
    """``memtab leaderboard``: rebuild LEADERBOARD.md from the result files, replaying records."""
    from memtab_env.protocol.leaderboard import build

    ap = argparse.ArgumentParser(
        prog="memtab leaderboard",
        description="Rebuild the leaderboard from result files. Results with records are audited: "
                    "every record is replayed and must give the result's figures. Any rejected "
                    "result fails the command and nothing is written (unless --skip-invalid).")
    ap.add_argument("--results", default="results", help="folder of result files (default results/)")
    ap.add_argument("--out", default="LEADERBOARD.md", help="page to write (default LEADERBOARD.md)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; fail if the page is not what the results give")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="leave rejected results out and write the page anyway (still exits 1)")
    ap.add_argument("--reproduce", type=_count, default=0, metavar="N",
                    help="also re-play N recorded games per result (chosen at random) with the agent "
                         "the result names and refuse the result if it does not choose the recorded "
                         "actions (default 0)")
    ap.add_argument("--reproduce-seed", type=int, default=None, metavar="S",
                    help="seed of the choice of games to re-play (default: fresh, printed)")
    args = ap.parse_args(list(argv))
    console = _console()
    seed = args.reproduce_seed
    if args.reproduce:
        import secrets

        seed = secrets.randbits(32) if seed is None else seed
        console.print(f"re-playing {args.reproduce} recorded game(s) per result (--reproduce-seed {seed})")
    out = Path(args.out)
    if not args.check:
        check_writable(out)
    rejected: list[tuple[Path, Exception]] = []

    def on_error(path: Path, exc: Exception) -> None:
        rejected.append((path, exc))
        console.print("[red]REJECTED[/red] ", end="", soft_wrap=True)
        console.print(str(exc), soft_wrap=True, markup=False)

    text, entries = build(args.results, args.out, on_error, args.reproduce, seed)
    for e in entries:
        audit = f"audited: {e.audited_games} games replayed" if e.audited_games else "no records"
        if args.reproduce and e.audited_games:
            audit += f", {min(args.reproduce, e.audited_games)} reproduced by the named agent"
        console.print(f"accepted {e.path} ({e.label} on {e.result['track']['id']}; {audit})",
                      markup=False)
    if rejected and not args.skip_invalid:
        console.print(f"[red]{len(rejected)} result(s) rejected[/red]: {out} not written")
        return 1
    if args.check:
        same = out.is_file() and out.read_text() == text
        console.print(f"{out} is {'up to date' if same else '[red]out of date[/red]'}")
        return 0 if same and not rejected else 1
    atomic.write_text(out, text)
    console.print(f"wrote {out} ({len(entries)} results)")
    return 1 if rejected else 0


__all__ = ["evaluate_main", "leaderboard_main", "tournament_main"]
