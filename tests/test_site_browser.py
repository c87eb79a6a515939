"""The static site in a real headless browser (Debian's Chromium driven by Playwright; the
tests skip where either is missing): every accepted result on the index, the study's
figures drawn, and the record viewer's board equal to the Python engines' replay at every
flip of games of each game type (:func:`memtab_env.site.board.viewer_frames`)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from memtab_env.site.browser import find_chromium

pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (the dev extra)")
if find_chromium() is None:
    pytest.skip("no Chromium installed (apt-get install chromium)", allow_module_level=True)

from memtab_env import cli  # noqa: E402
from memtab_env.record import read_records  # noqa: E402
from memtab_env.site import build_site  # noqa: E402
from memtab_env.site.board import viewer_frames  # noqa: E402
from memtab_env.site.browser import open_browser, serve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: records the tests make with `memtab simulate`: (file, game, agents, memory, games)
SIMULATED = [
    ("memtab3.jsonl", "memtab", "greedy,random,greedy", "none", 3),
    ("pelmanism.jsonl.gz", "pelmanism", "greedy,random", "window:4", 3),
    ("board.jsonl", "memory_board", "greedy,random", "perfect", 3),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    report = build_site(ROOT / "results", out)
    extra = out / "extra"
    for name, game, agents, memory, games in SIMULATED:
        assert cli.main(["simulate", "--game", game, "--agents", agents, "--memory", memory, "--games",
                         str(games), "--seed", "11", "--records", str(extra / name)]) == 0
    return out, report


@pytest.fixture(scope="module")
def server(site):
    with serve(site[0]) as url:
        yield url


@pytest.fixture(scope="module")
def page():
    with open_browser() as ctx:
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.errors = errors
        yield pg
        assert not errors, errors


def test_index_lists_every_accepted_result(site, page):
    out, report = site
    assert report.entries and not report.refused
    page.goto((out / "index.html").as_uri())
    for e in report.entries:
        row = page.locator(f'section[data-track="{e.result["track"]["id"]}"] tr[data-label="{e.label}"]')
        assert row.count() == 1, (e.result["track"]["id"], e.label)
        assert e.label in row.inner_text()
        games = row.locator("a", has_text="games")
        assert games.count() == (1 if e.result["records"] else 0)
    shown = page.locator("tr[data-label]").count()
    assert shown == len(report.entries)


def test_tables_sort_by_a_clicked_column(site, page):
    page.goto((site[0] / "index.html").as_uri())
    section = page.locator('section[data-track="memtab-2p"]')
    head = section.locator("th", has_text="score diff")
    column = [h.inner_text() for h in section.locator("th").all()].index("score diff")

    def diffs():
        return [float(r.locator("td").nth(column).inner_text()) for r in section.locator("tbody tr").all()]

    head.click()
    assert diffs() == sorted(diffs(), reverse=True)
    head.click()
    assert diffs() == sorted(diffs())


def test_agent_page_shows_config_evaluation_and_every_track(site, page):
    out, report = site
    page.goto((out / "agent.html").as_uri() + "?agent=ppo-memtab")
    text = page.locator("main").text_content()  # the config sits in a closed <details>
    assert "agents/policies/ppo_memtab.yaml" in text and "total_timesteps" in text
    assert "Shipped evaluation" in text
    tracks = {e.result["track"]["id"] for e in report.entries if e.label == "ppo-memtab"}
    assert {r.get_attribute("data-track") for r in page.locator("tr[data-track]").all()} == tracks
    page.goto((out / "agent.html").as_uri() + "?agent=expert")
    assert "class ExpertAgent" in page.locator("details pre").text_content()


def test_study_figures_render_one_curve_per_cell(site, page):
    out = site[0]
    data = json.loads((out / "data" / "study.json").read_text())
    cells = data["cells"]
    assert {c["study"] for c in cells} == {"grid", "grid-pelmanism", "study"}
    page.goto((out / "study.html").as_uri())
    assert page.locator("#track").input_value() == cells[0]["track"]  # the MemTab grid first
    # an architecture's colour is its own: no two architectures of the studies share one
    curves = page.locator("path.curve").all()
    strokes = {c.get_attribute("data-model"): c.get_attribute("stroke") for c in curves}
    assert len(strokes) > 8 and len(set(strokes.values())) == len(strokes)
    for track in dict.fromkeys(c["track"] for c in cells):
        page.select_option("#track", track)
        mine = [c for c in cells if c["track"] == track]
        folder = mine[0]["study"]
        assert f"results/{folder}/{track}/" in page.locator("#provenance").text_content()
        # the ranks of this track's own study, or no table where it has one track
        across = next(a for a in data["across"] if a["study"] == folder)["rows"]
        assert page.locator("#across tbody tr").count() == len(across)
        memories = list(dict.fromkeys(c["memory"] for c in mine))
        panels = page.locator("#figure svg[data-memory]")
        assert [p.get_attribute("data-memory") for p in panels.all()] == memories
        for panel, memory in zip(panels.all(), memories, strict=True):
            curves = panel.locator("path.curve")
            assert curves.count() == sum(c["memory"] == memory for c in mine)
            for c in curves.all():
                assert len(c.get_attribute("d")) > 10
        assert page.locator("#cells tbody tr").count() == len(mine)
    assert next(a for a in data["across"] if a["study"] == "study")["rows"]  # a table was checked
    # unticking an architecture removes its curves and rows
    track = cells[0]["track"]
    page.select_option("#track", track)
    model = cells[0]["model"]
    page.locator(f'#models input[value="{model}"]').uncheck()
    assert page.locator(f'path.curve[data-model="{model}"]').count() == 0
    left = sum(c["track"] == track and c["model"] != model for c in cells)
    assert page.locator("#cells tbody tr").count() == left
    assert "model=" in page.url


READ_BOARD = """() => {
  const b = document.getElementById('board');
  const pos = Array.from(document.querySelectorAll('#board [data-position]'));
  return {flip: +b.dataset.flip, current: +b.dataset.current, over: b.dataset.over === 'true',
          scores: JSON.parse(b.dataset.scores), positions: pos.map(p => +p.dataset.position),
          cards: pos.map(p => p.dataset.card), remembered: pos.map(p => p.dataset.remembered === 'true')};
}"""


def _check_game(page, url, record):
    """Open ``url`` at flip 0 and step with the arrow key through every flip, comparing the
    board with the Python engines' replay."""
    page.goto(url)
    page.wait_for_selector("#board [data-position]")
    frames = list(viewer_frames(record))
    for k, want in enumerate(frames):
        got = page.evaluate(READ_BOARD)
        assert got["flip"] == k
        assert got["positions"] == list(range(len(want["cards"])))
        assert got["cards"] == want["cards"], f"flip {k}"
        assert got["remembered"] == want["remembered"], f"flip {k}: memory overlay"
        assert got["scores"] == want["scores"] and got["over"] == want["over"], f"flip {k}"
        if not want["over"]:
            assert got["current"] == want["current"], f"flip {k}"
        page.keyboard.press("ArrowRight")
    assert frames[-1]["over"]


@pytest.mark.parametrize("name", [s[0] for s in SIMULATED])
def test_viewer_board_equals_the_rules_engine(site, server, page, name):
    records = list(read_records(site[0] / "extra" / name))
    assert len(records) == 3
    for i, record in enumerate(records):
        _check_game(page, f"{server}/viewer.html?record=extra/{name}&game={i}&flip=0", record)


def test_viewer_replays_evaluate_records_from_file_and_over_http(site, server, page):
    out, report = site
    rel = "records/memtab-2p/expert.records.jsonl.gz"
    records = list(read_records(out / rel))
    for i in (0, 7):  # from file:// through the sidecar, over http with fetch
        _check_game(page, (out / "viewer.html").as_uri() + f"?record={rel}&game={i}&flip=0", records[i])
        _check_game(page, f"{server}/viewer.html?record={rel}&game={i}&flip=0", records[i])


def test_viewer_links_to_the_current_flip(site, server, page):
    rel = "records/memtab-2p/search.records.jsonl.gz"
    page.goto(f"{server}/viewer.html?record={rel}&game=2&flip=5")
    page.wait_for_selector("#board [data-position]")
    assert page.evaluate(READ_BOARD)["flip"] == 5
    page.click("#next")
    page.click("#next")
    href = page.get_attribute("#flip-link", "href")
    assert "game=2" in href and "flip=7" in href
    cards = page.evaluate(READ_BOARD)["cards"]
    page.goto(f"{server}/viewer.html{href}")
    page.wait_for_selector("#board [data-position]")
    assert page.evaluate(READ_BOARD)["cards"] == cards
    page.click("#next-game")
    page.wait_for_selector("#board [data-position]")
    assert "game=3" in page.url and page.evaluate(READ_BOARD)["flip"] == 0


def test_viewer_refuses_a_record_that_does_not_replay(site, server, page, tmp_path):
    record = next(read_records(site[0] / "extra" / "memtab3.jsonl"))
    record["actions"][4]["card"] = "R2" if record["actions"][4]["card"] != "R2" else "R3"
    bad = site[0] / "extra" / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress((json.dumps(record) + "\n").encode()))
    page.goto(f"{server}/viewer.html?record=extra/bad.jsonl.gz&game=0&flip=20")
    page.wait_for_selector("#board [data-position]")
    assert "does not replay" in page.locator("[role=alert]").inner_text()
    assert "action 4" in page.locator("[role=alert]").inner_text()
    assert page.evaluate(READ_BOARD)["flip"] == 4  # shown up to the last flip that replays


@pytest.mark.parametrize("value", ["https://example.com/x.jsonl", "../results/x.jsonl", "/etc/passwd",
                                   "a b.jsonl"])
def test_viewer_only_reads_records_relative_to_the_page(site, server, page, value):
    requests: list[str] = []

    def seen(request):
        requests.append(request.url)

    page.on("request", seen)
    try:
        page.goto(f"{server}/viewer.html?record={value}")
        assert "relative to this page" in page.locator("[role=alert]").inner_text()
    finally:
        page.remove_listener("request", seen)
    others = [r for r in requests if not r.startswith(f"{server}/viewer.html?")]
    assert not any("x.jsonl" in r or "passwd" in r for r in others), others


def test_a_refused_result_never_appears(tmp_path, page):
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "board-2p", results / "board-2p")
    forged = json.loads((results / "board-2p" / "greedy.json").read_text())
    forged["agent"]["label"] = "forged"
    forged["runs"][0]["overall"]["win_rate"] = 0.99
    (results / "board-2p" / "forged.json").write_text(json.dumps(forged))
    report = build_site(results, tmp_path / "site")
    assert [e.label for e in report.entries] == ["greedy", "random"]
    assert [p for p, _ in report.refused] == ["board-2p/forged.json"]
    page.goto((tmp_path / "site" / "index.html").as_uri())
    assert page.locator('tr[data-label="forged"]').count() == 0
    assert "board-2p/forged.json" in page.locator("#refused + p + ul").inner_text()
