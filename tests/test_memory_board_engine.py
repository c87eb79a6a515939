"""Memory: The Board Game: board data, rules engine, observation encoder, renderer, agents.

Rules are checked with scripted games on hand-built layouts (never on what a seed happens
to deal); properties with hypothesis; games are driven without the env layer: engine +
:class:`memtab_env.memory.Memory` + encoder, as the AEC env does.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memtab_env.agents.memory_board_agents import (
    MemoryBoardGreedyAgent,
    MemoryBoardRandomAgent,
    best_group,
    trunk_for,
)

from memtab_env.boards import Board, default_board, load_board
from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError
from memtab_env.games.memory_board.observation import MemoryBoardEncoder
from memtab_env.games.memory_board.render import MemoryBoardRenderer
from memtab_env.games.memory_board.rules import (
    CHILDREN,
    CHOOSE,
    DOWN,
    FINAL,
    FLIP2,
    FREE,
    MAIN,
    PLACED,
    UP,
    MemoryBoard,
    MemoryBoardState,
)
from memtab_env.memory import Memory

# A small board: 2 rows of 8; farmland Y on columns 0-3, river B on columns 4-7.
#   spaces  0  1  2  3 | 4  5  6  7
#           8  9 10 11 |12 13 14 15
SMALL = {
    "name": "small",
    "rows": 2,
    "cols": 8,
    "landscapes": [
        {"letter": "Y", "name": "farmland", "pictures": ["tractor", "scarecrow", "hay", "corn"]},
        {"letter": "B", "name": "river", "pictures": ["fish", "duck", "frog", "boat"]},
    ],
    "grid": ["YYYYBBBB", "YYYYBBBB"],
}
#: every pair on two neighbouring spaces of its own landscape
SMALL_LAYOUT = ["Y1", "Y1", "Y2", "Y2", "B1", "B1", "B2", "B2",
                "Y3", "Y3", "Y4", "Y4", "B3", "B3", "B4", "B4"]  # fmt: skip


def layout_with(game: MemoryBoard, fixed: dict[int, str]) -> list[str]:
    """A full layout with ``fixed`` codes at the given spaces, the rest in kind order."""
    codes = game.board.kind_codes
    counts = dict.fromkeys(codes, 2)
    layout: list[str | None] = [None] * game.num_spaces
    for space, code in fixed.items():
        layout[space] = code
        counts[code] -= 1
        assert counts[code] >= 0, f"more than two {code}"
    rest = [c for c in codes for _ in range(counts[c])]
    return [c if c is not None else rest.pop(0) for c in layout]


def play(game: MemoryBoard, state: MemoryBoardState, steps: list[tuple[int, int]]) -> list:
    """Apply ``(player, action)`` steps, checking that ``player`` is on turn each time."""
    out = []
    for player, action in steps:
        assert game.current_player(state) == player, (player, action, state)
        out.append(game.apply_inplace(state, action))
    return out


def collect(p: int, a: int, b: int) -> list[tuple[int, int]]:
    return [(p, a), (p, b)]


def place(game: MemoryBoard, p: int, *spaces: int) -> list[tuple[int, int]]:
    return [(p, game.place_offset + s) for s in spaces]


def check_raises(game: MemoryBoard, state: MemoryBoardState, action: int, *words: str) -> None:
    """``action`` raises IllegalActionError mentioning ``words`` and changes nothing."""
    before = state.copy()
    with pytest.raises(IllegalActionError) as err:
        game.apply_inplace(state, action)
    for w in words:
        assert w in str(err.value), (w, str(err.value))
    assert state == before
    assert not game.legal_mask(state)[action]


def invariants(game: MemoryBoard, state: MemoryBoardState) -> None:
    """Cards conserved, supply never negative, trees equal the trunks handed out."""
    p = game.num_spaces
    on_space = (state.status == DOWN) | (state.status == UP)
    held = state.holder >= 0
    placed_ids = state.placed[state.placed >= 0]
    is_placed = np.zeros(p, dtype=int)
    np.add.at(is_placed, placed_ids, 1)
    # every card is in exactly one place: on its dealt space, held, or placed once
    assert (on_space.astype(int) + held + is_placed == 1).all()
    assert ((state.status == PLACED) == (state.placed >= 0)).all()
    assert (state.holder[on_space] == -1).all()
    # a returned card lies on its own landscape
    spaces = np.flatnonzero(state.placed >= 0)
    assert (game.space_landscape[spaces] == game.kind_landscape[state.layout[state.placed[spaces]]]).all()
    # cards leave the table only in pairs: face-down pictures come in pairs
    assert (np.bincount(state.layout[on_space], minlength=game.num_kinds) % 2 == 0).all()
    supply0 = np.array(game.board.trunks)
    assert (state.supply >= 0).all()
    assert (state.trunks.sum(axis=0) + state.supply == supply0).all()
    assert game.trees(state).sum() + int(state.supply @ np.arange(1, 5)) == game.board.trunk_height


# -- board data ---------------------------------------------------------------------------
def test_default_board_follows_the_rulings():
    b = default_board()
    assert (b.rows, b.cols, b.num_spaces) == (6, 10, 60)
    assert b.num_landscapes == 5 and b.num_kinds == 30
    assert (np.bincount(b.landscape) == 12).all()
    assert all(len(pics) == 6 for pics in b.pictures)
    assert b.trunks == (13, 10, 7, 5) and b.trunk_height == 74
    regions = b.regions()
    assert len(regions) == 5  # each landscape is one connected region
    assert sorted(len(r) for r in regions) == [12] * 5
    assert b.kind_codes[:7] == ("Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "B1")
    assert load_board(None) is b and load_board("default") is b
    assert load_board(b.to_dict()) == b


def test_board_adjacency_is_by_sides():
    b = default_board()
    assert b.neighbours[0] == (1, 10)
    assert b.neighbours[11] == (1, 10, 12, 21)
    assert b.neighbours[59] == (49, 58)
    assert (b.adjacency == b.adjacency.T).all() and not b.adjacency.diagonal().any()


def test_custom_board_loads_from_dict_and_file(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    b = load_board(str(path))
    assert b == load_board(SMALL) == load_board(path)
    assert (b.num_spaces, b.num_kinds, b.trunks) == (16, 8, (13, 10, 7, 5))
    assert b.kind_codes == ("Y1", "Y2", "Y3", "Y4", "B1", "B2", "B3", "B4")
    grid_ids = {**SMALL, "grid": [[0, 0, 0, 0, 1, 1, 1, 1], list("YYYYBBBB")]}
    assert load_board(grid_ids) == b
    game = MemoryBoard(board=SMALL)
    assert game.info.num_actions == 34 and game.options()["board"] == b.to_dict()
    assert MemoryBoard().options()["board"] is None


def _bad(**changes):
    return {**SMALL, **changes}


@pytest.mark.parametrize(
    "data,msg",
    [
        (_bad(grid=["YYYYYBBB", "YYYYBBBB"]), "has 9 spaces but 4 pictures"),
        (_bad(grid=["YBYYBBBB", "YYYYBBBY"]), "region of 1"),
        (_bad(grid=["YYYYBBBX", "YYYYBBBB"]), "not a landscape letter"),
        (_bad(grid=["YYYYBBB", "YYYYBBBB"]), "must hold 8 spaces"),
        (_bad(grid=["YYYYBBBB"]), "list of 2 rows"),
        (_bad(colour="red"), "unknown keys ['colour']"),
        (_bad(format="memtab-board/2"), "format must be"),
        (_bad(rows=0), "rows must be in"),
        (_bad(rows=11, cols=11), "at most 120"),
        (_bad(trunks={"5": 1}), "unknown sizes ['5']"),
        (_bad(trunks={"1": -1}), "trunks['1'] must be in"),
        (_bad(trunks={"4": 40}), "height of 160"),
        (
            _bad(landscapes=[SMALL["landscapes"][0], {**SMALL["landscapes"][1], "letter": "Y"}]),
            "letters must be unique",
        ),
        (
            _bad(landscapes=[SMALL["landscapes"][0], {**SMALL["landscapes"][1], "letter": "b"}]),
            "one upper-case letter",
        ),
        (
            _bad(
                landscapes=[
                    {**SMALL["landscapes"][0], "pictures": ["a", "a", "b", "c"]},
                    SMALL["landscapes"][1],
                ]
            ),
            "more than once",
        ),
        ({k: v for k, v in SMALL.items() if k != "grid"}, "missing 'grid'"),
    ],
)
def test_bad_boards_are_rejected_clearly(data, msg):
    with pytest.raises(InvalidOptionError) as err:
        load_board(data)
    assert msg in str(err.value)


def test_a_landscape_may_have_several_regions_of_four():
    board = load_board(_bad(grid=["YYBBBBYY", "YYBBBBYY"]))
    assert sorted(len(r) for r in board.regions()) == [4, 4, 8]


def test_unreadable_board_files_are_rejected(tmp_path):
    with pytest.raises(InvalidOptionError, match="missing.json: no such file"):
        load_board(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidOptionError, match="not valid JSON"):
        load_board(bad)
    with pytest.raises(InvalidOptionError, match="board must be"):
        load_board(42)  # type: ignore[arg-type]


# -- configuration, actions, layouts ------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,msg",
    [
        ({"num_players": 0}, "num_players must be in [1, 4]"),
        ({"num_players": 5}, "num_players must be in [1, 4]"),
        ({"first_player": 2}, "first_player must be in [0, 1]"),
        ({"variant": "kids"}, "variant must be one of"),
        ({"max_turns": 0}, "max_turns must be in"),
        ({"board": 3}, "board must be"),
    ],
)
def test_bad_options_are_rejected(kwargs, msg):
    with pytest.raises(InvalidOptionError) as err:
        MemoryBoard(**kwargs)
    assert msg in str(err.value)


def test_action_layout_and_info():
    game = MemoryBoard(num_players=3)
    info = game.info
    assert (info.num_actions, info.num_positions, info.num_kinds) == (122, 60, 30)
    assert (game.place_offset, game.end_action, game.pass_action) == (60, 120, 121)
    assert info.max_game_length == 4 * 500 + 4 * 3
    assert info.max_turns == 500 + 3
    assert info.score_bounds == (0.0, 74.0)
    assert (info.min_players, info.max_players) == (1, 4)
    assert MemoryBoard(variant="children", max_turns=10).info.max_game_length == 40 + 120
    assert game.action_name(12) == "flip space 12 (row 1, column 2)"
    assert game.action_name(60) == "place a collected farmland (Y) card on space 0 (row 0, column 0)"
    assert game.action_name(120) == "end the return"
    assert game.action_name(121).startswith("pass")


def test_layouts_roundtrip_and_are_checked():
    game = MemoryBoard()
    state = game.new_game(np.random.default_rng(3))
    codes = game.layout_codes(state)
    assert game.from_layout(codes) == state
    assert game.from_layout(state.layout.tolist()) == state
    with pytest.raises(InvalidOptionError, match="has 60 cards"):
        game.from_layout(codes[:-1])
    with pytest.raises(InvalidOptionError, match="not a card of this board"):
        game.from_layout(["Z9", *codes[1:]])
    with pytest.raises(InvalidOptionError, match="exactly twice"):
        game.from_layout([codes[1], *codes[1:]])


# -- flips ---------------------------------------------------------------------------------
def test_a_pair_is_collected_and_the_player_goes_again():
    game = MemoryBoard()
    state = game.from_layout(layout_with(game, {0: "Y1", 1: "Y1", 2: "B2", 3: "G3"}))
    t1, t2 = play(game, state, collect(0, 0, 1))
    assert t1.revealed == [(0, 0)] and not t1.turn_over and state.status[0] == FREE
    assert t2.removed == [0, 1] and t2.turn_over and t2.next_player == 0
    assert state.holder[[0, 1]].tolist() == [0, 0] and state.turn == 2
    # a mismatch: both go back face down, the turn passes
    t3, t4 = play(game, state, [(0, 2), (0, 3)])
    assert state.status[2] == DOWN == state.status[3]
    assert t4.turn_over and t4.next_player == 1 and state.turn == 3


def test_illegal_flips_raise_and_change_nothing():
    game = MemoryBoard()
    state = game.from_layout(layout_with(game, {0: "Y1", 1: "Y1", 2: "B2", 3: "G3"}))
    play(game, state, collect(0, 0, 1))
    check_raises(game, state, 0, "was taken")
    play(game, state, [(0, 2)])
    check_raises(game, state, 2, "already flipped this turn")
    check_raises(game, state, 60, "second flip")  # no return between two flips
    check_raises(game, state, 120, "no return is under way")
    check_raises(game, state, 121, "only allowed")
    with pytest.raises(IllegalActionError, match="out of range"):
        game.apply_inplace(state, 122)
    with pytest.raises(IllegalActionError, match="must be an integer"):
        game.apply_inplace(state, 2.0)  # type: ignore[arg-type]


# -- placements ----------------------------------------------------------------------------
def test_cannot_return_before_collecting_anything():
    game = MemoryBoard()
    state = game.new_game(np.random.default_rng(0))
    mask = game.legal_mask(state)
    assert mask[:60].all() and not mask[60:].any()


def test_placement_rules_colour_freedom_connection_and_four():
    game = MemoryBoard()
    # Y spaces 0, 1, 2, 3, 10, 11 hold Y pairs; the Y5 pair lies on river spaces 14, 23
    state = game.from_layout(
        layout_with(
            game,
            {0: "Y1", 1: "Y1", 2: "Y2", 3: "Y2", 10: "Y3", 11: "Y3", 14: "Y5", 23: "Y5", 4: "B1", 13: "B1"},
        )  # fmt: skip
    )
    assert game.board.landscape[[0, 1, 2, 3, 10, 11]].tolist() == [0] * 6
    assert game.board.landscape[[4, 13, 14, 23]].tolist() == [1] * 4
    play(game, state, collect(0, 0, 1) + collect(0, 2, 3) + collect(0, 10, 11))
    mask = game.legal_mask(state)
    assert np.flatnonzero(mask[60:120]).tolist() == [0, 1, 2, 3, 10, 11]
    assert mask[:60].sum() == 54 and not mask[120] and not mask[121]
    check_raises(game, state, 60 + 4, "is not free", "face-down card")
    check_raises(game, state, 120, "no return is under way")
    (t,) = play(game, state, place(game, 0, 0))
    assert t.extra == {"kind": "place", "space": 0, "card": "Y1", "card_id": 0, "placed": 1}
    assert not t.turn_over and state.status[0] == PLACED and state.placed[0] == 0
    mask = game.legal_mask(state)
    assert np.flatnonzero(mask).tolist() == [60 + 1, 60 + 10, 120]
    check_raises(game, state, 5, "a return is under way")
    check_raises(game, state, 60 + 2, "does not share a side", "connected group")
    check_raises(game, state, 121, "a return is under way")
    *_, t4 = play(game, state, place(game, 0, 1, 2, 3))
    # the fourth placement ends the return: a 4-trunk, the turn passes, no fifth card
    assert t4.turn_over and t4.next_player == 1
    assert t4.extra["trunk"] == 4 and t4.extra["returned"] == 4
    assert state.supply.tolist() == [13, 10, 7, 4] and game.trees(state).tolist() == [4, 0]
    assert game.collected(state, 0).tolist() == [10, 11]  # the lowest ids were placed
    # player 1 holds only farmland cards, dealt on river spaces 14 and 23
    play(game, state, collect(1, 14, 23))
    check_raises(game, state, 60 + 14, "river (B) land", "holds no card of that colour")
    check_raises(game, state, 60 + 0, "already covered")
    play(game, state, place(game, 1, 10, 11) + [(1, 120)])
    assert game.trees(state).tolist() == [4, 2]
    check_raises(game, state, 0, "can never be flipped")


def test_a_return_may_mix_landscapes_where_they_border():
    game = MemoryBoard()
    # space 3 (farmland) borders 4 and 13 (river)
    state = game.from_layout(layout_with(game, {3: "Y1", 4: "Y1", 13: "B1", 14: "B1"}))
    play(game, state, collect(0, 3, 4) + collect(0, 13, 14))
    play(game, state, place(game, 0, 3, 13, 14) + [(0, 120)])
    assert game.trees(state).tolist() == [3, 0]
    assert [game.card_code(int(state.layout[state.placed[s]])) for s in (3, 13, 14)] == [
        "Y1",
        "B1",
        "B1",
    ]


def test_trunk_falls_back_to_the_next_smaller_size_and_then_to_nothing():
    game = MemoryBoard(num_players=1, board={**SMALL, "trunks": {"1": 1, "2": 0, "3": 1, "4": 1}})
    state = game.from_layout(SMALL_LAYOUT)
    steps = collect(0, 0, 1) + collect(0, 2, 3) + collect(0, 8, 9) + collect(0, 10, 11)
    play(game, state, steps)
    *_, t = play(game, state, place(game, 0, 0, 1, 2, 3))
    assert t.extra["trunk"] == 4  # the only 4-trunk
    *_, t = play(game, state, place(game, 0, 8, 9, 10, 11))
    assert t.extra["trunk"] == 3  # no 4-trunk left: the next smaller one
    play(game, state, collect(0, 4, 5) + collect(0, 6, 7))
    *_, t = play(game, state, place(game, 0, 4, 5) + [(0, game.end_action)])
    assert t.extra["trunk"] == 1  # the supply has no 2-trunks: a 1-trunk
    *_, t = play(game, state, place(game, 0, 6) + [(0, game.end_action)])
    assert t.extra["trunk"] == 0  # nothing left of size <= 1
    assert state.supply.tolist() == [0, 0, 0, 0] and game.trees(state).tolist() == [8]
    invariants(game, state)


# -- end of the game -----------------------------------------------------------------------
def test_final_round_starts_with_the_taker_and_goes_once_round_in_seat_order():
    game = MemoryBoard(num_players=3, board=SMALL)
    state = game.from_layout(SMALL_LAYOUT)
    play(game, state, collect(0, 0, 1) + [(0, 2), (0, 4)])
    play(game, state, collect(1, 2, 3) + collect(1, 4, 5) + place(game, 1, 2) + [(1, 32)])
    play(game, state, [(2, 6), (2, 8)])
    play(game, state, collect(0, 6, 7) + collect(0, 8, 9) + [(0, 10), (0, 12)])
    *_, last = play(game, state, collect(1, 10, 11) + collect(1, 12, 13) + collect(1, 14, 15))
    assert state.stage == FINAL and state.last_pair == 1 and not state.over
    assert last.turn_over and last.next_player == 1 and not last.game_over
    mask = game.legal_mask(state)
    assert not mask[:16].any() and mask[33] and not mask[32]  # no flips; pass is legal
    play(game, state, place(game, 1, 4, 5) + [(1, 32)])  # player 1: a final return of 2
    assert game.current_player(state) == 2
    assert np.flatnonzero(game.legal_mask(state)).tolist() == [33]  # no cards: only pass
    enc = MemoryBoardEncoder(game)
    done = enc.views(enc.encode(state, 0, np.zeros(16, bool)))["final_done"]
    assert done.tolist() == [0, 1, 0]  # observer 0; seat 1 (relative 1) has had its turn
    play(game, state, [(2, 33)])
    check_raises(game, state, 0, "no face-down card is left")
    *_, t = play(game, state, place(game, 0, 0) + [(0, 32)])
    assert t.game_over and state.over and not state.capped
    assert game.trees(state).tolist() == [1, 3, 0] and game.winners(state) == [1]
    assert not game.legal_mask(state).any()
    with pytest.raises(GameOverError):
        game.apply_inplace(state, 33)
    invariants(game, state)


def test_a_player_may_pass_the_final_return_with_cards_in_hand():
    game = MemoryBoard(num_players=1, board=SMALL)
    state = game.from_layout(SMALL_LAYOUT)
    steps = []
    for a in range(0, 16, 2):
        steps += collect(0, a, a + 1)
    play(game, state, steps)
    assert state.stage == FINAL and state.final_left == 1
    (t,) = play(game, state, [(0, 33)])
    assert t.game_over and t.extra == {"kind": "pass"}
    assert game.winners(state) == [0] and len(game.collected(state, 0)) == 16


@pytest.mark.parametrize(
    "trees,cards,winners",
    [
        ([5, 3], [0, 9], [0]),
        ([5, 5], [1, 2], [1]),
        ([5, 5], [2, 2], [0, 1]),
        ([4, 4, 1], [0, 0, 9], [0, 1]),
        ([0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 2, 3]),
    ],
)
def test_tie_breaks_tree_then_collected_cards_then_shared(trees, cards, winners):
    game = MemoryBoard(num_players=len(trees))
    state = game.new_game(np.random.default_rng(0))
    state.trunks[:, 0] = trees  # 1-trunks make these heights
    card = 0
    for seat, count in enumerate(cards):
        state.holder[card : card + count] = seat
        card += count
    assert game.scores(state).tolist() == trees
    assert game.winners(state) == winners


def test_childrens_variant_keeps_returning_skips_empty_seats_until_the_board_is_full():
    game = MemoryBoard(num_players=2, board=SMALL, variant="children")
    state = game.from_layout(SMALL_LAYOUT)
    play(game, state, collect(0, 0, 1) + collect(0, 2, 3) + collect(0, 4, 5) + [(0, 6), (0, 8)])
    steps = collect(1, 6, 7) + collect(1, 8, 9) + collect(1, 10, 11)
    play(game, state, steps + collect(1, 12, 13) + collect(1, 14, 15))
    assert state.stage == CHILDREN and game.current_player(state) == 1
    check_raises(game, state, 33, "no passing")
    assert not game.legal_mask(state)[33]
    play(game, state, place(game, 1, 8, 9, 10, 11))
    play(game, state, place(game, 0, 0, 1, 2, 3))
    play(game, state, place(game, 1, 4, 5, 6, 7))
    play(game, state, place(game, 0, 12, 13) + [(0, 32)])
    assert len(game.collected(state, 0)) == 0
    (_, t) = play(game, state, place(game, 1, 14) + [(1, 32)])
    assert t.next_player == 1 and not t.game_over  # seat 0 has no cards: skipped
    (_, t) = play(game, state, place(game, 1, 15) + [(1, 32)])
    assert t.game_over and (state.status == PLACED).all()
    assert game.trees(state).tolist() == [4 + 2, 4 + 4 + 1 + 1]
    assert game.winners(state) == [1]
    invariants(game, state)


def test_turn_limit_ends_main_play_at_once():
    game = MemoryBoard(max_turns=2)
    state = game.from_layout(layout_with(game, {0: "Y1", 1: "Y2", 2: "Y3", 3: "Y4"}))
    play(game, state, [(0, 0), (0, 1)])
    (_, t) = play(game, state, [(1, 2), (1, 3)])
    assert t.game_over and state.over and state.capped and state.stage == MAIN
    assert t.next_player == 1  # unchanged when the game is over
    assert game.winners(state) == [0, 1]
    assert "turn limit" in MemoryBoardRenderer(game).ansi(state)


# -- properties ------------------------------------------------------------------------
def _random_game(game: MemoryBoard, seed: int, cheat: float):
    """Random legal play; with probability ``cheat`` a second flip takes the twin (so that
    games reach the end). Yields (state_before, action, transition, state_after)."""
    rng = np.random.default_rng(seed)
    state = game.new_game(rng)
    while not game.is_over(state):
        mask = game.legal_mask(state)
        assert mask.any()
        legal = np.flatnonzero(mask)
        action = int(rng.choice(legal))
        if state.phase == 1 and rng.random() < cheat:
            twin = np.flatnonzero(mask[: game.num_spaces] & (state.layout == state.layout[state.first_flip]))
            action = int(twin[0])
        before = state.copy()
        new, t = game.apply(state, action)
        assert state == before  # apply never changes its input
        yield before, action, t, new
        state = new


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    num_players=st.integers(1, 4),
    variant=st.sampled_from(["standard", "children"]),
    small=st.booleans(),
    cheat=st.sampled_from([0.0, 0.7]),
)
def test_random_legal_games_keep_every_invariant_and_finish(seed, num_players, variant, small, cheat):
    game = MemoryBoard(
        num_players=num_players, variant=variant, board=SMALL if small else None, max_turns=150
    )
    steps = 0
    state = None
    for _before, _action, t, state in _random_game(game, seed, cheat):
        steps += 1
        invariants(game, state)
        assert t.next_player == game.current_player(state)
        if not t.game_over:
            assert game.legal_mask(state).any()  # never empty before the end
    assert state is not None and game.is_over(state)
    assert steps <= game.info.max_game_length
    assert not game.legal_mask(state).any()
    if not state.capped:
        assert not (state.status == DOWN).any()
        if variant == "children":
            assert (state.status == PLACED).all()


@pytest.mark.parametrize("variant,num_players", [("standard", 3), ("children", 2)])
def test_the_mask_is_exactly_the_set_of_actions_apply_accepts(variant, num_players):
    game = MemoryBoard(num_players=num_players, variant=variant, board=SMALL)
    for i, (before, _action, _t, _after) in enumerate(_random_game(game, 11, cheat=0.6)):
        if i % 3:
            continue
        mask = game.legal_mask(before)
        for action in range(game.num_actions):
            try:
                game.apply(before, action)
            except IllegalActionError as err:
                assert not mask[action], (action, str(err))
                assert "legal now:" in str(err)
            else:
                assert mask[action], action


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 80))
def test_observations_ignore_unseen_cards_and_stay_in_bounds(seed, cut):
    game = MemoryBoard(num_players=3)
    enc = MemoryBoardEncoder(game)
    mem = Memory("perfect", 3, game.num_spaces)
    state = game.new_game(np.random.default_rng(seed))
    for i, (_b, _a, t, after) in enumerate(_random_game(game, seed, cheat=0.5)):
        mem.on_action(t.player, [pos for pos, _ in t.revealed])
        state = after
        if i == cut:
            break
    for observer in range(3):
        rem = mem.remembered(observer, game.face_down(state))
        obs = enc.encode(state, observer, rem)
        assert obs.dtype == np.int8 and obs.shape == (enc.size,)
        assert (obs >= enc.low).all() and (obs <= enc.high).all()
        assert obs is not enc.encode(state, observer, rem)
        # swap two face-down cards this observer has not seen: the observation is equal
        unseen = np.flatnonzero(game.face_down(state) & ~rem)
        if unseen.size >= 2:
            other = state.copy()
            other.layout = state.layout.copy()
            a, b = unseen[0], unseen[-1]
            other.layout[[a, b]] = other.layout[[b, a]]
            assert np.array_equal(enc.encode(other, observer, rem), obs)


# -- observation encoder -----------------------------------------------------------------
def test_encoder_docstring_table_matches_fields():
    game = MemoryBoard(num_players=3)
    enc = MemoryBoardEncoder(game)
    lines = (MemoryBoardEncoder.__doc__ or "").splitlines()
    borders = [i for i, line in enumerate(lines) if line.strip().startswith("====")]
    indent = len(lines[borders[0]]) - len(lines[borders[0]].lstrip())
    rows = [line[indent:] for line in lines[borders[1] + 1 : borders[2]] if line[indent : indent + 1].strip()]
    symbols = {"P": 60, "K": 30, "L": 5, "n": 3}
    table = []
    for row in rows:
        name, shape = row.split()[0], row[12:24].strip()
        dims = tuple(symbols[d] if d in symbols else int(d) for d in shape.split(" x "))
        table.append((name, dims))
    assert table == [(f.name, f.shape) for f in enc.fields]
    assert MemoryBoardEncoder(MemoryBoard()).size == 60 * (5 + 30 + 5) + 30 + 12 + 2 * (5 + 3) == 2458
    for n in (1, 3, 4):
        assert MemoryBoardEncoder(MemoryBoard(num_players=n)).size == 2442 + 8 * n


def test_encoder_views_follow_the_game():
    game = MemoryBoard(num_players=2)
    enc = MemoryBoardEncoder(game)
    state = game.from_layout(layout_with(game, {0: "Y1", 1: "Y1", 2: "B2", 3: "G3"}))
    none = np.zeros(60, dtype=bool)
    play(game, state, collect(0, 0, 1) + place(game, 0, 0))
    v = enc.views(enc.encode(state, 1, none))  # seen by seat 1: seat 0 is relative 1
    assert v["status"][0].tolist() == [0, 0, 0, 1] and v["status"][1].tolist() == [0, 0, 1, 0]
    assert v["returning"][0] == 1 and v["returning"].sum() == 1
    assert v["collected"].tolist() == [[0, 0, 0, 0, 0], [1, 0, 0, 0, 0]]
    assert v["phase"].tolist() == [0, 0, 1, 0, 0] and v["turn"].tolist() == [0, 1]
    assert v["taken"][0] == 1 and v["taken"].sum() == 1
    assert v["landscape"][4].tolist() == [0, 1, 0, 0, 0]
    play(game, state, [(0, 120), (1, 2)])
    v = enc.views(enc.encode(state, 0, none))
    assert v["picture"][2].argmax() == 7 and v["picture"].sum() == 1  # B2 face up
    assert v["trees"].tolist() == [1, 0] and v["supply"].tolist() == [12, 10, 7, 5]
    assert v["phase"].tolist() == [0, 1, 0, 0, 0] and v["stage"].tolist() == [1, 0, 0]
    play(game, state, [(1, 3)])
    rem = np.zeros(60, dtype=bool)
    rem[3] = True
    v = enc.views(enc.encode(state, 0, rem))
    assert v["picture"][3].argmax() == 14 and v["picture"].sum() == 1  # G3 remembered


# -- renderer ----------------------------------------------------------------------------
def test_renderer_ansi_and_rgb_are_pure_functions_of_the_state():
    game = MemoryBoard(num_players=2)
    r = MemoryBoardRenderer(game)
    state = game.from_layout(layout_with(game, {0: "Y1", 1: "Y1", 2: "B2", 3: "G3"}))
    play(game, state, collect(0, 0, 1) + place(game, 0, 0) + [(0, 120), (1, 2)])
    before = state.copy()
    text = r.ansi(state)
    assert "row 0 Y=Y1  Y .   Y>B2  Y ##" in text
    assert "player_0  tree   1 (1)" in text and "*player_1" in text
    assert "13 x 1" not in text and "12 x 1" in text
    img = r.rgb(state)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert np.array_equal(img, r.rgb(state)) and state == before
    assert not np.array_equal(img, r.rgb(game.new_game(np.random.default_rng(0))))
    small = MemoryBoardRenderer(MemoryBoard(num_players=4, board=SMALL))
    assert small.rgb(small.game.from_layout(SMALL_LAYOUT)).shape[2] == 3


# -- agents --------------------------------------------------------------------------------
def run_agents(game: MemoryBoard, agents: list, seed: int, memory: str = "perfect"):
    """Play a game with ``agents`` (one per seat); every action must be legal."""
    enc = MemoryBoardEncoder(game)
    mem = Memory(memory, game.num_players, game.num_spaces, seed=seed)
    state = game.new_game(np.random.default_rng(seed))
    for i, agent in enumerate(agents):
        agent.reset(seed=seed * 10 + i)
    while not game.is_over(state):
        p = game.current_player(state)
        rem = mem.remembered(p, game.face_down(state))
        mask = game.legal_mask(state).astype(np.int8)
        obs = {"observation": enc.encode(state, p, rem), "action_mask": mask,
               "remembered_mask": rem.astype(np.int8)}  # fmt: skip
        action = agents[p].act(obs)
        assert mask[action], (p, action)
        t = game.apply_inplace(state, action)
        mem.on_action(t.player, [pos for pos, _ in t.revealed])
    return state


@pytest.mark.parametrize("memory", ["perfect", "none", "window:4", "decay:0.3"])
def test_agents_play_only_legal_actions(memory):
    for seed, n in ((1, 2), (2, 4)):
        game = MemoryBoard(num_players=n, max_turns=200)
        agents = [MemoryBoardGreedyAgent() if i % 2 == 0 else MemoryBoardRandomAgent() for i in range(n)]
        run_agents(game, agents, seed, memory)
    small = MemoryBoard(num_players=3, board=SMALL, variant="children")
    run_agents(small, [MemoryBoardGreedyAgent(board=SMALL) for _ in range(3)], 5, memory)


def test_greedy_agent_beats_random_clearly():
    game = MemoryBoard(num_players=2)
    wins = 0
    for seed in range(12):
        greedy_seat = seed % 2
        agents = [MemoryBoardRandomAgent(), MemoryBoardRandomAgent()]
        agents[greedy_seat] = MemoryBoardGreedyAgent()
        state = run_agents(game, agents, seed)
        wins += game.winners(state) == [greedy_seat]
    assert wins >= 11


def test_greedy_agent_takes_a_known_pair_and_plans_four_card_returns():
    game = MemoryBoard()
    agent = MemoryBoardGreedyAgent()
    agent.reset()
    enc = MemoryBoardEncoder(game)
    state = game.from_layout(layout_with(game, {30: "G1", 59: "G1"}))
    rem = np.zeros(60, dtype=bool)
    rem[[30, 59]] = True
    obs = {"observation": enc.encode(state, 0, rem), "action_mask": game.legal_mask(state)}
    assert agent.act(obs) == 30
    board = default_board()
    free = np.zeros(60, dtype=bool)
    free[[0, 1, 2, 3, 20]] = True
    group = best_group(board, free, np.array([5, 0, 0, 0, 0]), [])
    assert sorted(group) == [0, 1, 2, 3]
    assert best_group(board, free, np.array([5, 0, 0, 0, 0]), [20]) == [20]
    assert trunk_for(4, np.array([1, 0, 0, 0])) == 1 and trunk_for(2, np.zeros(4)) == 0
    with pytest.raises(InvalidOptionError, match="does not fit"):
        agent.act({"observation": np.zeros(5, np.int8), "action_mask": np.ones(122, np.int8)})


def test_board_is_not_hashable_and_compares_by_content():
    assert isinstance(default_board(), Board)
    assert load_board(SMALL) == load_board(dict(SMALL))
    assert load_board(SMALL) != default_board()
    with pytest.raises(TypeError):
        hash(default_board())


# -- the AEC env of the game (the shared env layer over this engine) -------------------------
def test_aec_env_passes_the_pettingzoo_api_test_and_records_replay():
    from pettingzoo.test import api_test

    from memtab_env import memory_board_v0
    from memtab_env.record import replay

    api_test(memory_board_v0.env(max_turns=30), num_cycles=100)
    env = memory_board_v0.raw_env(num_players=3, board=SMALL, memory="none")
    env.reset(seed=4)
    agent = MemoryBoardGreedyAgent(board=SMALL)
    agent.reset()
    while not all(env.terminations.values()):
        env.step(agent.act(env.observe(env.agent_selection)))
    record = json.loads(json.dumps(env.record()))
    assert record["options"]["board"]["name"] == "small" and record["result"]["over"]
    places = [a for a in record["actions"] if a.get("kind") == "place"]
    assert places and {"space", "card", "card_id", "placed"} <= set(places[0])
    game, state = replay(record)
    assert game.winners(state) == record["result"]["winners"]


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_state_is_views_into_its_own_row(how: str) -> None:
    import copy
    import pickle

    from memtab_env.games.memory_board import rules_kernels as K

    game = MemoryBoard()
    p = game.num_spaces
    state = game.new_game(np.random.default_rng(0))
    game.apply_inplace(state, 0)
    other = {"copy": state.copy, "deepcopy": lambda: copy.deepcopy(state),
             "pickle": lambda: pickle.loads(pickle.dumps(state))}[how]()
    assert other == state and other.data is not state.data
    for name in ("layout", "status", "holder", "placed", "trunks", "supply", "returning"):
        view = getattr(other, name)
        assert np.shares_memory(view, other.data) and not np.shares_memory(view, state.data), name
    other.status[5] = FREE  # a write through a view lands in the copy's row only
    assert other.data[0, K.HEAD + p + 5] == FREE and state.status[5] == DOWN
    other.status[5] = DOWN
    game.apply_inplace(other, 1)  # the kernel writes the row; the views show it
    assert other.phase == CHOOSE and other.status[0] != UP and other.turn == 2
    assert state.phase == FLIP2 and state.status[0] == UP
