"""Pelmanism engine, encoder and renderer: rules scripted from hand-built layouts
(docs/rulings.md Pelmanism 1-4), bad input, and hypothesis properties.

Scripts are tables of (player, position, expectations) rows, checked after the flip.
Every scripted layout is written out in full, so no test relies on what a seed deals.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.render import PelmanismRenderer
from memtab_env.games.pelmanism.rules import (
    DOWN,
    GONE,
    STANDARD_CARD_CODES,
    TURN_CAP_PER_POSITION,
    UP,
    Pelmanism,
    grid_shape,
    parse_deck,
)
from memtab_env.memory import Memory


def play(game, state, script):
    """Run (player, position, checks) rows; checks: status={pos: code}, next=player,
    over=bool, scores=[...], removed=[...], turns=int, flip=int, turn_over=bool."""
    for row, (player, pos, checks) in enumerate(script):
        assert state.current == player, f"row {row}: player {state.current} on turn, not {player}"
        t = game.apply_inplace(state, pos)
        assert t.player == player and t.action == pos
        assert t.revealed == [(pos, int(state.kinds[pos]))], f"row {row}: revealed {t.revealed}"
        for p, code in checks.get("status", {}).items():
            assert state.status[p] == code, f"row {row}: status[{p}]={state.status[p]}, want {code}"
        if "next" in checks:
            assert state.current == checks["next"] == t.next_player, f"row {row}: next {state.current}"
        if "over" in checks:
            assert state.over == checks["over"] == t.game_over, f"row {row}: over={state.over}"
        if "scores" in checks:
            assert game.scores(state).tolist() == checks["scores"], f"row {row}: scores"
        if "removed" in checks:
            assert sorted(t.removed) == sorted(checks["removed"]), f"row {row}: removed {t.removed}"
        if "turns" in checks:
            assert game.turns_taken(state) == checks["turns"], f"row {row}: turns {state.turns}"
        if "flip" in checks:
            assert state.flip == checks["flip"], f"row {row}: flip index {state.flip}"
        if "turn_over" in checks:
            assert t.turn_over == checks["turn_over"], f"row {row}: turn_over {t.turn_over}"
    return state


# -- decks, codes and layouts --------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "cards", "kinds", "copies"),
    [("standard", 52, 13, 4), ("colour", 52, 26, 2), ("pairs:1", 2, 1, 2),
     ("pairs:8", 16, 8, 2), ("pairs:26", 52, 26, 2), ("quartets:1", 4, 1, 4),
     ("quartets:13", 52, 13, 4)],
)
def test_decks_and_info(spec, cards, kinds, copies):
    g = Pelmanism(spec, num_players=3)
    assert g.deck.spec == spec and g.deck.copies == copies
    info = g.info
    assert (info.num_actions, info.num_positions, info.num_kinds) == (cards, cards, kinds)
    assert info.score_bounds == (0.0, cards / 2)
    assert info.max_turns == TURN_CAP_PER_POSITION * cards
    assert info.max_game_length == 2 * info.max_turns
    assert (info.min_players, info.max_players) == (1, 6)
    assert np.bincount(g.deck.card_kind[g.deck.cards]).tolist() == [copies] * kinds
    rows, cols = grid_shape(cards)
    assert (g.rows, g.cols) == (rows, cols) and rows * cols >= cards > (rows - 1) * cols
    assert g.options() == {"deck": spec, "num_players": 3, "first_player": 0, "max_turns": None}


def test_default_is_the_standard_deck_for_two_players():
    g = Pelmanism()
    assert g.options() == {"deck": "standard", "num_players": 2, "first_player": 0,
                           "max_turns": None}
    assert g.options() == Pelmanism.default_options
    assert (g.rows, g.cols) == (4, 13)


@pytest.mark.parametrize(
    "spec", ["", "Standard", "color", "pairs", "pairs:", "pairs:0", "pairs:27", "pairs:x",
             "quartets:14", "quartets:-1", "triples:3", "standard:2", 7, None],
)
def test_unknown_decks_are_rejected_with_what_is_allowed(spec):
    with pytest.raises(InvalidOptionError, match="standard"):
        Pelmanism(spec)


@pytest.mark.parametrize(
    "kwargs", [{"num_players": 0}, {"num_players": 7}, {"num_players": 2.0},
               {"num_players": True}, {"num_players": 2, "first_player": 2},
               {"first_player": -1}, {"max_turns": 0}, {"max_turns": 1.5},
               {"max_turns": "10"}, {"max_turns": 10**7}],
)
def test_bad_player_options(kwargs):
    with pytest.raises(InvalidOptionError, match=r"in \[|integer"):
        Pelmanism("pairs:3", **kwargs)


def test_standard_codes_and_kinds():
    d = parse_deck("standard")
    assert STANDARD_CARD_CODES[:3] == ("AS", "2S", "3S") and STANDARD_CARD_CODES[-1] == "KC"
    assert len(set(STANDARD_CARD_CODES)) == 52
    kind = {c: int(d.card_kind[d.card_id(c)]) for c in STANDARD_CARD_CODES}
    assert kind["6H"] == kind["6S"] == kind["6D"] == kind["6C"] == 5
    assert kind["AS"] == 0 and kind["10D"] == 9 and kind["KC"] == 12
    assert [d.kind_codes[kind[c]] for c in ("QH", "10S", "AD")] == ["Q", "10", "A"]


def test_colour_codes_and_kinds():
    d = parse_deck("colour")
    kind = {c: int(d.card_kind[d.card_id(c)]) for c in STANDARD_CARD_CODES}
    assert kind["6H"] == kind["6D"] != kind["6S"] == kind["6C"]
    assert d.kind_codes[kind["6H"]] == "R6" and d.kind_codes[kind["6S"]] == "B6"
    assert d.kind_codes[kind["KD"]] == "RK" and kind["AH"] == 0 and kind["KC"] == 25


def test_special_pack_codes():
    g = Pelmanism("quartets:3")
    assert g.deck.card_codes == ("K00", "K01", "K02") == g.deck.kind_codes
    s = g.from_layout(["K02", "K00", "K01"] * 4)
    assert s.kinds.tolist() == s.layout.tolist() == [2, 0, 1] * 4
    assert g.layout_codes(s) == ["K02", "K00", "K01"] * 4
    assert g.card_code(1) == "K01" and g.position_code(s, 0) == "K02"


@pytest.mark.parametrize("spec", ["standard", "colour", "pairs:5", "quartets:4"])
def test_layout_round_trips_through_codes_and_ids(spec):
    g = Pelmanism(spec)
    s = g.new_game(np.random.default_rng(5))
    assert g.from_layout(g.layout_codes(s)) == s
    assert g.from_layout(s.layout.tolist()) == s
    assert g.from_layout(np.asarray(s.layout)) == s
    assert sorted(s.layout.tolist()) == sorted(g.deck.cards.tolist())


def test_deal_is_seeded_and_uses_only_the_given_generator():
    g = Pelmanism()
    a = g.new_game(np.random.default_rng(11))
    b = g.new_game(np.random.default_rng(11))
    c = g.new_game(np.random.default_rng(12))
    assert a == b and a != c


@pytest.mark.parametrize(
    ("layout", "match"),
    [(["K00", "K00", "K01"], "has 4 cards, got 3"),
     (["K00", "K00", "K01", "K02"], "not a card of the 'pairs:2' deck"),
     (["K00", "K00", "K00", "K01"], r"wrong counts for \['K00', 'K01'\]"),
     ([0, 0, 1, 2], r"layout\[3\] must be in \[0, 1\]"),
     ([0, 0, 1, 1.0], "integer"),
     ("K00K00K01K01", "not a string")],
)
def test_bad_layouts(layout, match):
    with pytest.raises(InvalidOptionError, match=match):
        Pelmanism("pairs:2").from_layout(layout)


def test_standard_layout_needs_every_card_once():
    codes = list(STANDARD_CARD_CODES)
    codes[1] = "AS"
    with pytest.raises(InvalidOptionError, match=r"once; wrong counts for \['AS', '2S'\]"):
        Pelmanism().from_layout(codes)
    with pytest.raises(InvalidOptionError, match="'1S' is not a card"):
        Pelmanism().from_layout(["1S", *STANDARD_CARD_CODES[1:]])


# -- the rules, scripted -------------------------------------------------------------------
LAYOUT_3 = ["K00", "K01", "K02", "K00", "K01", "K02"]  # pairs at (0,3), (1,4), (2,5)


def test_a_match_is_taken_and_the_same_player_goes_again():
    g = Pelmanism("pairs:3", 2)
    s = g.from_layout(LAYOUT_3)
    play(g, s, [
        (0, 0, {"status": {0: UP}, "flip": 1, "next": 0, "turn_over": False, "turns": 0}),
        (0, 3, {"status": {0: GONE, 3: GONE}, "removed": [0, 3], "next": 0, "flip": 0,
                "scores": [1, 0], "turn_over": True, "turns": 1, "over": False}),
    ])
    assert s.owner[[0, 3]].tolist() == [0, 0] and s.pairs.tolist() == [1, 0]
    assert s.last.tolist() == [0, 3] and s.first == -1


def test_a_mismatch_goes_back_face_down_in_place_and_play_passes():
    g = Pelmanism("pairs:3", 3)
    s = g.from_layout(LAYOUT_3)
    before_layout = s.layout.copy()
    play(g, s, [
        (0, 1, {"status": {1: UP}, "next": 0}),
        (0, 2, {"status": {1: DOWN, 2: DOWN}, "removed": [], "next": 1, "scores": [0, 0, 0],
                "turn_over": True, "turns": 1}),
        (1, 2, {"status": {2: UP}}),
        (1, 0, {"status": {0: DOWN, 2: DOWN}, "next": 2, "turns": 2}),
        (2, 0, {}),
        (2, 1, {"next": 0, "turns": 3}),  # seat order wraps round
    ])
    assert np.array_equal(s.layout, before_layout)  # cards never move
    assert (s.status == DOWN).all() and (s.owner == -1).all()


def test_the_game_ends_when_every_card_is_taken():
    g = Pelmanism("pairs:3", 2)
    s = g.from_layout(LAYOUT_3)
    play(g, s, [
        (0, 0, {}), (0, 1, {"next": 1}),                           # miss
        (1, 0, {}), (1, 3, {"next": 1, "scores": [0, 1]}),         # K00
        (1, 1, {}), (1, 4, {"next": 1, "scores": [0, 2]}),         # K01
        (1, 2, {}), (1, 5, {"over": True, "scores": [0, 3], "next": 1, "turns": 4}),
    ])
    assert not g.legal_mask(s).any() and g.winners(s) == [1]
    with pytest.raises(GameOverError, match="game is over"):
        g.apply_inplace(s, 0)


LAYOUT_4 = ["K00", "K00", "K01", "K02", "K01", "K02", "K03", "K03"]


@pytest.mark.parametrize("n", [2, 3])
def test_a_tie_for_most_pairs_is_a_shared_win(n):
    g = Pelmanism("pairs:4", n)
    s = g.from_layout(LAYOUT_4)
    zeros = [0] * (n - 2)
    play(g, s, [
        (0, 0, {}), (0, 1, {"next": 0, "scores": [1, 0, *zeros]}),
        (0, 2, {}), (0, 4, {"next": 0, "scores": [2, 0, *zeros]}),
        (0, 3, {}), (0, 6, {"next": 1}),
        (1, 3, {}), (1, 5, {"next": 1, "scores": [2, 1, *zeros]}),
        (1, 6, {}), (1, 7, {"over": True, "scores": [2, 2, *zeros], "turns": 5}),
    ])
    assert g.winners(s) == [0, 1]


def test_the_most_pairs_wins_alone():
    g = Pelmanism("pairs:4", 2)
    s = g.from_layout(LAYOUT_4)
    play(g, s, [
        (0, 0, {}), (0, 1, {"scores": [1, 0]}),
        (0, 2, {}), (0, 3, {"next": 1}),
        (1, 2, {}), (1, 4, {"scores": [1, 1], "next": 1}),
        (1, 3, {}), (1, 6, {"next": 0}),
        (0, 3, {}), (0, 5, {"scores": [2, 1], "next": 0}),
        (0, 6, {}), (0, 7, {"over": True, "scores": [3, 1]}),
    ])
    assert g.winners(s) == [0]


def test_quartets_match_any_two_cards_of_a_kind():
    g = Pelmanism("quartets:2", 2)
    s = g.from_layout(["K00", "K01", "K00", "K01", "K00", "K01", "K00", "K01"])
    play(g, s, [
        (0, 0, {}), (0, 4, {"removed": [0, 4], "scores": [1, 0], "next": 0}),
        (0, 1, {}), (0, 2, {"next": 1}),
        (1, 2, {}), (1, 6, {"removed": [2, 6], "scores": [1, 1], "next": 1}),  # K00 again
        (1, 7, {}), (1, 1, {"scores": [1, 2]}),
        (1, 3, {}), (1, 5, {"over": True, "scores": [1, 3], "turns": 5}),
    ])
    assert g.winners(s) == [1]


def test_standard_deck_matches_by_rank_ignoring_suits():
    g = Pelmanism("standard", 2)
    codes = list(STANDARD_CARD_CODES)  # AS..KS, AH..KH, AD..KD, AC..KC
    s = g.from_layout(codes)
    six_s, six_h, seven_s = codes.index("6S"), codes.index("6H"), codes.index("7S")
    play(g, s, [
        (0, six_s, {}), (0, seven_s, {"next": 1, "removed": []}),       # 6S / 7S: no
        (1, six_s, {}), (1, six_h, {"removed": [six_s, six_h], "scores": [0, 1]}),  # 6S 6H
    ])
    assert g.position_code(s, six_h) == "6H" and g.card_code(int(s.kinds[six_h])) == "6"


def test_colour_deck_matches_rank_and_colour():
    g = Pelmanism("colour", 2)
    codes = list(STANDARD_CARD_CODES)
    s = g.from_layout(codes)
    six_s, six_h, six_d, six_c = (codes.index(c) for c in ("6S", "6H", "6D", "6C"))
    play(g, s, [
        (0, six_h, {}), (0, six_s, {"next": 1, "removed": []}),          # red and black: no
        (1, six_h, {}), (1, six_d, {"removed": [six_h, six_d], "scores": [0, 1], "next": 1}),
        (1, six_c, {}), (1, six_s, {"removed": [six_c, six_s], "scores": [0, 2]}),
    ])
    assert g.card_code(int(s.kinds[six_s])) == "B6"


def test_solo_counts_turns_extra_turns_included():
    g = Pelmanism("pairs:3", 1)
    s = g.from_layout(LAYOUT_3)
    play(g, s, [
        (0, 0, {}), (0, 1, {"next": 0, "turns": 1}),   # miss: the solo player goes on
        (0, 2, {}), (0, 4, {"next": 0, "turns": 2}),
        (0, 0, {}), (0, 3, {"turns": 3, "scores": [1]}),
        (0, 1, {}), (0, 4, {"turns": 4, "scores": [2]}),
        (0, 2, {}), (0, 5, {"turns": 5, "scores": [3], "over": True}),
    ])
    assert g.turns_taken(s) == 5 and g.winners(s) == [0]


@pytest.mark.parametrize("n", [1, 2])
def test_the_turn_limit_house_rule_ends_the_game_as_it_stands(n):
    g = Pelmanism("pairs:3", n, max_turns=3)
    assert g.info.max_turns == 3 and g.info.max_game_length == 6
    assert g.options()["max_turns"] == 3
    s = g.from_layout(LAYOUT_3)
    other = 1 % n
    play(g, s, [
        (0, 0, {}), (0, 3, {"next": 0, "scores": [1, 0][:n], "over": False}),
        (0, 1, {}), (0, 2, {"next": other, "turns": 2, "over": False}),
        (other, 1, {}), (other, 4, {"turns": 3, "over": True, "next": other}),
    ])
    assert g.stopped_by_turn_limit(s) and not g.legal_mask(s).any()
    assert g.scores(s).sum() == 2 and (s.status == DOWN).sum() == 2
    assert g.winners(s) == ([0] if n == 1 else [0, 1])
    text = PelmanismRenderer(g).ansi(s)
    assert "stopped by the turn limit" in text
    # a limit reached on a miss ends the game without passing the turn
    s = g.from_layout(LAYOUT_3)
    play(g, s, [(0, 0, {}), (0, 1, {}), (other, 0, {}), (other, 1, {}),
                (0, 0, {}), (0, 1, {"over": True, "next": 0, "scores": [0] * n})])
    assert g.winners(s) == list(range(n))
    # without the house rule the same flips go on
    free = Pelmanism("pairs:3", 2)
    s = free.from_layout(LAYOUT_3)
    for a in (0, 1, 0, 1, 0, 1, 0, 1):
        free.apply_inplace(s, a)
    assert not s.over and s.turns == 4


def test_first_player_option():
    g = Pelmanism("pairs:2", 3, first_player=2)
    s = g.from_layout(["K00", "K01", "K00", "K01"])
    play(g, s, [(2, 0, {}), (2, 1, {"next": 0})])


# -- bad actions ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("setup", "action", "error", "match"),
    [([0], 0, IllegalActionError, r"position 0: its card was already flipped this turn; "
                                  r"face-down positions that may be flipped: \[1, 2, 3, 4, 5\]"),
     ([0, 3], 0, IllegalActionError, r"has been taken by player 0; .* \[1, 2, 4, 5\]"),
     ([0, 3], 3, IllegalActionError, "has been taken by player 0"),
     ([], 6, IllegalActionError, r"out of range: actions are integers in \[0, 5\]"),
     ([], -1, IllegalActionError, "out of range"),
     ([0], 1.0, IllegalActionError, "must be an integer"),
     ([], True, IllegalActionError, "must be an integer"),
     ([], "1", IllegalActionError, "must be an integer"),
     ([], None, IllegalActionError, "must be an integer"),
     ([0, 3, 1, 4, 2, 5], 0, GameOverError, "the game is over")],
)
def test_illegal_flips_raise_and_leave_the_state_unchanged(setup, action, error, match):
    g = Pelmanism("pairs:3", 2)
    s = g.from_layout(LAYOUT_3)
    for a in setup:
        g.apply_inplace(s, a)
    before = s.copy()
    with pytest.raises(error, match=match):
        g.apply_inplace(s, action)
    assert s == before
    with pytest.raises(error):
        g.apply(s, action)
    assert s == before


def test_numpy_integer_actions_are_accepted():
    g = Pelmanism("pairs:3", 2)
    s = g.from_layout(LAYOUT_3)
    g.apply_inplace(s, np.int64(0))
    g.apply_inplace(s, np.array(3))
    assert s.pairs.tolist() == [1, 0]


# -- properties ----------------------------------------------------------------------------
decks = st.sampled_from(["standard", "colour", "pairs:1", "pairs:2", "pairs:5", "pairs:13",
                         "quartets:1", "quartets:3", "quartets:7"])


@settings(max_examples=60, deadline=None)
@given(deck=decks, n=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       limit=st.one_of(st.none(), st.integers(1, 40)))
def test_invariants_hold_after_every_flip(deck, n, seed, limit):
    g = Pelmanism(deck, n, first_player=seed % n, max_turns=limit)
    rng = np.random.default_rng(seed)
    s = g.new_game(rng)
    layout = s.layout.copy()
    flips = 0
    while not s.over:
        mask = g.legal_mask(s)
        assert mask.any(), "mask empty before the end"
        assert np.array_equal(mask, s.status == DOWN)
        before = s.copy()
        a = int(rng.choice(np.flatnonzero(mask)))
        new, t = g.apply(s, a)
        assert s == before, "apply changed its input"
        s = new
        flips += 1
        # cards conserved: the layout never changes, taken cards leave in matching pairs
        assert np.array_equal(s.layout, layout)
        gone = s.status == GONE
        assert ((s.owner >= 0) == gone).all()
        assert s.pairs.sum() * 2 == gone.sum()
        assert np.bincount(s.owner[gone], minlength=n).tolist() == (2 * s.pairs).tolist()
        counts = np.bincount(s.kinds[gone], minlength=g.num_kinds)
        assert (counts % 2 == 0).all()
        # at most one card face up, and only between the two flips of a turn
        assert np.count_nonzero(s.status == UP) == s.flip
        assert t.turn_over == (s.flip == 0)
        # game over iff every card has been taken (or the turn limit is reached)
        at_limit = limit is not None and s.turns >= limit
        assert s.over == (bool(gone.all()) or at_limit) == t.game_over
        assert g.stopped_by_turn_limit(s) == (s.over and not gone.all())
    assert flips == 2 * g.turns_taken(s) <= g.info.max_game_length
    assert g.turns_taken(s) <= g.info.max_turns
    assert not g.legal_mask(s).any()
    assert g.scores(s).sum() == g.num_pairs or g.stopped_by_turn_limit(s)
    best = g.scores(s).max()
    assert g.winners(s) == [p for p in range(n) if g.scores(s)[p] == best]


# -- the observation encoder ---------------------------------------------------------------
def test_encoder_docstring_table_matches_fields():
    doc = PelmanismEncoder.__doc__
    enc = PelmanismEncoder(Pelmanism("standard", 3))
    rows = [line.split()[0] for line in doc.splitlines()
            if line.strip() and line.strip().split()[0] in enc.offsets]
    assert rows == [f.name for f in enc.fields]
    assert "P (3 + K) + 2 n + 2" in doc


@pytest.mark.parametrize(("deck", "n", "size"), [("standard", 2, 838), ("colour", 2, 1514),
                                                 ("pairs:8", 4, 16 * 11 + 10),
                                                 ("quartets:2", 1, 8 * 5 + 4)])
def test_encoder_size(deck, n, size):
    enc = PelmanismEncoder(Pelmanism(deck, n))
    assert enc.size == size == enc.low.size == enc.high.size
    assert enc.high.max() == max(1, Pelmanism(deck).num_pairs)


def test_encoder_shows_what_the_observer_may_see():
    g = Pelmanism("pairs:3", 3)
    enc = PelmanismEncoder(g)
    s = g.from_layout(LAYOUT_3)
    mem = Memory("perfect", 3, 6)
    for a in (1, 2, 0, 3):  # player 0 misses (1, 2); player 1 takes (0, 3)
        t = g.apply_inplace(s, a)
        mem.on_action(t.player, [p for p, _ in t.revealed])
    g.apply_inplace(s, 5)  # player 1 flips position 5 (K02): face up now
    remembered = mem.remembered(2, g.face_down(s))
    assert remembered.tolist() == [False, True, True, False, False, False]
    v = enc.views(enc.encode(s, 2, remembered))
    assert v["status"].tolist() == [[0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0],
                                    [0, 1, 0]]
    # kinds: taken (0, 3) and face up (5) for everybody, remembered (1, 2), unseen (4)
    assert v["card"].argmax(1).tolist() == [0, 1, 2, 0, 0, 2]
    assert v["card"].sum(1).tolist() == [1, 1, 1, 1, 0, 1]
    # observer 2 first: seats 2, 0, 1 -> pairs 0, 0, 1; player 1 on turn is entry 2
    assert v["pairs"].tolist() == [0, 0, 1]
    assert v["turn"].tolist() == [0, 0, 1] and v["flip"].tolist() == [0, 1]
    nothing = enc.views(enc.encode(s, 2, np.zeros(6, bool)))
    assert nothing["card"].sum(1).tolist() == [1, 0, 0, 1, 0, 1]


@settings(max_examples=40, deadline=None)
@given(deck=decks, n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       memory=st.sampled_from(["perfect", "none", "window:3"]))
def test_observations_are_fresh_in_bounds_and_blind_to_unseen_cards(deck, n, seed, memory):
    g = Pelmanism(deck, n)
    enc = PelmanismEncoder(g)
    rng = np.random.default_rng(seed)
    s = g.new_game(rng)
    mem = Memory(memory, n, g.num_positions)
    for _ in range(int(rng.integers(0, 3 * g.num_positions))):
        if s.over:
            break
        t = g.apply_inplace(s, int(rng.choice(np.flatnonzero(g.legal_mask(s)))))
        mem.on_action(t.player, [p for p, _ in t.revealed])
    obs_player = int(rng.integers(n))
    remembered = mem.remembered(obs_player, g.face_down(s))
    a = enc.encode(s, obs_player, remembered)
    b = enc.encode(s, obs_player, remembered)
    assert a.dtype == np.int8 and a.shape == (enc.size,) and a is not b
    assert np.array_equal(a, b) and (a >= enc.low).all() and (a <= enc.high).all()
    # swap two face-down cards the observer does not know: the observation is the same
    unseen = np.flatnonzero(g.face_down(s) & ~remembered)
    if unseen.size >= 2:
        i, j = unseen[:2]
        other = s.copy()
        layout, kinds = other.layout.copy(), other.kinds.copy()
        layout[[i, j]], kinds[[i, j]] = layout[[j, i]], kinds[[j, i]]
        other.layout, other.kinds = layout, kinds
        assert np.array_equal(enc.encode(other, obs_player, remembered), a)


# -- the renderer --------------------------------------------------------------------------
def test_ansi_shows_the_table_the_previous_turn_and_the_pairs():
    g = Pelmanism("standard", 2)
    codes = list(STANDARD_CARD_CODES)
    s = g.from_layout(codes)
    r = PelmanismRenderer(g)
    text = r.ansi(s)
    assert "player_0 to play flip 1 of 2" in text and text.count("##") == 52
    for a in (codes.index("QH"), codes.index("10S"), codes.index("QH")):
        g.apply_inplace(s, a)
    text = r.ansi(s)
    assert "player_1 to play flip 2 of 2" in text and " QH" in text
    assert "previous turn: player_0 flipped 24 (QH) and 9 (10S): no match" in text
    assert text.count("##") == 51
    g.apply_inplace(s, codes.index("QS"))
    text = r.ansi(s)
    assert "a match, taken" in text and "*player_1  pairs  1  taken: QS QH" in text
    assert text.count("##") == 50


def test_ansi_reports_the_result():
    g = Pelmanism("pairs:1", 1)
    s = g.from_layout(["K00", "K00"])
    g.apply_inplace(s, 0)
    g.apply_inplace(s, 1)
    text = PelmanismRenderer(g).ansi(s)
    assert "table cleared in 1 turns" in text and "turns taken: 1" in text
    g2 = Pelmanism("pairs:2", 2)
    s = g2.from_layout(["K00", "K01", "K00", "K01"])
    for a in (0, 1, 0, 2, 1, 3):
        g2.apply_inplace(s, a)
    assert "winner(s) player_1 with 2 pairs" in PelmanismRenderer(g2).ansi(s)


@pytest.mark.parametrize(("deck", "n"), [("standard", 2), ("pairs:1", 1), ("quartets:5", 6)])
def test_rgb_images_have_one_size_per_game(deck, n):
    g = Pelmanism(deck, n)
    r = PelmanismRenderer(g)
    rng = np.random.default_rng(3)
    s = g.new_game(rng)
    shapes = set()
    while True:
        img = r.rgb(s)
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
        shapes.add(img.shape)
        if s.over:
            break
        for _ in range(7):
            if not s.over:
                g.apply_inplace(s, int(rng.choice(np.flatnonzero(g.legal_mask(s)))))
    assert shapes == {(r.height, r.width, 3)}


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_state_is_views_into_its_own_rows(how: str) -> None:
    import copy
    import pickle

    from memtab_env.games.pelmanism import rules_kernels as K

    game = Pelmanism("pairs:3")
    state = game.from_layout([0, 1, 2, 0, 1, 2])
    game.apply_inplace(state, 0)
    other = {"copy": state.copy, "deepcopy": lambda: copy.deepcopy(state),
             "pickle": lambda: pickle.loads(pickle.dumps(state))}[how]()
    assert other == state and other.data is not state.data and other.counts is not state.counts
    for name in ("layout", "kinds", "status", "owner", "pairs", "last"):
        view = getattr(other, name)
        assert np.shares_memory(view, other.data) and not np.shares_memory(view, state.data), name
    other.status[4] = GONE  # a write through a view lands in the copy's row only
    assert other.data[0, K.HEAD + 2 * 6 + 4] == GONE and state.status[4] == DOWN
    other.status[4] = DOWN
    t = game.apply_inplace(other, 3)  # the kernel writes the rows; the views show it
    assert t.removed == [0, 3] and other.owner[[0, 3]].tolist() == [0, 0]
    assert other.pairs.tolist() == [1, 0] and other.turns == 1 and other.current == 0
    assert state.status[0] == UP and state.turns == 0 and state.pairs.tolist() == [0, 0]
