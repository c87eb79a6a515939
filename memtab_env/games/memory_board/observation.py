"""Memory: The Board Game observation encoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.boards import MAX_RETURN
from memtab_env.games.memory_board.rules import (
    CHOOSE,
    DOWN,
    FINAL,
    FLIP2,
    RETURN,
    UP,
    MemoryBoard,
    MemoryBoardState,
)
from memtab_env.observations import Encoder, Field

_STATUS = np.eye(4, dtype=np.int8)
#: phase one-hot: choose, second flip, returning with 1, 2, 3 cards placed
NUM_PHASES = 2 + (MAX_RETURN - 1)
#: stage one-hot: main play, final round, children's returns
NUM_STAGES = 3


class MemoryBoardEncoder(Encoder):
    """Flat int8 observation of Memory: The Board Game for one observer.

    ``P`` spaces, ``K`` pictures, ``L`` landscapes, ``n`` seats. Seats are listed
    *relative to the observer*: row 0 is the observer, row 1 the next seat in turn order,
    and so on.

    ===========  ==========  ==========================================================
    field        shape       meaning
    ===========  ==========  ==========================================================
    status       P x 4       one-hot per space: down (face down), up (flipped this
                             turn), free (card taken), placed (returned card, for good)
    picture      P x K       one-hot picture of the dealt card on the space when this
                             observer sees it: face up this turn, or face down and
                             remembered; all zeros otherwise (free and placed spaces too)
    taken        K           1 for pictures whose pair has left the table (collected or
                             returned): they can no longer be face down
    landscape    P x L       one-hot landscape (colour) of every space (static)
    returning    P           1 on the spaces placed in the current return
    collected    n x L       collected cards in front of each seat, per landscape
    trees        n           tree height of each seat (sum of its trunk sizes)
    supply       4           trunks of size 1, 2, 3, 4 left in the supply
    phase        5           one-hot: turn start (flip or return; final round: return
                             or pass), second flip, returning with 1 / 2 / 3 placed
    stage        3           one-hot: main play, final round, children's returns
    final_done   n           final round: 1 for seats that have had their final turn
    turn         n           one-hot seat on turn (all zeros once the game is over)
    ===========  ==========  ==========================================================

    Total size ``P (5 + K + L) + K + 12 + n (L + 3)``; 2458 for the default board (P = 60,
    K = 30, L = 5) and two players. ``phase`` and ``turn`` are all zeros once the game is
    over. Picture ids and card codes: :mod:`memtab_env.boards`.
    """

    no_legal_status = ("no observation mask for game 'memory_board': MemTab and Pelmanism "
                       "only (the board game's placements are not visible as one status "
                       "column)")

    def token_layout(self) -> dict[str, Any]:
        """The set network's layout of this observation (plain data)."""
        g = self.game
        o = {k: list(v) for k, v in self.offsets.items()}
        rest = [o[k] for k in ("taken", "collected", "trees", "supply", "phase", "stage",
                               "final_done", "turn")]
        return {"game": "memory_board", "size": self.size, "positions": g.board.num_spaces,
                "kinds": g.board.num_kinds, "status": o["status"], "card": o["picture"],
                "tableaux": None, "num_players": g.num_players, "global_start": None,
                "scores": None, "globals": rest,
                "scaled": [o["collected"], o["trees"], o["supply"]],
                # per space: its landscape, whether placed in the current return, and how
                # many cards of its landscape each seat holds (landscape @ collected)
                "extra_tokens": [o["landscape"], o["returning"]],
                "held": {"token": o["landscape"], "table": o["collected"]},
                "adjacency": [list(nb) for nb in g.board.neighbours],
                # actions: flip space p, place on space p (one logit each per space), end
                # the return, pass (two logits from the pooled state)
                "token_logits": 2, "global_logits": 2}

    def __init__(self, game: MemoryBoard) -> None:
        n = game.num_players
        b = game.board
        p, k, land = b.num_spaces, b.num_kinds, b.num_landscapes
        self.game = game
        self.num_players = n
        max_held = int(np.bincount(b.landscape, minlength=land).max())
        max_trunks = max(b.trunks)
        self.fields = [
            Field("status", (p, 4), 0, 1, "one-hot: down, up, free, placed"),
            Field("picture", (p, k), 0, 1, "visible or remembered picture of the dealt card"),
            Field("taken", (k,), 0, 1, "pictures whose pair left the table"),
            Field("landscape", (p, land), 0, 1, "one-hot landscape of every space"),
            Field("returning", (p,), 0, 1, "spaces placed in the current return"),
            Field("collected", (n, land), 0, max_held, "collected cards, observer first"),
            Field("trees", (n,), 0, b.trunk_height, "tree heights, observer first"),
            Field("supply", (MAX_RETURN,), 0, max_trunks, "trunks of size 1..4 left"),
            Field("phase", (NUM_PHASES,), 0, 1, "choose, flip 2, returning 1/2/3"),
            Field("stage", (NUM_STAGES,), 0, 1, "main, final round, children's"),
            Field("final_done", (n,), 0, 1, "had the final turn, observer first"),
            Field("turn", (n,), 0, 1, "one-hot seat on turn, observer first"),
        ]
        self._finish()
        self._seat_order = [np.roll(np.arange(n), -i) for i in range(n)]
        self._picture = np.vstack([np.eye(k, dtype=np.int8), np.zeros((1, k), np.int8)])
        self._landscape = np.eye(land, dtype=np.int8)[b.landscape].ravel()

    def encode(self, state: MemoryBoardState, observer: int, remembered: np.ndarray) -> np.ndarray:
        """Encode ``state`` for ``observer``; ``remembered`` masks the face-down spaces
        whose card the observer remembers (from :class:`memtab_env.memory.Memory`)."""
        game = self.game
        n = self.num_players
        k = game.num_kinds
        status = state.status
        visible = (status == UP) | ((status == DOWN) & remembered)
        pictures = np.where(visible, state.layout, k)
        taken = np.zeros(k, dtype=np.int8)
        taken[state.layout[(status != DOWN) & (status != UP)]] = 1
        returning = np.zeros(game.num_spaces, dtype=np.int8)
        returning[state.returning[: state.num_placed]] = 1
        order = self._seat_order[observer]
        phase = np.zeros(NUM_PHASES, dtype=np.int8)
        turn = np.zeros(n, dtype=np.int8)
        if not state.over:
            if state.phase == CHOOSE:
                phase[0] = 1
            elif state.phase == FLIP2:
                phase[1] = 1
            elif state.phase == RETURN:
                phase[1 + state.num_placed] = 1
            turn[(state.current - observer) % n] = 1
        stage = np.zeros(NUM_STAGES, dtype=np.int8)
        stage[state.stage] = 1
        final_done = np.zeros(n, dtype=np.int8)
        if state.stage == FINAL:
            # the final round runs from the seat that took the last pair, in seat order
            done = n - state.final_left  # final_left counts the current seat
            for i in range(done):
                final_done[(state.last_pair + i) % n] = 1
        return np.concatenate(
            [
                _STATUS[status].ravel(),
                self._picture[pictures].ravel(),
                taken,
                self._landscape,
                returning,
                game.collected_counts(state)[order].ravel().astype(np.int8),
                game.trees(state)[order].astype(np.int8),
                state.supply.astype(np.int8),
                phase,
                stage,
                final_done[order],
                turn,
            ]
        )
