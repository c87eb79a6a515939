"""The exact two-player optimum of Pelmanism (pairs) and the agent that plays it.

- The dynamic programs of :mod:`memtab_env.games.pelmanism.values` (``(n, k)`` class
  counts, four plans) equal, as fractions, an independent expectimax over explicit
  positions that tries *every* legal flip (declining a match, leaving a known pair,
  flipping a known card at either flip) with explicit chance over the unseen cards.
- Properties and the literature's qualitative results (Zwick and Paterson 1993).
- The agent: averaged over every deal of small packs its games give the values exactly;
  on larger packs seeded games agree with them within sampling error; it is never worse
  than greedy over both seats.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memtab_env.agents import make
from memtab_env.agents.pelmanism_agents import PelmanismGreedyAgent, PelmanismOptimalAgent
from test_pelmanism_values import observe, play_game

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import Pelmanism
from memtab_env.games.pelmanism.values import (
    KNOWN,
    UNSEEN,
    two_player_greedy_expected_margin,
    two_player_optimal_against_greedy,
    two_player_optimal_move,
    two_player_optimal_second,
    two_player_optimal_stall_probability,
    two_player_optimal_table,
    two_player_optimal_value,
    two_player_optimal_win_value,
)
from memtab_env.memory import Memory

# -- an independent expectimax over explicit positions -----------------------------------------
UNSEEN_CARD = -1


def _canonical(cards: tuple[int, ...]) -> tuple[int, ...]:
    """Known kinds relabelled in order of first appearance (kinds are interchangeable)."""
    names: dict[int, int] = {}
    return tuple(names.setdefault(c, len(names)) if c >= 0 else c for c in cards)


def _flip(cards: tuple[int, ...], fresh: int, pos: int):
    """``(probability, cards, fresh)`` of what the card at ``pos`` turns out to be: a known
    card is what it is; an unseen one is the twin of each known singleton (one unseen card
    each) or a card of one of the ``fresh`` kinds never seen (two unseen cards each)."""
    if cards[pos] >= 0:
        return ((Fraction(1), cards, fresh),)
    unseen = cards.count(UNSEEN_CARD)
    out = [(Fraction(1, unseen), cards[:pos] + (c,) + cards[pos + 1:], fresh)
           for c in sorted({c for c in cards if c >= 0 and cards.count(c) == 1})]
    if fresh:
        label = max(cards) + 1
        out.append((Fraction(2 * fresh, unseen), cards[:pos] + (label,) + cards[pos + 1:], fresh - 1))
    return tuple(out)


class Expectimax:
    """The mover's optimal expected payoff at the start of a turn, from explicit cards on
    the table (``-1`` unseen, else the known kind; taken cards are removed), the number of
    kinds never seen and the mover's lead. ``payoff(lead)``: a game over, or stalled;
    ``total``: the two players' values add up to it (0 for margins, 1 for results).
    ``margin``: the value is the margin still to come (leads are not tracked). A turn that
    shows nothing and takes nothing (two known cards that do not match) hands the
    opponent the same position: the value is then that of the recursive game with endless
    passing worth ``payoff(lead)``. ``prune``: try the lowest position of each set of
    positions a symmetry maps onto each other (exchanging positions, relabelling kinds)
    instead of every position."""

    def __init__(self, payoff, total: int, margin: bool, prune: bool = True) -> None:
        self.payoff, self.total, self.margin, self.prune = payoff, total, margin, prune
        self.value = cache(self._value)
        self.informative = cache(self._informative)

    def _choices(self, cards, up):
        out, seen = [], set()
        for i, c in enumerate(cards):
            if i == up:
                continue
            sig = ("unseen" if c < 0 else "twin" if up is not None and c == cards[up]
                   else cards.count(c)) if self.prune else i
            if sig not in seen:
                seen.add(sig)
                out.append(i)
        return out

    def _informative(self, cards, fresh, lead):
        """(the best turn that shows or takes something, whether a turn can show nothing)."""
        best, can_pass = None, False
        bonus, step = (1, 0) if self.margin else (0, 1)
        for p in self._choices(cards, None):
            plan = Fraction(0)
            for prob, c1, f1 in _flip(cards, fresh, p):
                top = None
                for q in self._choices(c1, p):
                    second = Fraction(0)
                    for prob2, c2, f2 in _flip(c1, f1, q):
                        if c2[p] == c2[q]:  # a match: taken, the mover goes on
                            rest = _canonical(tuple(c for i, c in enumerate(c2) if i not in (p, q)))
                            second += prob2 * (bonus + self.value(rest, f2, lead + step))
                        elif c2 == cards:  # two known cards: nothing shown
                            second = None
                            break
                        else:
                            second += prob2 * (self.total - self.value(_canonical(c2), f2, -lead))
                    if second is None:
                        can_pass = True
                    elif top is None or second > top:
                        top = second
                if top is None:
                    plan = None
                    break
                plan += prob * top
            if plan is not None and (best is None or plan > best):
                best = plan
        return best, can_pass

    def _value(self, cards, fresh, lead):
        if not cards:
            return self.payoff(lead)
        mine, can_pass = self.informative(cards, fresh, lead)
        if not can_pass:
            return mine
        theirs, _ = self.informative(cards, fresh, -lead)
        if mine >= self.total - theirs:  # moving beats waiting for the other to move
            return mine
        return sorted((mine, self.payoff(lead), self.total - theirs))[1]


def _position(n: int, k: int):
    """``k`` known singletons (kinds 0..k-1 at positions 0..k-1), every other card unseen."""
    return tuple(range(k)) + (UNSEEN_CARD,) * (2 * n - k), n - k


def _result(lead: int) -> Fraction:
    return Fraction(1) if lead > 0 else Fraction(1, 2) if lead == 0 else Fraction(0)


MARGIN = Expectimax(lambda lead: Fraction(0), 0, margin=True)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_margin_values_equal_an_expectimax_over_explicit_positions(n):
    for k in range(n + 1):
        assert MARGIN.value(*_position(n, k), 0) == two_player_optimal_value(n, k), (n, k)


def test_the_expectimax_prunes_only_symmetric_flips():
    full = Expectimax(lambda lead: Fraction(0), 0, margin=True, prune=False)
    for n in (1, 2, 3):
        for k in range(n + 1):
            assert full.value(*_position(n, k), 0) == MARGIN.value(*_position(n, k), 0)


def test_result_values_equal_an_expectimax_over_explicit_positions():
    result = Expectimax(_result, 1, margin=False)
    for n in range(1, 5):
        for k in range(n + 1):
            for lead in range(-2, 3):
                assert result.value(*_position(n, k), lead) == two_player_optimal_win_value(n, k, lead)
    # two pairs: the first player wins when its first turn matches (1/3), else loses
    assert two_player_optimal_win_value(2) == Fraction(1, 3)


# -- properties and the literature ---------------------------------------------------------------
@settings(deadline=None)
@given(st.integers(1, 26), st.data())
def test_value_properties(n, data):
    k = data.draw(st.integers(0, n))
    v = two_player_optimal_value(n, k)
    assert -n <= v <= n
    assert two_player_optimal_value(n, n) == n  # every unseen card completes a known pair
    if k >= 2:
        assert v >= 0  # a pass is possible: the mover never does worse than the opponent
    move = two_player_optimal_move(n, k)
    assert move.value == v and float(v) == two_player_optimal_value(n, k, exact=False)
    if n > k:
        for first in (UNSEEN,) + ((KNOWN,) if k else ()):
            assert two_player_optimal_second(n, k, first) in (UNSEEN, KNOWN)
    lead = data.draw(st.integers(-3, 3))
    w = two_player_optimal_win_value(n, k, lead)
    assert 0 <= w <= 1
    assert w <= two_player_optimal_win_value(n, k, lead + 1)  # a larger lead never hurts


def test_a_position_both_would_pass_is_worth_zero():
    """(5, 4): every informative turn loses on average, so the mover passes; the opponent
    faces the same position and passes too; the remaining pairs are never taken."""
    move = two_player_optimal_move(5, 4)
    assert move.passes and move.value == 0 == two_player_optimal_value(5, 4)
    # the informative plans: the first unseen card matches (4/6) or not
    first_unseen = Fraction(4, 6) * (1 + two_player_optimal_value(4, 3)) \
        - Fraction(2, 6) * two_player_optimal_value(5, 5)
    assert first_unseen < 0
    # where no pass is possible (k < 2) a losing position keeps its negative value
    assert two_player_optimal_value(2, 0) == Fraction(-2, 3)
    assert two_player_optimal_value(5, 1) < 0


def test_zwick_paterson_qualitative_results():
    plans = {(n, k): two_player_optimal_move(n, k) for n in range(1, 27) for k in range(n + 1)}
    # a known card first is never optimal
    assert all(m.first == UNSEEN or m.passes for m in plans.values())
    # passing: never below 5 pairs; at k = n - 1 from 5 pairs on
    passes = {nk for nk, m in plans.items() if m.passes}
    assert min(n for n, _ in passes) == 5
    assert all((n, n - 1) in passes for n in range(5, 27))
    # a known card second (not greedy's flip) from 3 pairs on: (3, 1) is the first
    known_second = {nk for nk, m in plans.items() if m.first == UNSEEN and m.second == KNOWN}
    assert min(known_second) == (3, 1) and len(known_second) > 100
    # the first player's margin alternates in sign from 8 pairs on (odd n ahead), ~ 1/(4n)
    table = two_player_optimal_table(26, exact=False)
    assert all((v > 0) == (n % 2 == 1) for n, v in enumerate(table, start=1) if n >= 8)
    assert 0.008 < abs(table[25]) < 0.011
    assert two_player_optimal_table(4) == [1, Fraction(-2, 3), Fraction(-1, 5), Fraction(-4, 35)]


def test_stalls_and_greedy_agree_where_the_plans_do():
    assert two_player_optimal_stall_probability(4) == 0
    assert float(two_player_optimal_stall_probability(5)) == pytest.approx(0.381, abs=5e-4)
    assert float(two_player_optimal_stall_probability(26)) == pytest.approx(0.9973, abs=5e-5)
    # with 1 or 2 pairs every optimal plan is greedy's: the same margins
    for n in (1, 2):
        first, second = two_player_optimal_against_greedy(n)
        assert first == two_player_optimal_value(n) == two_player_greedy_expected_margin(n)
        assert second == -first


def test_the_optimum_is_never_worse_than_greedy():
    for n in range(1, 27):
        v = two_player_optimal_value(n)
        first, second = two_player_optimal_against_greedy(n)
        assert first >= v and second >= -v  # the optimum's guarantee against any opponent
        assert first + second >= 0
        if n >= 4:
            assert first + second > 0
    assert two_player_optimal_against_greedy(26, exact=False)[0] == pytest.approx(3.715, abs=1e-3)
    # more than a pair per game over both seats from 8 pairs on, not before
    gains = [sum(two_player_optimal_against_greedy(n)) / 2 for n in range(1, 27)]
    assert all(g > 1 for g in gains[7:]) and all(g < 1 for g in gains[:7])


def test_value_api_checks_its_arguments():
    for bad in ((0, 0), (27, 0), (3, 4), (3, -1), (True, 0), (3, 1.0)):
        with pytest.raises(InvalidOptionError):
            two_player_optimal_value(*bad)
    with pytest.raises(InvalidOptionError, match="first must be"):
        two_player_optimal_second(3, 1, "pass")
    with pytest.raises(InvalidOptionError, match="no card is known"):
        two_player_optimal_second(3, 0, KNOWN)
    with pytest.raises(InvalidOptionError, match="lead"):
        two_player_optimal_win_value(3, 0, 27)


# -- the agent -----------------------------------------------------------------------------------
def pair_partitions(n: int):
    """Every way to lay ``n`` pairs on ``2n`` positions up to the names of the kinds (each
    equally likely, and the agents never look at names): card ids by position."""
    def rec(layout):
        if -1 not in layout:
            yield list(layout)
            return
        i = layout.index(-1)
        kind = max(layout) + 1
        for j in range(i + 1, len(layout)):
            if layout[j] == -1:
                layout[i] = layout[j] = kind
                yield from rec(layout)
                layout[i] = layout[j] = -1

    yield from rec([-1] * 2 * n)


def _margin(game, agents, layout) -> int:
    s = play_game(game, agents, game.from_layout(layout))
    return int(s.pairs[0]) - int(s.pairs[1])


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_agent_averaged_over_every_deal_gives_the_values_exactly(n):
    # 3n turns show or take every card: a longer game has stalled (never here)
    game = Pelmanism(f"pairs:{n}", 2, max_turns=6 * n + 2)
    deck = f"pairs:{n}"
    optimal = [PelmanismOptimalAgent(deck=deck, num_players=2) for _ in range(2)]
    greedy = PelmanismGreedyAgent(deck=deck, num_players=2)
    deals = list(pair_partitions(n))
    assert len(deals) == math.prod(range(1, 2 * n, 2))
    self_play = Fraction(sum(_margin(game, optimal, d) for d in deals), len(deals))
    assert self_play == two_player_optimal_value(n)
    first, second = two_player_optimal_against_greedy(n)
    assert Fraction(sum(_margin(game, [optimal[0], greedy], d) for d in deals), len(deals)) == first
    assert Fraction(sum(-_margin(game, [greedy, optimal[0]], d) for d in deals), len(deals)) == second


def test_agent_self_play_converges_on_the_value_and_stalls_as_computed():
    n, games = 6, 300
    game = Pelmanism(f"pairs:{n}", 2, max_turns=3 * n + 2)  # a longer game has stalled
    agents = [make("optimal", game="pelmanism", deck=f"pairs:{n}", num_players=2) for _ in range(2)]
    rng = np.random.default_rng(41)
    margins, stalled = [], []
    for _ in range(games):
        s = play_game(game, agents, game.new_game(rng))
        margins.append(int(s.pairs[0]) - int(s.pairs[1]))
        stalled.append(game.stopped_by_turn_limit(s))
    margins, stalled = np.array(margins, float), np.array(stalled, float)
    # 4 standard errors: a false alarm about once in 16,000 runs of a correct agent
    error = margins.std(ddof=1) / math.sqrt(games)
    assert abs(margins.mean() - float(two_player_optimal_value(n))) < 4 * error
    p = float(two_player_optimal_stall_probability(n))
    assert abs(stalled.mean() - p) < 4 * math.sqrt(p * (1 - p) / games)


def test_agent_against_greedy_over_both_seats_matches_the_exact_gain():
    n, deals = 8, 120
    game = Pelmanism(f"pairs:{n}", 2)  # greedy never passes: every game ends
    optimal = PelmanismOptimalAgent(deck=f"pairs:{n}")
    greedy = PelmanismGreedyAgent(deck=f"pairs:{n}", num_players=2)
    rng = np.random.default_rng(43)
    gains = []
    for _ in range(deals):  # the same deal in both seat orders
        layout = game.layout_codes(game.new_game(rng))
        first, second = _margin(game, [optimal, greedy], layout), _margin(game, [greedy, optimal], layout)
        gains.append((first - second) / 2)
    gains = np.array(gains)
    exact = sum(two_player_optimal_against_greedy(n, exact=False)) / 2
    assert exact > 1  # optimal gains more than a pair a game on average
    assert abs(gains.mean() - exact) < 4 * gains.std(ddof=1) / math.sqrt(deals)


def _after(n: int, flips: list[int]):
    """A ``pairs:n`` game (kinds K00.. at positions 0..n-1, again at n..2n-1) after
    ``flips``, with the observation function of the player on turn."""
    game = Pelmanism(f"pairs:{n}", 2)
    enc = PelmanismEncoder(game)
    s = game.from_layout([f"K{i % n:02d}" for i in range(2 * n)])
    mem = Memory("perfect", 2, 2 * n)
    for a in flips:
        t = game.apply_inplace(s, a)
        mem.on_action(t.player, [a])
    return game, s, lambda: observe(game, enc, mem, s, game.current_player(s)), mem


def test_agent_plays_the_plans_on_hand_built_positions():
    # (4, 2) after player 0 missed with K00, K01: a new first card, then a known card
    assert two_player_optimal_move(4, 2)[:2] == (UNSEEN, KNOWN)
    game, s, obs, mem = _after(4, [0, 1])
    agent, greedy = PelmanismOptimalAgent(deck="pairs:4"), PelmanismGreedyAgent(deck="pairs:4")
    assert agent.act(obs()) == 2 == greedy.act(obs())  # the lowest unseen card: K02, new
    t = game.apply_inplace(s, 2)
    mem.on_action(t.player, [2])
    assert agent.act(obs()) == 0  # a known card of another kind: shows nothing new
    assert greedy.act(obs()) == 3  # greedy shows another unseen card
    # (5, 4) after two misses: every informative turn loses, the mover passes
    assert two_player_optimal_move(5, 4).passes
    game, s, obs, mem = _after(5, [0, 1, 2, 3])
    agent = PelmanismOptimalAgent(deck="pairs:5")
    assert agent.act(obs()) == 0  # a known singleton first
    t = game.apply_inplace(s, 0)
    mem.on_action(t.player, [0])
    assert agent.act(obs()) == 1  # then another: the turn shows nothing
    # a known pair is taken first, and a face-up card's known twin is matched
    game, s, obs, mem = _after(3, [0, 1, 2, 3])  # K00 K01 | K02 then K00 (a known pair)
    assert game.current_player(s) == 0
    assert PelmanismOptimalAgent(deck="pairs:3").act(obs()) == 0
    game, s, obs, mem = _after(3, [0, 1, 4])  # player 1 flips K01 at 4: twin at 1
    assert PelmanismOptimalAgent(deck="pairs:3").act(obs()) == 1


def test_agent_remembers_by_itself_under_memory_none():
    """Under memory ``none`` with its own memory it plays as with perfect memory: it keeps
    what every observation showed (as greedy does)."""
    game = Pelmanism("pairs:7", 2, max_turns=30)
    rng = np.random.default_rng(3)
    for _ in range(5):
        layout = game.layout_codes(game.new_game(rng))
        finals = []
        for memory in ("perfect", "none"):
            agents = [PelmanismOptimalAgent(deck="pairs:7") for _ in range(2)]
            s = play_game(game, agents, game.from_layout(layout), memory=memory)
            finals.append((s.pairs.tolist(), game.turns_taken(s)))
        assert finals[0] == finals[1]


def test_agent_refuses_other_decks_and_player_counts():
    for kwargs in ({"deck": "standard"}, {"deck": "quartets:3"}, {"deck": "pairs:4", "num_players": 3},
                   {"num_players": 1}):
        with pytest.raises(InvalidOptionError, match="two players on a deck of pairs"):
            make("optimal", game="pelmanism", **kwargs)
    make("optimal", game="pelmanism", deck="colour")  # 26 pairs
    game = Pelmanism("pairs:4", 3)
    state = game.new_game(np.random.default_rng(0))
    obs = observe(game, PelmanismEncoder(game), Memory("perfect", 3, 8), state, 0)
    with pytest.raises(InvalidOptionError, match="got deck 'pairs:4' with 3 player"):
        PelmanismOptimalAgent().act(obs)
