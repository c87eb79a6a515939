"""MemTab rules, scripted from hand-built layouts (docs/rulings.md MemTab 1-10).

Each script is a table of (player, position, expectation) rows; expectations are checked
after the flip. Layout fillers never create accidental pairs with the scripted flips
because every scripted position is named explicitly.
"""

from __future__ import annotations

import numpy as np
import pytest

from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.memtab.rules import DOWN, GONE, MAX_TURNS, TABLEAU, UP, MemTab
from tests.helpers import layout_with


def play(game, state, script):
    """Run a script of (player, position, checks) rows; checks is a dict of expectations:
    status={pos: code}, next=player, over=bool, scores=[...], pair=True/False."""
    for row, (player, pos, checks) in enumerate(script):
        assert state.current == player, f"row {row}: expected player {player} on turn"
        t = game.apply_inplace(state, pos)
        for p, st in checks.get("status", {}).items():
            assert state.status[p] == st, f"row {row}: status[{p}]={state.status[p]}, want {st}"
        if "next" in checks:
            assert state.current == checks["next"], f"row {row}: next player {state.current}"
        if "over" in checks:
            assert state.over == checks["over"], f"row {row}: over={state.over}"
        if "scores" in checks:
            assert game.scores(state).tolist() == checks["scores"], f"row {row}: scores"
        if "removed" in checks:
            assert sorted(t.removed) == sorted(checks["removed"]), f"row {row}: removed {t.removed}"
        if "flip" in checks:
            assert state.flip == checks["flip"], f"row {row}: flip index {state.flip}"
    return state


def test_match_on_flips_one_and_two_leaves_the_game_and_gives_an_extra_turn():
    g = MemTab(2)
    s = g.from_layout(layout_with(p0="R4", p1="R4", p2="B7"))
    play(g, s, [
        (0, 0, {"status": {0: UP}, "flip": 1}),
        (0, 1, {"status": {0: GONE, 1: GONE}, "removed": [0, 1], "flip": 2}),
        # nobody scores the pair; the third card goes to the tableau; extra turn
        (0, 2, {"status": {2: TABLEAU}, "next": 0, "scores": [-7, 0], "flip": 0}),
    ])
    assert s.turn == 2


def test_unmatched_first_two_stay_up_then_go_back_down_and_play_passes():
    g = MemTab(2)
    s = g.from_layout(layout_with(p0="R4", p1="B4", p2="R2"))
    play(g, s, [
        (0, 0, {"status": {0: UP}}),
        (0, 1, {"status": {0: UP, 1: UP}, "removed": []}),
    ])
    # flip 3 cannot pick the face-up cards
    for pos in (0, 1):
        before = s.copy()
        with pytest.raises(IllegalActionError, match="already flipped this turn"):
            g.apply_inplace(s, pos)
        assert s == before
    play(g, s, [(0, 2, {"status": {0: DOWN, 1: DOWN, 2: TABLEAU}, "next": 1, "scores": [2, 0]})])


def test_third_card_pairs_with_its_twin_in_the_own_tableau():
    g = MemTab(2)
    s = g.from_layout(layout_with(p0="R2", p1="B3", p2="B8", p3="R5", p4="R6", p5="B8",
                                  p6="R7", p7="B5", p8="R8"))
    play(g, s, [
        (0, 0, {}), (0, 1, {}), (0, 2, {"status": {2: TABLEAU}, "next": 1, "scores": [-8, 0]}),
        (1, 3, {}), (1, 4, {}), (1, 8, {"next": 0, "scores": [-8, 8]}),
        # player 0 takes the twin of its B8: both leave, score back to 0, extra turn
        (0, 6, {}), (0, 7, {}),
        (0, 5, {"status": {2: GONE, 5: GONE}, "removed": [2, 5], "next": 0, "scores": [0, 8]}),
    ])
    assert g.tableau(s, 0).size == 0


def test_twin_in_another_tableau_does_not_pair():
    g = MemTab(2)
    s = g.from_layout(layout_with(p0="R2", p1="B3", p2="R8", p3="R5", p4="R6", p5="R8"))
    play(g, s, [
        (0, 0, {}), (0, 1, {}), (0, 2, {"next": 1}),
        (1, 3, {}), (1, 4, {}),
        (1, 5, {"status": {2: TABLEAU, 5: TABLEAU}, "removed": [], "next": 0, "scores": [8, 8]}),
    ])


def test_twin_face_up_this_turn_does_not_pair_with_the_third_card():
    g = MemTab(2)
    s = g.from_layout(layout_with(p0="R3", p1="B6", p2="R3"))
    play(g, s, [(0, 0, {}), (0, 1, {}),
                (0, 2, {"status": {0: DOWN, 2: TABLEAU}, "removed": [], "next": 1})])


def test_instant_win_two_pairs_in_one_turn_beats_a_higher_score():
    g = MemTab(2)
    s = g.from_layout(layout_with(
        p0="B2", p1="R7", p2="B6", p3="R8", p4="R6", p5="R5", p6="R4", p7="R4", p8="B6"))
    play(g, s, [
        (0, 0, {}), (0, 1, {}), (0, 2, {"next": 1, "scores": [-6, 0]}),
        (1, 3, {}), (1, 4, {}), (1, 5, {"next": 0, "scores": [-6, 5]}),
        (0, 6, {}), (0, 7, {"removed": [6, 7]}),
        (0, 8, {"removed": [2, 8], "over": True, "scores": [0, 5]}),
    ])
    assert s.instant_win and g.instant_win(s)
    assert g.winners(s) == [0]
    assert g.legal_mask(s).sum() == 0
    with pytest.raises(GameOverError):
        g.apply_inplace(s, 9)


def test_extra_turn_chain_then_pass():
    g = MemTab(3)
    s = g.from_layout(layout_with(p0="R2", p1="R2", p2="R3", p3="R4", p4="R4", p5="R5",
                                  p6="B2", p7="B3", p8="B4"))
    play(g, s, [
        (0, 0, {}), (0, 1, {}), (0, 2, {"next": 0}),  # pair -> extra turn
        (0, 3, {}), (0, 4, {}), (0, 5, {"next": 0}),  # pair -> another extra turn
        (0, 6, {}), (0, 7, {}), (0, 8, {"next": 1}),  # no pair -> pass
    ])
    assert s.turn == 4
    assert g.scores(s).tolist() == [3 + 5 - 4, 0, 0]


def test_end_check_at_the_start_of_an_extra_turn():
    """A pair earns an extra turn, but if <= 2 face-down cards remain the game ends first."""
    g = MemTab(2)
    lay = layout_with(p25="R8", p26="R8", p27="B2")
    s = g.from_layout(lay)
    s.status[:22] = GONE  # cards 22..27 remain: six face-down
    play(g, s, [
        (0, 22, {}), (0, 23, {}), (0, 24, {"next": 1, "over": False}),  # 3 left
        # a pair with flips 1+2 (2 leave) and flip 3 to the tableau leaves 0 face down
        (1, 25, {}), (1, 26, {"removed": [25, 26]}), (1, 27, {"over": True}),
    ])
    assert not s.instant_win


def test_game_ends_with_exactly_two_face_down_but_not_three():
    g = MemTab(2)
    s = g.from_layout(layout_with(p23="R2", p24="R2", p25="R4"))
    s.status[:23] = GONE  # five face down: 23..27 (states built by hand for the end game)
    play(g, s, [(0, 23, {}), (0, 24, {"removed": [23, 24]}), (0, 25, {"over": True})])
    assert int((s.status == DOWN).sum()) == 2

    s = g.from_layout(layout_with(p22="R2", p23="R2", p24="R4"))
    s.status[:22] = GONE  # six face down
    play(g, s, [(0, 22, {}), (0, 23, {}), (0, 24, {"over": False, "next": 0})])  # 3 left
    assert int((s.status == DOWN).sum()) == 3


def _with_tableaux(g, layout, tableaux, face_down):
    """A hand-built end-game state: ``tableaux[p]`` positions in player p's tableau, only
    ``face_down`` positions left on the table, everything else gone."""
    s = g.from_layout(layout)
    s.status[:] = GONE
    for p, positions in enumerate(tableaux):
        for pos in positions:
            s.status[pos] = TABLEAU
            s.owner[pos] = p
    s.status[list(face_down)] = DOWN
    return s


def test_shared_win_on_equal_scores_two_players():
    g = MemTab(2)
    lay = layout_with(p0="R5", p1="R2", p2="R3", p3="R6", p25="B4", p26="B8", p27="R6")
    s = _with_tableaux(g, lay, [[0], [1, 2, 3]], [25, 26, 27])
    play(g, s, [(0, 25, {}), (0, 26, {}), (0, 27, {"over": True, "scores": [11, 11]})])
    assert g.winners(s) == [0, 1]


def test_shared_win_three_players_after_a_last_tableau_pair():
    g = MemTab(3)
    lay = layout_with(p0="R5", p1="R2", p2="B2", p3="B3", p25="B4", p26="B8", p27="R5")
    s = _with_tableaux(g, lay, [[0], [1, 2], [3]], [25, 26, 27])
    # flip 3 pairs off R5: a pair earns another turn, but only 2 face-down cards remain
    play(g, s, [(0, 25, {}), (0, 26, {}),
                (0, 27, {"removed": [0, 27], "over": True, "scores": [0, 0, -3]})])
    assert g.winners(s) == [0, 1]
    assert not s.instant_win


def test_solo_game_runs_to_the_end():
    g = MemTab(1)
    rng = np.random.default_rng(3)
    s = g.new_game(rng)
    while not s.over:
        assert s.current == 0
        g.apply_inplace(s, int(np.flatnonzero(g.legal_mask(s))[0]))
    assert g.winners(s) == [0]


def test_six_players_rotate_in_seat_order():
    g = MemTab(6, first_player=4)
    # layout without any pair in consecutive flips: fill with a fixed order that avoids them
    s = g.from_layout(layout_with(**{f"p{i}": c for i, c in enumerate(
        ["R2", "R3", "R4", "R5", "R6", "R7", "R8", "B2", "B3", "B4", "B5", "B6", "B7", "B8",
         "R3", "R2", "R5", "R4", "R7", "R6", "B2"])}))
    seen = []
    for pos in range(18):
        seen.append(s.current)
        g.apply_inplace(s, pos)
    assert seen == [4] * 3 + [5] * 3 + [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3
    assert s.current == 4


def test_scores_are_red_minus_black():
    g = MemTab(1)
    s = g.from_layout(layout_with(p0="R8", p1="B8", p2="R6", p3="B2", p4="B3", p5="R4",
                                  p6="B5", p7="R7", p8="B3"))
    play(g, s, [(0, 0, {}), (0, 1, {}), (0, 2, {"scores": [6]}),
                (0, 3, {}), (0, 4, {}), (0, 5, {"scores": [10]}),
                (0, 6, {}), (0, 7, {}), (0, 8, {"scores": [10 - 3]})])


@pytest.mark.parametrize("status,reason", [(GONE, "left the game"), (TABLEAU, "in a tableau")])
def test_illegal_flips_raise_and_leave_the_state_unchanged(status, reason):
    g = MemTab(2)
    s = g.from_layout(layout_with())
    s.status[5] = status
    if status == TABLEAU:
        s.owner[5] = 1
    before = s.copy()
    with pytest.raises(IllegalActionError, match=reason) as exc:
        g.apply_inplace(s, 5)
    assert "face-down positions that may be flipped" in str(exc.value)
    assert s == before


@pytest.mark.parametrize("action", [-1, 28, 1000, 2.5, "3", None, True, [1]])
def test_bad_action_values_raise_clear_errors(action):
    g = MemTab(2)
    s = g.new_game(np.random.default_rng(0))
    before = s.copy()
    with pytest.raises(IllegalActionError, match=r"\[0, 27\]"):
        g.apply_inplace(s, action)
    assert s == before


def test_numpy_integer_actions_are_accepted():
    g = MemTab(2)
    s = g.new_game(np.random.default_rng(0))
    g.apply_inplace(s, np.int64(3))
    g.apply_inplace(s, np.array(4))
    assert s.flip == 2


@pytest.mark.parametrize("kwargs,msg", [
    ({"num_players": 0}, r"num_players must be in \[1, 6\]"),
    ({"num_players": 7}, r"num_players must be in \[1, 6\]"),
    ({"num_players": "2"}, "num_players must be an integer"),
    ({"num_players": 3, "first_player": 3}, r"first_player must be in \[0, 2\]"),
])
def test_bad_options(kwargs, msg):
    with pytest.raises(InvalidOptionError, match=msg):
        MemTab(**kwargs)


@pytest.mark.parametrize("layout,msg", [
    (["R2"] * 28, "exactly twice"),
    (layout_with()[:27], "28 cards"),
    (layout_with()[:27] + ["X9"], "not a MemTab card"),
])
def test_bad_layouts(layout, msg):
    with pytest.raises(InvalidOptionError, match=msg):
        MemTab().from_layout(layout)


def test_info_block():
    g = MemTab(4)
    assert g.info.num_actions == 28 and g.info.num_kinds == 14
    assert g.info.max_turns == MAX_TURNS == 26
    assert g.info.max_game_length == 78
    assert g.info.score_bounds == (-35.0, 35.0)


def test_direct_kernel_entries_agree_with_the_dispatched_kernels():
    """The scalar engine calls the compiled kernels without numba's dispatcher
    (``rules_kernels.direct``); over random games they must return and write exactly
    what the dispatched kernels do, and the engine objects must still pickle."""
    import pickle

    from memtab_env.games.memtab import rules_kernels as K
    from memtab_env.memory import Memory

    step, observe = K.direct("step"), K.direct("observe")
    rng = np.random.default_rng(3)
    for game_no in range(30):
        n = 1 + game_no % 6
        a = K.new_state(rng.permutation(np.repeat(np.arange(14), 2)).astype(np.int8), 0)
        b = a.copy()
        memory = Memory("none" if game_no % 2 else "perfect", n, 28)
        while not a[K.OVER]:
            for o in range(n):
                values, thr = memory.source(o)
                x, y = np.empty(507 + 16 * n + 56, np.int8), np.empty(507 + 16 * n + 56, np.int8)
                K.observe(a, n, o, values, thr, o == a[K.CURRENT], x)
                observe(a, n, o, values, thr, bool(o == a[K.CURRENT]), y)
                assert np.array_equal(x, y)
            pos = int(rng.choice(np.flatnonzero(a[K.STATUS : K.OWNER] == K.DOWN)))
            actor = int(a[K.CURRENT])
            assert K.step(a, pos, n) == step(b, pos, n)
            assert np.array_equal(a, b)
            memory.on_action(actor, [pos])
        assert step(b, 0, n) == K.ERR_OVER and np.array_equal(a, b)
    game = MemTab(num_players=3)
    assert pickle.loads(pickle.dumps(game)).num_players == 3
