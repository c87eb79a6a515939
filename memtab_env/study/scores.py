"""The study's normalised scores: 0 = uniformly random play, 1 = a fixed strong
reference (``solo-turns``: the exact optimum of solo Pelmanism; ``benchmark``: the
benchmark track's strongest agent, from its committed results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memtab_env.study.grid import StudyError


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
    from memtab_env.protocol.results import ResultError, load_result
    from memtab_env.protocol.tracks import TRACKS

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



#: how a run file's final scores were computed (its ``final_scale``)
FINAL_SCALES = {
    "benchmark": "the benchmark's normalised score (memtab evaluate's protocol, every reference "
                 "opponent, the track's anchors)",
    "solo-turns": "turns normalised between random play and the exact optimum",
    "jax-proxy": "the study's JAX proxy (random and greedy only, sampled play): not the benchmark "
                 "track's scale",
}


def final_agent(memory: str, track_id: str) -> dict[str, Any]:
    """The agent keyword arguments with which a cell trained under ``memory`` plays the
    benchmark track ``track_id``, so that it sees what it was trained on:

    - ``{"recall": True}`` for a cell trained under ``perfect`` on a track whose env
      forgets (the perfect-memory reference keeps its own record of what it was shown,
      :class:`memtab_env.observations.recall.PerfectRecall`; without it the reference
      would play blind);
    - ``{"window": k}`` for a cell trained under ``window:k`` on a track under ``none`` or
      ``perfect`` (it keeps a window of the latest reveals,
      :class:`memtab_env.observations.recall.WindowRecall`; without it the cell would play
      with none, or with everything);
    - ``{}`` when the track's env memory is the cell's own.

    A cell whose memory cannot be rebuilt from the track's observations (``decay:p``, or
    a window on a track that forgets otherwise) is refused."""
    from memtab_env.memory import parse_memory
    from memtab_env.protocol.tracks import TRACKS

    track_memory = parse_memory(TRACKS[track_id].options.get("memory", "perfect"))
    cell = parse_memory(memory)
    if cell == track_memory:
        return {}
    if cell.kind == "perfect":
        return {"recall": True}
    if cell.kind == "window" and track_memory.kind in ("none", "perfect"):
        return {"window": int(cell.param)}
    if cell.kind == "none":
        return {}  # never the study's case: a none cell is scored on a none track
    raise StudyError(f"a cell trained under memory {cell} cannot be scored on track {track_id} (memory "
                     f"{track_memory}): its observations can be rebuilt from a track under none or "
                     "perfect only for perfect and window:k")


def benchmark_score(policy: Path, track_id: str, deals: int,
                    agent_kwargs: dict[str, Any] | None = None) -> dict[str, float]:
    """The benchmark's own score of the saved policy ``policy`` on the benchmark track
    ``track_id``: ``memtab evaluate``'s protocol on the track's first ``deals`` deals
    (every seat rotation, every reference opponent, ``expert`` included, the policy played
    as the benchmark plays it, with ``agent_kwargs``: :func:`final_agent`) and
    :meth:`~memtab_env.protocol.tracks.Track.normalised` of its mean win rate. One
    normalised scale per track id: the leaderboard's figure of the same policy, played
    with the same keyword arguments on the same deals, is this one."""
    from memtab_env.protocol import evaluate as ev
    from memtab_env.protocol.tracks import TRACKS

    track = TRACKS[track_id]
    agent = ev.resolve_agent(str(policy), track.game, kwargs=agent_kwargs)
    result, _ = ev.evaluate(track, [agent], policy.stem, deals)
    run = result["runs"][0]
    if run["normalised_score"] is None:
        raise StudyError(f"benchmark track {track_id} has no anchors yet (results/set_anchors.py)")
    return {"score": float(run["normalised_score"]), "win_rate": float(run["overall"]["win_rate"]),
            **{f"win_rate_{o}": float(v["win_rate"]) for o, v in run["opponents"].items()}}
