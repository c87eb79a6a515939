"""Reproduction across CPUs: a deterministic policy whose choice and the recorded flip
score within rounding of each other (a tie another CPU's float arithmetic breaks the
other way) still reproduces its records; any larger difference, and any difference by
an agent that does not choose by scores, refuses the game."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from memtab_env.protocol import reproduce
from memtab_env.protocol.reproduce import NEAR_TIE, reproduce_game
from memtab_env.protocol.results import ResultError, load_result
from memtab_env.protocol.tracks import get_track

ROOT = Path(__file__).resolve().parents[1]
TRACK = "memtab-2p-none"


class ScoredFirst:
    """Plays the first legal flip, and says it chose by scores: ``scores[flip]`` is
    ``top``, the other legal flips ``top - gap`` (``gap=None``: no scores)."""

    def __init__(self, gap: float | None, top: float = 0.5) -> None:
        self.gap, self.top = gap, top
        self.last_scores = None

    def act(self, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if self.gap is not None:
            self.last_scores = np.where(observation["action_mask"], self.top - self.gap, -np.inf)
            self.last_scores[legal[0]] = self.top
        return int(legal[0])


class Scripted:
    """Plays the given flips in order."""

    def __init__(self, flips: list[int]) -> None:
        self.flips = list(flips)

    def act(self, observation) -> int:
        return self.flips.pop(0)


class SecondLegalOnce(ScoredFirst):
    """Plays the first legal flip, but the second legal one at its second action."""

    def __init__(self) -> None:
        super().__init__(None)
        self.played = 0

    def act(self, observation) -> int:
        self.played += 1
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[1] if self.played == 2 else legal[0])


def _record(agent) -> dict:
    """A solo Pelmanism game (3 pairs, seed 4) of ``agent``, recorded by the play loop
    every reproduction is compared with."""
    from memtab_env.play import make_raw_env, play_game

    return play_game(make_raw_env("pelmanism", num_players=1, deck="pairs:3"), [agent], seed=4)


def test_the_recorded_game_reproduces_with_the_agent_that_played_it() -> None:
    record = _record(ScoredFirst(None))
    assert reproduce_game(record, [ScoredFirst(None)]) is None
    assert reproduce_game(record, [ScoredFirst(0.25)]) is None


@pytest.mark.parametrize(("gap", "accepted"), [
    (0.0, True),                      # an exact tie
    (0.5 * NEAR_TIE, True),           # a few ulps
    (NEAR_TIE, True),
    (3 * NEAR_TIE, False),
    (0.1, False),
])
def test_a_recorded_flip_within_rounding_of_the_choice_is_the_agents(gap: float, accepted: bool) -> None:
    """A game whose second flip is not the agent's choice reproduces exactly when the
    agent's scores put that flip within NEAR_TIE of its choice."""
    record = _record(SecondLegalOnce())
    assert record["actions"][1]["action"] != _record(ScoredFirst(None))["actions"][1]["action"]
    counts: dict[str, int] = {}
    why = reproduce_game(record, [ScoredFirst(gap)], counts=counts)
    if accepted:
        assert why is None
        assert counts == {"near_ties": 1}
    else:
        assert why is not None and why.startswith("action 1: the record has seat 0 play"), why
        assert counts == {}


def test_the_tie_tolerance_scales_with_large_scores() -> None:
    record = _record(SecondLegalOnce())
    assert reproduce_game(record, [ScoredFirst(50 * NEAR_TIE, top=100.0)]) is None
    why = reproduce_game(record, [ScoredFirst(200 * NEAR_TIE, top=100.0)])
    assert why is not None and why.startswith("action 1")


def test_an_agent_without_scores_gets_no_tolerance() -> None:
    why = reproduce_game(_record(SecondLegalOnce()), [ScoredFirst(None)])
    assert why is not None and why.startswith("action 1: the record has seat 0 play")


def test_a_record_longer_or_shorter_than_the_game_is_refused() -> None:
    record = _record(ScoredFirst(None))
    shorter = copy.deepcopy(record)
    shorter["actions"] = shorter["actions"][:-1]
    assert reproduce_game(shorter, [ScoredFirst(None)]).startswith(
        f"the record has {len(shorter['actions'])} actions, the named agents play on")
    longer = copy.deepcopy(record)
    longer["actions"].append(dict(longer["actions"][-1]))
    assert reproduce_game(longer, [ScoredFirst(None)]) == (
        f"the record has {len(longer['actions'])} actions, the game ends after {len(record['actions'])}")


def test_an_illegal_recorded_flip_is_refused_not_raised() -> None:
    record = _record(ScoredFirst(None))
    forged = copy.deepcopy(record)
    forged["actions"][1]["action"] = forged["actions"][0]["action"]  # the card already up
    why = reproduce_game(forged, [Scripted([a["action"] for a in forged["actions"]])])
    assert why is not None and why.startswith("the named agents cannot play this game again")


# -- a shipped recurrent policy, its arithmetic nudged as another CPU's ---------------------
def _rppo() -> tuple[Path, dict, list]:
    path = ROOT / "results" / TRACK / "rppo-memtab-none.json"
    result = load_result(path)
    with gzip.open(path.with_name("rppo-memtab-none.records.jsonl.gz"), "rt") as f:
        records = [(f"{path.name}:{i + 1}", json.loads(line)) for i, line in enumerate(f) if i < 6]
    return path, result, records


def _nudged(monkeypatch, size: float) -> None:
    """The SB3 policy's probabilities times (1 + size * noise): rounding of another CPU
    at size 1e-7, a policy that is not the recorded one at 1e-3."""
    from memtab_env.agents import sb3_policy

    scores = sb3_policy.SB3Agent._scores
    rng = np.random.default_rng(0)

    def nudged(self, observation):
        probs = scores(self, observation)
        return probs * (1 + size * rng.uniform(-1, 1, probs.shape))

    monkeypatch.setattr(sb3_policy.SB3Agent, "_scores", nudged)


def test_the_recurrent_policy_reproduces_under_another_cpus_rounding(monkeypatch) -> None:
    path, result, records = _rppo()
    _nudged(monkeypatch, 1e-7)
    assert reproduce.reproduce_result(path, result, records, 6, ROOT / "results", seed=0) == 6


def test_the_recurrent_policy_is_refused_when_its_play_really_differs(monkeypatch) -> None:
    path, result, records = _rppo()
    _nudged(monkeypatch, 1e-3)
    with pytest.raises(ResultError, match="not reproduced by the agent the result names"):
        reproduce.reproduce_result(path, result, records, 6, ROOT / "results", seed=0)


def test_a_deal_is_still_proved_before_any_play() -> None:
    """A record of another deal is refused whatever the agent (the deal is checked first)."""
    path, result, records = _rppo()
    track = get_track(TRACK)
    where, rec = records[0]
    rec = copy.deepcopy(rec)
    rec["layout"] = list(reversed(rec["layout"]))
    why = reproduce_game(rec, [ScoredFirst(None)] * track.num_players, (track, int(rec["benchmark"]["deal"])))
    assert why is not None and "is not deal" in why
