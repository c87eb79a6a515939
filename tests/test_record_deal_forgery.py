"""Records prove their deal: a benchmark record counts only when its layout (and every other
field its deal fixes: options, first player, seed) is what the track's env deals from the
track's seed for that deal. Every forgery below keeps its figures consistent with its
records (the result is rebuilt from the forged records), as a careful forger would, and is
refused by the audit, or by ``--reproduce``, with a sentence saying why."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtab_env.errors import MemTabError
from memtab_env.protocol import evaluate as ev
from memtab_env.protocol import leaderboard
from memtab_env.protocol.cli import evaluate_main
from memtab_env.protocol.reproduce import reproduce_game
from memtab_env.protocol.results import ResultError, load_result, save_result
from memtab_env.protocol.tracks import TRACKS
from memtab_env.record import read_records, write_records

DEALS = 2
SPARE = 8  # more deals played than the result uses: the forger's supply of other deals


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """greedy on memtab-2p: the honest records of deals 0..SPARE-1 (the result uses the
    first DEALS), and the track (anchors set, DEALS deals)."""
    folder = tmp_path_factory.mktemp("deals")
    track = dataclasses.replace(TRACKS["memtab-2p"], deals=SPARE, anchors={"random": 0.05, "search": 0.7})
    mp = pytest.MonkeyPatch()
    mp.setitem(TRACKS, "memtab-2p", track)
    try:
        assert evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--no-progress",
                              "--out", str(folder / "all.json"),
                              "--records", str(folder / "all.records.jsonl")]) == 0
        agent_runs = load_result(folder / "all.json")["agent"]["runs"]
    finally:
        mp.undo()
    return list(read_records(folder / "all.records.jsonl")), agent_runs


@pytest.fixture()
def forge(played, tmp_path, monkeypatch):
    """``forge(edit)``: the honest result of the first DEALS deals with its records edited by
    ``edit(records, spare)`` (``spare``: the records of the other deals), its figures
    rebuilt from the forged records as if the deal were not checked; returns the path."""
    monkeypatch.setitem(TRACKS, "memtab-2p",
                        dataclasses.replace(TRACKS["memtab-2p"], deals=DEALS,
                                            anchors={"random": 0.05, "search": 0.7}))
    records, agent_runs = played

    def make(edit=None, name="greedy"):
        recs = copy.deepcopy([r for r in records if r["benchmark"]["deal"] < DEALS])
        spare = copy.deepcopy([r for r in records if r["benchmark"]["deal"] >= DEALS])
        if edit is not None:
            recs = edit(recs, spare) or recs
        folder = tmp_path / "results"
        rname = f"{name}.records.jsonl"
        write_records(recs, folder / rname)
        with monkeypatch.context() as m:  # what the audit accepted before deals were checked
            m.setattr(ev, "check_deal", lambda rec, expected: None)
            try:
                result = ev.build_result(TRACKS["memtab-2p"], DEALS, "greedy", agent_runs, recs, rname)
            except MemTabError:  # no figures fit these records: the honest ones, then
                honest = [r for r in records if r["benchmark"]["deal"] < DEALS]
                result = ev.build_result(TRACKS["memtab-2p"], DEALS, "greedy", agent_runs, honest, rname)
        save_result(folder / f"{name}.json", result)
        return folder / f"{name}.json"

    return make


def _audit(path: Path, reproduce: int = 0) -> int:
    return leaderboard.audit(path, load_result(path), root=path.parent, reproduce=reproduce, reproduce_seed=0)


def _as(rec: dict, like: dict) -> dict:
    """``rec``'s game passed off as ``like``'s slot (benchmark tag, agents, claimed seed)."""
    out = copy.deepcopy(rec)
    out["benchmark"], out["agents"], out["seed"] = like["benchmark"], like["agents"], like["seed"]
    return out


def test_the_honest_records_are_audited_and_reproduced(forge):
    path = forge()
    assert _audit(path, reproduce=4) == DEALS * 3 * 2


def test_better_games_from_other_deals_are_refused(forge, played):
    """The reported attack: every game the agent did not win is replaced by a game it won
    on another deal (same opponent and seat), the records saying ``deal: "layout"`` with
    the seed of the slot. Before deals were checked this ranked first at 100%."""
    def edit(recs, spare):
        out = []
        for rec in recs:
            b, seat = rec["benchmark"], rec["benchmark"]["rotation"]
            if seat in rec["result"]["winners"]:
                out.append(rec)
                continue
            won = next(s for s in spare if s["benchmark"]["opponent"] == b["opponent"]
                       and s["benchmark"]["rotation"] == seat and s["result"]["winners"] == [seat])
            out.append({**_as(won, rec), "deal": "layout"})
        return out

    path = forge(edit)
    assert load_result(path)["runs"][0]["opponents"]["random"]["win_rate"] == 1.0
    with pytest.raises(ResultError, match=r"not deal \d of track memtab-2p/v1: its layout is not the deal "
                                          r"of the track's seed 100000000\d \(first difference at position"):
        _audit(path)


def _edit_first(edit):
    def apply(recs, spare):
        edit(recs[0], spare)
    return apply


FORGERIES = {
    # another deal's game under this deal's seed, still claiming it was dealt from the seed
    "other deal, deal=seed": (lambda r, s: r.update(_as(s[0], r)), "does not replay: layout does not match"),
    # the same, claiming its layout was given
    "other deal, deal=layout": (lambda r, s: r.update({**_as(s[0], r), "deal": "layout"}),
                                "its layout is not the deal of the track's seed"),
    # another deal's game with its own seed
    "other deal, its own seed": (lambda r, s: r.update({**_as(s[0], r), "seed": s[0]["seed"]}),
                                 "seed 100000000[2-9], but deal 0 has seed 1000000000"),
    # claimed seeds that differ from the slot's
    "seed edited": (lambda r, s: r.update(seed=r["seed"] + 7),
                    "does not replay: layout does not match the deal of seed 1000000007"),
    "seed removed": (lambda r, s: r.pop("seed"), "seed None, but deal 0 has seed"),
    "seed as text": (lambda r, s: r.update(seed=str(r["seed"])), "field seed: expected null or an integer"),
    "seed null, deal=layout": (lambda r, s: r.update(seed=None, deal="layout"), "seed None"),
    "deal=layout, honest layout": (lambda r, s: r.update(deal="layout"),
                                   "deal is 'layout', the track's deal has 'seed'"),
    # the layout edited: two cards swapped, a card replaced, a card dropped
    "two cards swapped": (lambda r, s: r.update(deal="layout", layout=_swapped(r["layout"])),
                          "its layout is not the deal|does not replay"),
    "layout cut short": (lambda r, s: r.update(deal="layout", layout=r["layout"][:-2]),
                         "does not replay|its layout is not the deal"),
    # edited flips: an action, a revealed card
    "action edited": (lambda r, s: r["actions"][0].update(action=(r["actions"][0]["action"] + 1) % 20),
                      "does not replay"),
    "revealed card edited": (lambda r, s: r["actions"][0].update(card="XX"), "does not replay: action 0"),
    "actions cut": (lambda r, s: r.update(actions=r["actions"][:3]), "does not replay"),
    # the rules changed: who starts, how many players, an option the track does not set
    "first player": (lambda r, s: (r.update(first_player=1), r["options"].update(first_player=1)),
                     r"does not replay|options \['first_player'\]"),
    "extra option": (lambda r, s: r["options"].update(render_mode="ansi"), r"options \['render_mode'\]"),
    "reward scheme": (lambda r, s: r["options"].update(reward="score"),
                      r"does not replay|options \['reward'\]"),
    # a game from another track (memory none): same deal, another env
    "another track's game": (lambda r, s: (r["options"].update(memory="none"),
                                           r["benchmark"].update(track="memtab-2p-none/v1")),
                             "for track 'memtab-2p-none/v1'"),
    "another track's options": (lambda r, s: r["options"].update(memory="none"), r"options \['memory'\]"),
    "another game": (lambda r, s: r.update(game="pelmanism"), "does not replay|game is 'pelmanism'"),
    # a game duplicated over another slot's, or the same game twice
    "duplicated game": (None, "a second record of the same game"),
    "slots swapped": (None, r"seed 100000000\d, but deal \d has seed 100000000\d"),
    "slots swapped with seeds": (None, "its layout is not the deal"),
}


def _swapped(layout):
    k = next(i for i, c in enumerate(layout) if c != layout[0])
    return [layout[k], *layout[1:k], layout[0], *layout[k + 1:]]


def _duplicate(recs, spare):
    recs[1] = copy.deepcopy(recs[0])


def _swap_slots(recs, spare):
    a = next(i for i, r in enumerate(recs) if r["benchmark"]["deal"] == 0)
    b = next(i for i, r in enumerate(recs) if r["benchmark"]["deal"] == 1
             and r["benchmark"]["rotation"] == recs[a]["benchmark"]["rotation"]
             and r["benchmark"]["opponent"] == recs[a]["benchmark"]["opponent"])
    recs[a]["benchmark"], recs[b]["benchmark"] = recs[b]["benchmark"], recs[a]["benchmark"]


def _swap_slots_and_seeds(recs, spare):
    _swap_slots(recs, spare)
    for r in recs:
        r["seed"], r["deal"] = 1_000_000_000 + r["benchmark"]["deal"], "layout"


@pytest.mark.parametrize("name", list(FORGERIES))
def test_every_forged_record_is_refused_with_its_reason(forge, name):
    edit, reason = FORGERIES[name]
    special = {"duplicated game": _duplicate, "slots swapped": _swap_slots,
               "slots swapped with seeds": _swap_slots_and_seeds}
    path = forge(special.get(name) or _edit_first(edit))
    with pytest.raises(ResultError, match=reason):
        _audit(path)


def test_reordered_lines_change_nothing(forge):
    """The order of the records in the file is not part of the evidence: the same games
    in any order are the same result."""
    honest = load_result(forge())["runs"]
    path = forge(lambda recs, spare: list(reversed(recs)), name="reordered")
    _audit(path)
    assert load_result(path)["runs"] == honest


def test_a_game_moved_to_another_seat_is_refused_by_reproduce(forge):
    """The one forgery the deal cannot show: a legal game of the right deal moved to the
    other rotation (seats and agents relabelled). The replay accepts it; re-playing with
    the named agent does not."""
    def edit(recs, spare):
        by_slot = {(r["benchmark"]["opponent"], r["benchmark"]["deal"], r["benchmark"]["rotation"]): r
                   for r in recs}
        out = []
        for (opp, d, rot), rec in by_slot.items():
            if rot == 1 and opp == "random":
                twin = copy.deepcopy(by_slot[(opp, d, 0)])
                twin["benchmark"], twin["agents"] = rec["benchmark"], rec["agents"]
                rec = twin
            out.append(rec)
        return out

    path = forge(edit)
    _audit(path)
    with pytest.raises(ResultError, match="not reproduced by the agent the result names"):
        _audit(path, reproduce=12)


def test_reproduce_deals_from_the_track_not_from_the_record(played, monkeypatch):
    """``reproduce_game`` given the track deals the track's seed: a record whose claims
    (seed, options, layout) were all edited to another deal is refused."""
    from memtab_env import agents

    monkeypatch.setitem(TRACKS, "memtab-2p", dataclasses.replace(TRACKS["memtab-2p"], deals=DEALS))
    records, _ = played
    rec = next(r for r in records if r["benchmark"]["deal"] == 3)
    seats = [agents.make("greedy", game="memtab"), agents.make(rec["benchmark"]["opponent"], game="memtab")]
    seats = [seats[i] for i in rec["benchmark"]["seats"]]
    assert reproduce_game(rec, seats) is None  # honest as deal 3
    assert reproduce_game(rec, seats, (TRACKS["memtab-2p"], 3)) is None
    why = reproduce_game(rec, seats, (TRACKS["memtab-2p"], 0))
    assert why is not None and "its layout is not deal 0 of track memtab-2p/v1" in why


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(0, 39), code=st.sampled_from(["AS", "2H", "KC", "QD", "XX", 7]))
def test_any_edited_card_of_a_layout_is_refused(played, position, code):
    """Fuzz: any one card of the layout changed (the record claiming ``deal: "layout"``,
    so that the replay does not compare it with the seed) never passes the deal check."""
    records, _ = played
    rec = copy.deepcopy(records[0])
    layout = rec["layout"]
    if position >= len(layout) or layout[position] == code:
        return
    layout[position] = code
    rec["deal"] = "layout"
    track = dataclasses.replace(TRACKS["memtab-2p"], deals=DEALS)
    why = ev.check_deal(rec, ev.track_deal(track, 0))
    assert why is not None and f"first difference at position {position}" in why


def test_the_result_file_is_untouched_by_a_refusal(forge):
    def edit(recs, spare):
        recs[0].update({**_as(spare[0], recs[0]), "deal": "layout"})

    path = forge(edit)
    before = {p: p.read_bytes() for p in path.parent.iterdir()}
    with pytest.raises(ResultError):
        leaderboard.collect(path.parent)
    assert {p: p.read_bytes() for p in path.parent.iterdir()} == before
    assert json.loads(path.read_text())["agent"]["label"] == "greedy"
