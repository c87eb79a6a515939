"""Exact known values of Pelmanism, by dynamic programming over what the players know.

With perfect memory, the only thing that matters about a position of the game is how many
kinds are in each *class* ``(r, j)``: ``r`` cards of the kind still on the table, ``j`` of
them already seen (known). The cards not yet seen are a uniformly random arrangement of
what is left (the deal is a uniform permutation and flips reveal nothing else), so which
unseen position a player flips does not change the odds, and the game is a Markov chain
on class counts. For a pack of pairs the classes are ``(2, 0)`` (pairs never touched),
``(2, 1)`` (known singletons) and ``(2, 2)`` (known pairs).

The greedy policy (what :class:`memtab_env.agents.pelmanism_agents.PelmanismGreedyAgent` plays):

1. if a known pair lies on the table, flip one of its cards, then the other;
2. else flip an unseen card; if a card of its kind is known (its *twin*: for quartets,
   any known card of the same kind), flip that card, taking the pair;
3. else flip another unseen card (never a known card while unseen cards remain; if none
   remained a known card would be flipped, but with perfect memory this cannot happen:
   the first card's kind has r - 1 >= 1 more unseen cards).

Values computed here (``exact=True``: :class:`fractions.Fraction`; ``exact=False``: float):

- :func:`solo_greedy_expected_turns`: expected number of turns of a solo greedy player
  (extra turns count: a pack of ``N`` pairs takes at least ``N`` turns);
- :func:`solo_optimal_expected_turns` (pairs): the optimum over every perfect-memory
  strategy that may also flip known cards, to compare the greedy one with;
- :func:`two_player_greedy_outcome`: the probabilities that the first player wins, that
  the game is drawn and that the second player wins when both play greedy;
- :func:`velleman_warrington_asymptote`: ``(3 - 2 ln 2) n + 7/8 - 2 ln 2``, the expected
  number of turns of optimal solo play with ``n`` pairs for large ``n`` (D. J. Velleman and
  G. S. Warrington, "What to expect in a game of memory", Amer. Math. Monthly 120 (2013));
- :func:`solo_random_expected_turns`: ``n**2`` for uniformly random flips with ``n`` pairs
  (a turn with ``m`` pairs left matches with probability ``1/(2m - 1)``, so clearing one
  pair takes ``2m - 1`` turns on average, and the sum over ``m = 1..n`` is ``n**2``).

Findings (``tests/test_pelmanism_values.py`` checks them):

- the greedy solo value equals the optimum exactly (as fractions) for every ``n`` up to
  26: greedy *is* optimal solo play, flipping a known card never helps a solo player;
- it approaches the Velleman-Warrington asymptote, from below for every ``n`` but 3: the gap is
  ``E(n) - asymptote(n) ~ -0.040 / n`` (``n * gap`` = -0.0411, -0.0400, -0.0397 for
  ``n`` = 10, 20, 26), under 0.01 turns from ``n = 5`` on and 0.0015 at ``n = 26``, so
  the asymptote is exact up to an ``O(1/n)`` term;
- two greedy players (pairs): an odd number of pairs cannot end drawn; neither seat has a
  steady edge: ``P(first wins) - P(second wins)`` changes sign irregularly with ``n``
  (1/3 against 2/3 for 2 pairs, 3/5 against 4/15 for 4) and shrinks (0.4663 against
  0.4675, draw 0.0662, for 26 pairs). Between two players greedy is a baseline, not
  optimal (below). Standard deck (13 quartets): 41.70 expected solo turns; two players
  0.4517 / 0.0999 / 0.4484.

Two players, optimal play (pairs; U. Zwick and M. S. Paterson, "The memory game",
Theoretical Computer Science 110 (1993)). A position at the start of a turn is ``(n, k)``:
``n`` pairs, ``k`` known singletons, no known pair (taken at once). A turn is one of four
plans: an unseen first card (matched when its twin is known) then an unseen card (``U``,
greedy's) or a known one (``Uk``: it shows the opponent nothing new); a known first card
then an unseen one; or two known cards, a *pass* (``k >= 2``), which hands the opponent
the same position. With ``W`` the best informative plan, a pass makes the value
``V = max(W, -V)``: where ``W < 0`` both players pass for ever, the remaining pairs are
never taken (a turn limit ends the game, scored as it stands) and ``V = 0``; so ``V =
max(W, 0)`` where a pass is possible. The win version plays for the result (win 1, draw
1/2, loss 0) and keeps the lead in the state; there endless passing ends the game as it
stands, and a position is worth ``W`` when ``W >= 1 - W'`` (``W'``: the opponent's best
informative plan with the lead reversed), else the median of ``W``, that ending and
``1 - W'``.

- :func:`two_player_optimal_value`, :func:`two_player_optimal_move`,
  :func:`two_player_optimal_second`, :func:`two_player_optimal_table`: the margin
  optimum (what ``agents.make("optimal", game="pelmanism")`` plays);
- :func:`two_player_optimal_win_value`: the result optimum, every deck up to 26 pairs
  (exact, about a second);
- :func:`two_player_optimal_stall_probability`,
  :func:`two_player_optimal_against_greedy`.

Findings (``tests/test_pelmanism_two_player_optimum.py``; ``docs/pelmanism_values.md``
tabulates them): an expectimax over explicit positions that tries every legal flip gives
the same values for ``n <= 5``; a known first card is never optimal; ``Uk`` is optimal in
positions from ``(3, 1)`` on, mostly where ``n + k`` is even; a pass from 5 pairs on
(``k = n - 1``, then more ``k`` near ``n``), so two optimal players stall in 38% of games
of 5 pairs and 99.7% of 26; the first player's margin ``V(n, 0)`` alternates in sign from
8 pairs on, about ``1 / (4 n)`` in size (-0.0097 for 26 pairs); the optimum gains more than
a pair per game against greedy over both seats from 8 pairs on (3.69 for 26 pairs).
"""

from __future__ import annotations

from memtab_env.games.pelmanism.values.solo import (
    Counts,
    Number,
    Outcome,
    deck_parameters,
    solo_greedy_expected_turns,
    solo_greedy_table,
    solo_optimal_expected_turns,
    solo_random_expected_turns,
    two_player_greedy_expected_margin,
    two_player_greedy_margin,
    two_player_greedy_outcome,
    velleman_warrington_asymptote,
)
from memtab_env.games.pelmanism.values.two_player import (
    KNOWN,
    UNSEEN,
    TwoPlayerMove,
    two_player_optimal_against_greedy,
    two_player_optimal_move,
    two_player_optimal_second,
    two_player_optimal_stall_probability,
    two_player_optimal_table,
    two_player_optimal_value,
    two_player_optimal_win_value,
)

__all__ = [
    "Counts",
    "KNOWN",
    "Number",
    "Outcome",
    "TwoPlayerMove",
    "UNSEEN",
    "deck_parameters",
    "solo_greedy_expected_turns",
    "solo_greedy_table",
    "solo_optimal_expected_turns",
    "solo_random_expected_turns",
    "two_player_greedy_expected_margin",
    "two_player_greedy_margin",
    "two_player_greedy_outcome",
    "two_player_optimal_against_greedy",
    "two_player_optimal_move",
    "two_player_optimal_second",
    "two_player_optimal_stall_probability",
    "two_player_optimal_table",
    "two_player_optimal_value",
    "two_player_optimal_win_value",
    "velleman_warrington_asymptote",
]
