"""Known values of Pelmanism and the agents that reach them.

- The dynamic programs of :mod:`memtab_env.games.pelmanism.values` are exact: for tiny
  packs they equal, as fractions, the average over *every* deal of games played by the
  engine with the greedy agent (brute-force enumeration).
- On larger packs, seeded games of engine + agent agree with them within sampling error.
- Greedy solo play is optimal, and approaches the Velleman-Warrington asymptote.

Games are driven the way the AEC env drives them: engine, :class:`Memory`, encoder, and
the observation dict the env gives the player on turn.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from memtab_env.agents.pelmanism_agents import (
    PelmanismGreedyAgent,
    PelmanismNoMemoryAgent,
    PelmanismRandomAgent,
    candidate_decks,
    greedy_flip,
    infer_game,
)

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import Pelmanism, PelmanismState
from memtab_env.games.pelmanism.values import (
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
from memtab_env.memory import Memory


def observe(game, enc, mem, state, player):
    """The observation dict the AEC env gives ``player`` on turn."""
    remembered = mem.remembered(player, game.face_down(state))
    return {
        "observation": enc.encode(state, player, remembered),
        "action_mask": game.legal_mask(state).astype(np.int8),
        "remembered_mask": remembered.astype(np.int8),
    }


def play_game(game, agents, state: PelmanismState, memory="perfect", seed=0) -> PelmanismState:
    """Play ``state`` to the end with one agent per seat; returns the final state."""
    enc = PelmanismEncoder(game)
    mem = Memory(memory, game.num_players, game.num_positions, seed=seed)
    for i, agent in enumerate(agents):
        agent.reset(seed=seed * 7 + i)
    while not game.is_over(state):
        p = game.current_player(state)
        t = game.apply_inplace(state, agents[p].act(observe(game, enc, mem, state, p)))
        mem.on_action(t.player, [pos for pos, _ in t.revealed])
        assert game.turns_taken(state) <= game.info.max_turns
    return state


def distinct_deals(cards: list[int]):
    """Every distinct arrangement of a multiset of card ids (each deal once)."""
    counts = Counter(cards)
    out: list[int] = []

    def rec():
        if len(out) == len(cards):
            yield list(out)
            return
        for c in sorted(counts):
            if counts[c]:
                counts[c] -= 1
                out.append(c)
                yield from rec()
                out.pop()
                counts[c] += 1

    yield from rec()


# -- brute force over every deal: the DP values are exact --------------------------------------
def _all_deals(deck: str, num_players: int):
    game = Pelmanism(deck, num_players)
    deals = list(distinct_deals(game.deck.cards.tolist()))
    # identical cards of a special pack: distinct deals are equally likely
    assert len(deals) == math.factorial(game.num_positions) // math.factorial(
        game.deck.copies) ** game.num_kinds
    agents = [PelmanismGreedyAgent(deck=deck, num_players=num_players)
              for _ in range(num_players)]
    for deal in deals:
        yield game, play_game(game, agents, game.from_layout(deal))


@pytest.mark.parametrize(("deck", "copies"), [("pairs:1", 2), ("pairs:2", 2), ("pairs:3", 2),
                                              ("pairs:4", 2), ("quartets:1", 4),
                                              ("quartets:2", 4)])
def test_solo_dp_equals_the_average_over_every_deal(deck, copies):
    n = int(deck.split(":")[1])
    turns = [g.turns_taken(s) for g, s in _all_deals(deck, 1)]
    assert Fraction(sum(turns), len(turns)) == solo_greedy_expected_turns(n, copies)
    assert min(turns) == n * copies // 2  # every turn a match


@pytest.mark.parametrize(("deck", "copies"), [("pairs:1", 2), ("pairs:2", 2), ("pairs:3", 2),
                                              ("pairs:4", 2), ("quartets:1", 4),
                                              ("quartets:2", 4)])
def test_two_player_dp_equals_the_distribution_over_every_deal(deck, copies):
    n = int(deck.split(":")[1])
    margins = Counter()
    total = 0
    for g, s in _all_deals(deck, 2):
        margins[int(s.pairs[0] - s.pairs[1])] += 1
        total += 1
        assert g.winners(s) == [p for p in (0, 1) if s.pairs[p] == s.pairs.max()]
    brute = {d: Fraction(c, total) for d, c in sorted(margins.items())}
    assert brute == two_player_greedy_margin(n, copies)
    outcome = two_player_greedy_outcome(n, copies)
    assert outcome.first_wins == sum((p for d, p in brute.items() if d > 0), Fraction(0))
    assert outcome.draw == brute.get(0, Fraction(0))
    assert sum(outcome) == 1


def test_small_values_by_hand():
    # 2 pairs: the first turn matches with probability 1/3 (2 turns), else 3 turns
    assert solo_greedy_expected_turns(1) == 1
    assert solo_greedy_expected_turns(2) == Fraction(1, 3) * 2 + Fraction(2, 3) * 3
    assert solo_greedy_expected_turns(3) == Fraction(13, 3)
    assert solo_greedy_expected_turns(4) == Fraction(622, 105)
    # the first player takes everything or nothing with 2 pairs
    assert two_player_greedy_outcome(2) == (Fraction(1, 3), 0, Fraction(2, 3))
    assert two_player_greedy_outcome(4) == (Fraction(3, 5), Fraction(2, 15), Fraction(4, 15))
    assert solo_greedy_expected_turns(1, copies=4) == 2


def test_exact_and_float_values_agree_and_are_fast():
    for n in (1, 7, 26):
        assert float(solo_greedy_expected_turns(n)) == pytest.approx(
            solo_greedy_expected_turns(n, exact=False), rel=1e-12)
        exact = two_player_greedy_outcome(n)
        approx = two_player_greedy_outcome(n, exact=False)
        assert all(float(a) == pytest.approx(b, abs=1e-12) for a, b in zip(exact, approx, strict=True))
    assert float(solo_greedy_expected_turns(13, copies=4)) == pytest.approx(41.6998, abs=1e-4)


def test_odd_packs_of_pairs_cannot_be_drawn_and_margins_are_consistent():
    for n in range(1, 27):
        dist = two_player_greedy_margin(n, exact=False)
        assert sum(dist.values()) == pytest.approx(1.0)
        assert all((d - n) % 2 == 0 for d in dist)  # margin has the parity of n
        if n % 2:
            assert two_player_greedy_outcome(n, exact=False).draw == 0
    assert two_player_greedy_expected_margin(1) == 1


def test_value_api_checks_its_arguments():
    assert deck_parameters("standard") == (13, 4)
    assert deck_parameters("colour") == (26, 2)
    assert deck_parameters("quartets:5") == (5, 4)
    for bad in ((0, 2), (27, 2), (14, 4), (3, 3), (True, 2)):
        with pytest.raises(InvalidOptionError):
            solo_greedy_expected_turns(*bad)
    with pytest.raises(InvalidOptionError):
        solo_optimal_expected_turns(27)


# -- the literature: optimal play and the Velleman-Warrington asymptote -----------------------
def test_greedy_is_optimal_solo_play():
    greedy = solo_greedy_table(26)
    assert greedy == [solo_optimal_expected_turns(n) for n in range(1, 27)]


def test_greedy_approaches_the_velleman_warrington_asymptote():
    gaps = [float(e) - velleman_warrington_asymptote(n)
            for n, e in enumerate(solo_greedy_table(26, exact=False), start=1)]
    assert all(abs(g) < 0.01 for g in gaps[4:])  # n >= 5
    assert all(g < 0 for n, g in enumerate(gaps, start=1) if n != 3)
    # the gap shrinks like -0.040 / n: n * gap settles near -0.040
    for n in (10, 16, 20, 26):
        assert n * gaps[n - 1] == pytest.approx(-0.040, abs=0.0015)
    assert all(abs(gaps[i]) < abs(gaps[i - 1]) for i in range(6, 26))  # from n = 6 on
    assert abs(gaps[25]) < 0.0016
    # the slope of the exact values is the asymptote's, 3 - 2 ln 2
    e = solo_greedy_table(26, exact=False)
    assert e[25] - e[24] == pytest.approx(3 - 2 * math.log(2), abs=1e-4)


def test_random_play_takes_n_squared_turns_on_average():
    # exact: from m pairs, a blind turn matches with probability 1 / (2m - 1)
    for n in range(1, 27):
        assert solo_random_expected_turns(n) == sum(2 * m - 1 for m in range(1, n + 1))


# -- sampling: engine + agents reproduce the values -------------------------------------------
def _solo_turns(deck, agent, games, seed):
    game = Pelmanism(deck, 1)
    rng = np.random.default_rng(seed)
    return np.array([
        game.turns_taken(play_game(game, [agent], game.new_game(rng), seed=i))
        for i in range(games)
    ])


def _within_3_sigma(samples, expected):
    sigma = samples.std(ddof=1) / math.sqrt(samples.size)
    assert abs(samples.mean() - float(expected)) < 3 * sigma + 1e-12, (
        f"mean {samples.mean():.4f} vs expected {float(expected):.4f} (sigma {sigma:.4f})")


@pytest.mark.parametrize(("deck", "games"), [("pairs:8", 1000), ("pairs:26", 200),
                                             ("standard", 200), ("colour", 200)])
def test_greedy_solo_games_match_the_dp(deck, games):
    kinds, copies = deck_parameters(deck)
    turns = _solo_turns(deck, PelmanismGreedyAgent(deck=deck, num_players=1), games, seed=17)
    _within_3_sigma(turns, solo_greedy_expected_turns(kinds, copies, exact=False))
    assert turns.max() <= 2 * kinds * copies  # perfect memory: never more than 2 per card


def test_greedy_two_player_games_match_the_dp():
    game = Pelmanism("pairs:6", 2)
    agents = [PelmanismGreedyAgent(deck="pairs:6", num_players=2) for _ in range(2)]
    rng = np.random.default_rng(23)
    margins = np.array([int(np.subtract(*play_game(game, agents, game.new_game(rng)).pairs))
                        for _ in range(1500)])
    outcome = two_player_greedy_outcome(6, exact=False)
    _within_3_sigma((margins > 0).astype(float), outcome.first_wins)
    _within_3_sigma((margins == 0).astype(float), outcome.draw)
    _within_3_sigma(margins.astype(float), two_player_greedy_expected_margin(6, exact=False))


def test_no_memory_solo_games_take_n_squared_turns():
    turns = _solo_turns("pairs:5", PelmanismNoMemoryAgent(), 600, seed=29)
    _within_3_sigma(turns, solo_random_expected_turns(5))


# -- the agents -------------------------------------------------------------------------------
def test_greedy_rule_on_hand_built_knowledge():
    legal = np.array([1, 1, 1, 1, 1, 1], bool)
    unknown = np.full(6, -1)
    # first flip, nothing known: the lowest position
    assert greedy_flip(unknown, np.zeros(6, bool), legal) == 0
    # a known pair (kind 2 at 3 and 5) beats the known singleton at 1
    kind = np.array([-1, 0, -1, 2, -1, 2])
    assert greedy_flip(kind, np.zeros(6, bool), legal) == 3
    # second flip: the twin of the face-up card when known ...
    legal2 = legal.copy()
    legal2[3] = False
    assert greedy_flip(kind, np.eye(6, dtype=bool)[3], legal2) == 5
    # ... else an unknown card, never a known one while unknown cards remain
    kind = np.array([-1, 0, 1, -1, -1, 2])
    legal3 = np.array([1, 1, 1, 0, 1, 1], bool)
    assert greedy_flip(kind, np.eye(6, dtype=bool)[3], legal3) == 0
    # no unknown card left: the lowest face-down card
    kind = np.array([0, 1, 2, 3, 4, 5])
    assert greedy_flip(kind, np.eye(6, dtype=bool)[0], np.array([0, 1, 1, 1, 1, 1], bool)) == 1
    # quartets: any known card of the kind is a twin
    kind = np.array([-1, 1, 1, 0, 1, -1])
    assert greedy_flip(kind, np.eye(6, dtype=bool)[4], np.array([1, 1, 1, 1, 0, 1], bool)) == 1


def test_greedy_agent_reads_the_observation():
    game = Pelmanism("pairs:3", 2)
    enc = PelmanismEncoder(game)
    s = game.from_layout(["K00", "K01", "K02", "K00", "K01", "K02"])
    mem = Memory("perfect", 2, 6)
    agent = PelmanismGreedyAgent(deck="pairs:3", num_players=2, own_memory=False)
    for a in (0, 1):  # player 0 misses: K00 at 0, K01 at 1 are known
        t = game.apply_inplace(s, a)
        mem.on_action(t.player, [p for p, _ in t.revealed])
    assert agent.act(observe(game, enc, mem, s, 1)) == 2  # nothing pairs: lowest unknown
    t = game.apply_inplace(s, 2)
    mem.on_action(1, [2])
    assert agent.act(observe(game, enc, mem, s, 1)) == 3  # K02's twin unknown: lowest unknown
    t = game.apply_inplace(s, 3)  # K00: a known pair (0, 3) for player 0
    mem.on_action(t.player, [3])
    assert agent.act(observe(game, enc, mem, s, 0)) == 0
    # memory "none": an observation shows the result of the observer's previous action
    # and what others revealed since, nothing older; by default the agent keeps what its
    # own observations showed
    layout = ["K01", "K02", "K00", "K01", "K00", "K02"]
    s, none = game.from_layout(layout), Memory("none", 2, 6)
    keeper = PelmanismGreedyAgent(deck="pairs:3", num_players=2)
    plain = PelmanismGreedyAgent(deck="pairs:3", num_players=2, own_memory=False)
    for player, a in ((0, 4), (0, 1), (1, 2), (1, 3)):  # 0: K00 / K02; 1: K00 / K01
        if player == 0:
            keeper.act(observe(game, enc, none, s, 0))  # it watches its own flip 1 face up
        game.apply_inplace(s, a)
        none.on_action(player, [a])
    obs = observe(game, enc, none, s, 0)
    assert obs["remembered_mask"].tolist() == [0, 1, 1, 1, 0, 0]  # its flip 2, then 1's
    assert plain.act(obs) == 0  # K02 at 1, K00 at 2, K01 at 3: no pair, lowest unknown
    assert keeper.act(obs) == 2  # it also knows K00 at 4: the pair (2, 4)
    keeper.reset()
    assert keeper.act(obs) == 0  # a new game forgets


def test_greedy_agent_infers_the_game_and_rejects_a_wrong_one():
    for deck, n in [("standard", 3), ("colour", 1), ("pairs:7", 6), ("quartets:4", 2)]:
        enc = PelmanismEncoder(Pelmanism(deck, n))
        assert infer_game(enc.size, enc.num_positions) == (deck, n)
    assert candidate_decks(52) == ["standard", "colour", "pairs:26", "quartets:13"]
    # the one ambiguity: quartets:1 with n + 2 players looks like pairs:2 with n
    size = PelmanismEncoder(Pelmanism("quartets:1", 3)).size
    assert size == PelmanismEncoder(Pelmanism("pairs:2", 1)).size
    assert infer_game(size, 4) == ("pairs:2", 1)
    game = Pelmanism("quartets:1", 3)
    s = play_game(game, [PelmanismGreedyAgent() for _ in range(3)],
                  game.from_layout(["K00"] * 4))
    assert game.turns_taken(s) == 2 and s.pairs.tolist() == [2, 0, 0]
    with pytest.raises(InvalidOptionError, match="no Pelmanism deck"):
        infer_game(7, 5)
    game = Pelmanism("pairs:5", 3)
    enc = PelmanismEncoder(game)
    s = game.new_game(np.random.default_rng(0))
    obs = observe(game, enc, Memory("perfect", 3, 10), s, 0)
    assert PelmanismGreedyAgent().act(obs) == 0
    assert PelmanismGreedyAgent(deck="pairs:5").act(obs) == 0
    with pytest.raises(InvalidOptionError, match="plays deck 'pairs:6'"):
        PelmanismGreedyAgent(deck="pairs:6").act(obs)
    with pytest.raises(InvalidOptionError, match="given num_players=2"):
        PelmanismGreedyAgent(deck="pairs:5", num_players=2).act(obs)
    with pytest.raises(InvalidOptionError, match="unknown deck"):
        PelmanismGreedyAgent(deck="pairs")


def test_random_agents_are_seeded_and_legal():
    game = Pelmanism("pairs:8", 2)
    rng = np.random.default_rng(1)
    s = game.new_game(rng)
    obs = observe(game, PelmanismEncoder(game), Memory("perfect", 2, 16), s, 0)
    obs["action_mask"][:5] = 0
    a, b = PelmanismRandomAgent(), PelmanismNoMemoryAgent()
    a.reset(seed=4)
    b.reset(seed=4)
    picks = [a.act(obs) for _ in range(50)]
    assert picks == [b.act(obs) for _ in range(50)] and min(picks) >= 5
    a.reset(seed=4)
    assert [a.act(obs) for _ in range(50)] == picks
    obs["action_mask"][:] = 0
    with pytest.raises(ValueError, match="no legal flip"):
        a.act(obs)
    with pytest.raises(ValueError, match="no legal flip"):
        PelmanismGreedyAgent().act(obs)
