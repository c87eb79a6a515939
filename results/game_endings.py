"""How an agent's benchmark games end, read from game records: per opponent, its win
rate, the share of games won or lost by a turn that removed two pairs (an instant win),
the flips per game, the never-seen cards each side turned over, and the final scores.

Usage::

    python results/game_endings.py results/memtab-2p-none/search.records.jsonl.gz ...
    python results/game_endings.py --policy OUT/perfect__MLP__s0.zip --recall \\
        --track memtab-2p-none --deals 100

A records file (``memtab evaluate --records``, the ``records`` of a committed result) is
read as untrusted data (:func:`memtab_env.record.read_records`); ``--policy`` plays a saved
policy by the benchmark's protocol first (``--recall``: with a perfect record of what its
observations showed, as the study plays a perfect-memory reference on a forgetting
track). ``--deals N`` keeps the first ``N`` deals of every file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any


def endings(records: Iterable[dict[str, Any]], deals: int | None = None
            ) -> dict[str, dict[str, dict[str, float]]]:
    """``agent -> opponent -> figures`` of benchmark records (the agent sits in seat
    ``benchmark.rotation``, as the protocol deals them): ``games``, ``win`` (sole
    winner), ``instant_win``, ``instant_loss``, ``flips``, ``new_cards`` (the agent's
    flips of a position nobody had turned over before), ``opponent_new_cards``, ``score``,
    ``opponent_score``."""
    from memtab_env.errors import RecordError
    from memtab_env.record import check_record

    games: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for record in records:
        check_record(record)
        bench, agents = record.get("benchmark"), record.get("agents")
        seat = bench.get("rotation") if isinstance(bench, dict) else None
        if not isinstance(agents, list) or len(agents) != record["num_players"] \
                or not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(agents) \
                or not isinstance(bench.get("opponent"), str) or not isinstance(bench.get("deal"), int):
            raise RecordError("not a benchmark record: it needs 'agents' (one per seat) and "
                              "'benchmark' with 'rotation' (the agent's seat), 'opponent' and "
                              "'deal' (memtab evaluate --records)")
        if deals is not None and bench["deal"] >= deals:
            continue
        result = record["result"]
        won = seat in result["winners"]
        seen: set[int] = set()
        new = [0, 0]
        for action in record["actions"]:
            if action["action"] not in seen:
                new[action["player"] != seat] += 1
            seen.add(action["action"])
        others = [s for i, s in enumerate(result["scores"]) if i != seat]
        games[(record["agents"][seat], bench["opponent"])].append({
            "win": float(won and len(result["winners"]) == 1),
            "instant_win": float(bool(result.get("instant_win")) and won),
            "instant_loss": float(bool(result.get("instant_win")) and not won),
            "flips": float(len(record["actions"])), "new_cards": float(new[0]),
            "opponent_new_cards": float(new[1]), "score": float(result["scores"][seat]),
            "opponent_score": float(statistics.mean(others))})
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for (agent, opponent), rows in sorted(games.items()):
        out[agent][opponent] = {"games": float(len(rows)),
                                **{k: statistics.mean(r[k] for r in rows) for k in rows[0]}}
    return dict(out)


def table(figures: dict[str, dict[str, dict[str, float]]]) -> str:
    """A Markdown table of :func:`endings`."""
    lines = ["| agent | opponent | games | win rate | instant wins | instant losses | flips "
             "| new cards shown | by the opponent | score | opponent's score |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for agent, per in figures.items():
        for opponent, f in per.items():
            lines.append(f"| `{agent}` | `{opponent}` | {f['games']:.0f} | {f['win']:.2f} "
                         f"| {f['instant_win']:.2f} | {f['instant_loss']:.2f} | {f['flips']:.1f} "
                         f"| {f['new_cards']:.1f} | {f['opponent_new_cards']:.1f} "
                         f"| {f['score']:+.2f} | {f['opponent_score']:+.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="*", help="records files (.jsonl or .jsonl.gz)")
    parser.add_argument("--policy", action="append", default=[],
                        help="a saved policy to play on --track first (repeatable)")
    parser.add_argument("--recall", action="store_true",
                        help="play --policy with a perfect record of what it was shown")
    parser.add_argument("--track", default="memtab-2p-none", help="the benchmark track of --policy")
    parser.add_argument("--deals", type=int, default=None, help="the first N deals only")
    args = parser.parse_args(argv)
    if not args.records and not args.policy:
        parser.error("name a records file or a --policy")
    if args.deals is not None and args.deals < 1:
        parser.error(f"--deals must be a positive integer, got {args.deals}")
    from memtab_env.record import read_records

    records: list[dict[str, Any]] = []
    for path in args.records:
        records.extend(read_records(path))
    if args.policy:
        from pathlib import Path

        from memtab_env.protocol import evaluate as ev
        from memtab_env.protocol.tracks import TRACKS

        if args.track not in TRACKS:
            parser.error(f"no benchmark track {args.track!r}; the tracks are {', '.join(TRACKS)}")
        track = TRACKS[args.track]
        for policy in args.policy:
            agent = ev.resolve_agent(policy, track.game, kwargs={"recall": True} if args.recall else None)
            records.extend(ev.evaluate(track, [agent], Path(policy).stem, args.deals)[1])
    print(table(endings(records, args.deals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
