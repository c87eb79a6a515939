"""The benchmark protocol (``BENCHMARK.md``): tracks, evaluation, tournaments with
ratings, the leaderboard, and the backends that play the games.

Command line: ``memtab evaluate``, ``memtab tournament``, ``memtab leaderboard``
(:mod:`memtab_env.protocol.cli`).
"""

from __future__ import annotations

from memtab_env.protocol.tracks import (
    EVAL_SEED_START,
    EVAL_SEED_STOP,
    TRACKS,
    Track,
    get_track,
    is_reserved_seed,
)

__all__ = ["EVAL_SEED_START", "EVAL_SEED_STOP", "TRACKS", "Track", "get_track", "is_reserved_seed"]
