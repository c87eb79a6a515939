"""The track table: every track is playable, its seeds are reserved, and BENCHMARK.md
publishes what the code uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtab_env import agents
from memtab_env.play import make_raw_env
from memtab_env.protocol.tracks import EVAL_SEED_START, EVAL_SEED_STOP, TRACKS, is_reserved_seed

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("track", TRACKS.values(), ids=list(TRACKS))
def test_track_is_playable(track):
    env = make_raw_env(track.game, **track.options)
    assert len(env.possible_agents) == track.num_players
    names = agents.available(track.game)
    assert set(track.opponents) <= set(names) and track.strongest in names
    assert track.env_id.endswith(tuple(f"-v{i}" for i in range(10)))


@pytest.mark.parametrize("track", TRACKS.values(), ids=list(TRACKS))
def test_track_seeds_are_reserved(track):
    seeds = track.seeds()
    assert len(seeds) == track.deals == len(set(seeds))
    assert all(is_reserved_seed(s) for s in seeds)
    assert seeds[0] == EVAL_SEED_START


def test_reserved_range_edges():
    assert not is_reserved_seed(EVAL_SEED_START - 1)
    assert is_reserved_seed(EVAL_SEED_START) and is_reserved_seed(EVAL_SEED_STOP - 1)
    assert not is_reserved_seed(EVAL_SEED_STOP)


@pytest.mark.parametrize("track", TRACKS.values(), ids=list(TRACKS))
def test_anchors_order(track):
    if track.anchors:
        assert track.anchors["random"] < track.anchors[track.strongest]
        assert track.normalised(track.anchors["random"]) == 0.0
        assert track.normalised(track.anchors[track.strongest]) == 1.0


def test_benchmark_md_publishes_the_track_table():
    text = (ROOT / "BENCHMARK.md").read_text()
    assert f"{EVAL_SEED_START:_}".replace("_", ",") in text or str(EVAL_SEED_START) in text
    assert str(EVAL_SEED_STOP) in text or f"{EVAL_SEED_STOP:_}".replace("_", ",") in text
    for t in TRACKS.values():
        row = next((line for line in text.splitlines() if line.startswith(f"| `{t.id}` |")), None)
        assert row is not None, f"BENCHMARK.md has no row for track {t.id}"
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == f"v{t.version}"
        assert cells[2] == f"`{t.env_id}`"
        assert cells[3] == f"`{json.dumps(dict(t.options))}`"
        assert cells[4] == ", ".join(f"`{o}`" for o in t.opponents)
        assert cells[5] == str(t.deals)
        assert cells[6] == f"`{t.strongest}`"
        assert cells[7] == f"{t.anchors['random']:.4f} / {t.anchors[t.strongest]:.4f}"
