"""The benchmark tracks: which game, which options, which opponents, which deals.

A *track* fixes everything a published number depends on except the agent: the game and
its versioned env id, the env options, the reference opponents, the evaluation deals and
the duplicate format (``BENCHMARK.md`` is the protocol in prose; this table is the
protocol in code, and ``tests/test_benchmark_tracks.py`` checks that the two agree).

Evaluation deals
----------------
Deal ``i`` of every track is dealt from seed ``EVAL_SEED_START + i``. The whole range
``[EVAL_SEED_START, EVAL_SEED_STOP)`` is reserved for evaluation: training must never
reset an env with a seed in it (:func:`is_reserved_seed`). A track's protocol uses its
first ``deals`` seeds; ``memtab evaluate --games N`` may use more (the first ``N``), which
keeps the result comparable (same deals, a narrower interval).

Duplicate format
----------------
Against reference opponent ``o``, the agent sits at a table with ``num_players - 1``
copies of ``o``; every deal is played ``num_players`` times, the agent in seat ``r`` in
rotation ``r`` (seat 0 moves first), so every seat advantage cancels over a deal.

Normalised score
----------------
``(W - W_random) / (W_strongest - W_random)``, where ``W`` is the agent's win rate
averaged over the track's opponents (equal weight each) and the two anchors are the
same figure for ``random`` and for the track's strongest reference agent, measured by
this protocol on the track's deals (committed under ``results/``). So ``random`` scores
0 and the strongest reference agent 1.

Versions
--------
``version`` changes whenever anything that moves a number changes: options, opponents,
deals, anchors, the behaviour of a reference agent, or the evaluation's streams (the
derivation of deal and agent seeds: ``tests/golden/evaluation.json`` holds the figures
of the built-in agents, ``docs/versioning.md``). Result files name the track and
its version; a result of another version is rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memtab_env.errors import InvalidOptionError
from memtab_env.registry import game_spec

#: first seed of the reserved evaluation range; deal ``i`` uses ``EVAL_SEED_START + i``
EVAL_SEED_START = 1_000_000_000
#: end (exclusive) of the reserved evaluation range: training must not use these seeds
EVAL_SEED_STOP = 1_001_000_000


def is_reserved_seed(seed: int) -> bool:
    """True if ``seed`` lies in the evaluation range, which training must not use."""
    return EVAL_SEED_START <= int(seed) < EVAL_SEED_STOP


@dataclass(frozen=True)
class Track:
    """One benchmark track.

    Attributes:
        id: short name used on the command line and in result files (``"memtab-2p"``).
        version: protocol version of the track (see the module docstring).
        game: game name in :data:`memtab_env.registry.GAMES`.
        options: env options (``memory`` and the game's own options, ``num_players``
            included), exactly as passed to the env.
        opponents: reference opponents, built-in agent names of ``game``.
        deals: number of evaluation deals of the protocol (the first ``deals`` seeds).
        strongest: the strongest reference agent (normalised score 1).
        anchors: mean win rate against ``opponents`` of ``"random"`` and of ``strongest``
            on the protocol's deals (the normalised score's 0 and 1); empty until measured.
        description: one line for tables.
        first_seed: seed of deal 0. Every benchmark track deals from the reserved range
            (the default); a training run's own final evaluation builds a track of its
            config with its ``eval_seed`` (:mod:`memtab_env.train.evaluation`).
    """

    id: str
    version: int
    game: str
    options: Mapping[str, Any]
    opponents: tuple[str, ...]
    deals: int
    strongest: str
    anchors: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    first_seed: int = EVAL_SEED_START

    @property
    def key(self) -> str:
        """``id/vVERSION``: what a result file names."""
        return f"{self.id}/v{self.version}"

    @property
    def env_id(self) -> str:
        """The versioned Gymnasium id of the track's game (``MemTab-v0``)."""
        return game_spec(self.game).env_id

    @property
    def num_players(self) -> int:
        return int(self.options["num_players"])

    def seeds(self, deals: int | None = None) -> list[int]:
        """The seeds of the first ``deals`` evaluation deals (default: the protocol's)."""
        n = self.deals if deals is None else int(deals)
        if not 1 <= n <= EVAL_SEED_STOP - EVAL_SEED_START:
            raise InvalidOptionError(
                f"number of deals must be 1 .. {EVAL_SEED_STOP - EVAL_SEED_START}, got {n}"
            )
        return list(range(self.first_seed, self.first_seed + n))

    def normalised(self, win_rate: float) -> float | None:
        """The normalised score of a mean win rate, or None before the anchors exist."""
        if "random" not in self.anchors or self.strongest not in self.anchors:
            return None
        lo, hi = self.anchors["random"], self.anchors[self.strongest]
        return (win_rate - lo) / (hi - lo)

    def describe(self) -> dict[str, Any]:
        """The track as JSON (stored in result files)."""
        return {
            "id": self.id,
            "version": self.version,
            "game": self.game,
            "env_id": self.env_id,
            "options": dict(self.options),
            "opponents": list(self.opponents),
            "deals": self.deals,
            "strongest": self.strongest,
            "anchors": dict(self.anchors),
        }


#: every track, in the order the leaderboard lists them
TRACKS: dict[str, Track] = {
    t.id: t
    for t in (
        Track(
            id="memtab-2p",
            version=1,
            game="memtab",
            options={"num_players": 2, "memory": "perfect"},
            opponents=("random", "greedy", "expert"),
            deals=200,
            strongest="search",
            anchors={"random": 0.1708333333333333, "search": 0.7375},
            description="MemTab, 2 players, perfect memory",
        ),
        Track(
            id="memtab-2p-none",
            version=1,
            game="memtab",
            options={"num_players": 2, "memory": "none"},
            opponents=("random", "greedy", "expert"),
            deals=200,
            strongest="search",
            anchors={"random": 0.1708333333333333, "search": 0.7375},
            description="MemTab, 2 players, memory none (the agent must remember)",
        ),
        Track(
            id="memtab-4p",
            version=1,
            game="memtab",
            options={"num_players": 4, "memory": "perfect"},
            opponents=("random", "greedy", "expert"),
            deals=100,
            strongest="search",
            anchors={"random": 0.0961111111111111, "search": 0.52125},
            description="MemTab, 4 players, perfect memory",
        ),
        Track(
            id="pelmanism-2p",
            version=1,
            game="pelmanism",
            options={"num_players": 2, "memory": "perfect", "deck": "standard"},
            # not "nomemory": it flips blindly, exactly as "random" does (agents.pelmanism_agents)
            opponents=("random", "greedy"),
            deals=200,
            strongest="greedy",
            anchors={"random": 0.25, "greedy": 0.75},
            description="Pelmanism, 52-card standard deck, 2 players, perfect memory",
        ),
        Track(
            id="pelmanism-pairs-2p",
            version=1,
            game="pelmanism",
            # pairs, so that the exact two-player optimum plays; the max_turns house rule
            # ends a game where both players pass for ever (two optimal players, nearly
            # always) scored as it stands, as the optimum's values count it
            options={"num_players": 2, "memory": "perfect", "deck": "pairs:12", "max_turns": 300},
            opponents=("random", "greedy", "optimal"),
            deals=200,
            strongest="optimal",
            anchors={"random": 0.16708333333333336, "optimal": 0.7141666666666666},
            description="Pelmanism, 12 pairs, 2 players, perfect memory, 1 = the exact optimum",
        ),
        Track(
            id="board-2p",
            version=1,
            game="memory_board",
            options={"num_players": 2, "memory": "perfect"},
            opponents=("random", "greedy"),
            deals=100,
            strongest="greedy",
            anchors={"random": 0.25, "greedy": 0.75},
            description="Memory: The Board Game, default board, 2 players, perfect memory",
        ),
    )
}


def get_track(track_id: str) -> Track:
    """The track ``track_id`` (``"memtab-2p"``; ``"memtab-2p/v1"`` also checks the version)."""
    name, _, version = str(track_id).partition("/")
    if name not in TRACKS:
        raise InvalidOptionError(f"unknown track {track_id!r}; tracks: {list(TRACKS)}")
    track = TRACKS[name]
    if version and version != f"v{track.version}":
        raise InvalidOptionError(
            f"track {name!r} is at version v{track.version} in this package, not {version!r}"
        )
    return track
