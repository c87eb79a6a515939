"""Where a shipped policy of the memory study comes from: its eval file names every stage
that trained it, and its leaderboard row says it is the best of its cell's seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memtab_env.agents import shipped

from memtab_env.protocol import leaderboard
from memtab_env.study import aggregate, load_run

ROOT = Path(__file__).resolve().parents[1]


def _run(track: str, scores: list[float]) -> dict:
    return {"track": track, "memory": "none", "model": "GRU", "seeds": list(range(len(scores))),
            "final": [{"score": s} for s in scores], "curves": [[] for _ in scores]}


def test_a_shipped_best_seed_is_labelled_with_its_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shipped, "STUDY_SEEDS", {"a": ("bench", "cell", "none", "GRU", 2),
                                                 "b": ("bench", "other", "none", "GRU", 0)})
    runs = [{**_run("cell", [0.1, 0.5, 0.9, 0.3]), "final_scale": "benchmark"}, _run("other", [0.2, 0.8])]
    notes = leaderboard.study_seed_notes(runs)
    cell = aggregate(runs)[("cell", "none", "GRU")]
    assert notes[("a", "bench")] == (f"best of 4 seeds; cell IQM {cell['iqm']:.2f} "
                                     f"[{cell['lo']:.2f}, {cell['hi']:.2f}]")
    assert notes[("b", "bench")].startswith("seed 0 of 2; cell IQM ")  # not the best seed
    assert notes[("b", "bench")].endswith(" on the study's JAX proxy")  # a run file of the old scale

    def result(spec: str, track: str) -> dict:
        return {"agent": {"runs": [{"kind": "builtin", "spec": spec}]}, "track": {"id": track}}

    assert leaderboard._note(result("a", "bench"), notes) == f" ({notes[('a', 'bench')]})"
    assert leaderboard._note(result("a", "elsewhere"), notes) == ""  # only on its cell's track
    assert leaderboard._note(result("c", "bench"), notes) == ""


def test_the_shipped_study_policy_names_every_stage_that_trained_it() -> None:
    """Each evaluation of ``gru-memtab-none`` (``gru_memtab_none_eval.json``, and the one
    against ``search``): one stage per study track of the chain of follow-ups that ends at
    the shipped seed's cell, each with that run file's PPO config at the shipped seed, in
    training order, the steps adding up."""
    name = "gru-memtab-none"
    scored_on, track, memory, model, seed = shipped.STUDY_SEEDS[name]
    chain = []
    while track:
        run = load_run(ROOT / "results" / "study" / track / f"{memory}__{model}.json")
        chain.append((track, run))
        track = run.get("init", {}).get("track") if run.get("init") else None
    chain.reverse()
    reports = sorted(shipped.POLICY_DIR.glob("gru_memtab_none*_eval.json"))
    assert [p.name for p in reports] == ["gru_memtab_none_eval.json", "gru_memtab_none_search_eval.json"]
    for path in reports:
        config = json.loads(path.read_text())["config"]
        assert config["exp_name"] == "study" and config["seed"] == seed
        assert config["command"] == ("memtab study --config configs/study.yaml --tracks "
                                     + " ".join(t for t, _ in chain))
        stages = config["stages"]
        assert [s["track"] for s in stages] == [t for t, _ in chain]
        done = 0
        for stage, (_, run) in zip(stages, chain, strict=True):
            assert stage["ppo"] == {**run["config"], "seed": seed}
            assert stage["timesteps_after"] == run["timesteps"] == done + stage["timesteps"]
            done = run["timesteps"]


def test_an_evaluation_of_a_shipped_study_seed_records_its_stages(tmp_path: Path) -> None:
    """``train.py --evaluate`` of the shipped study seed (or a copy of its bytes) records
    the stages in its eval file, not the config of ``<name>.yaml``; any other model keeps
    its own config."""
    pytest.importorskip("jax")
    from memtab_env.train.run import main

    shipped_zip = shipped.shipped_path("gru-memtab-none")
    stages = json.loads((shipped.POLICY_DIR / "gru_memtab_none_eval.json").read_text())["config"]
    assert shipped.study_seed_config(shipped_zip) == stages
    copy = tmp_path / "copy.zip"
    copy.write_bytes(shipped_zip.read_bytes())
    assert shipped.study_seed_config(copy) == stages
    assert shipped.study_seed_config(shipped.shipped_path("ppo-memtab")) is None
    out = tmp_path / "eval.json"
    main(["--evaluate", str(shipped_zip), "--eval-opponents", "[random]", "--eval-games", "2",
          "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["config"] == stages and report["results"]["random"]["games"] == 2
