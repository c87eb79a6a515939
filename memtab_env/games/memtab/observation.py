"""MemTab observation encoder."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from memtab_env.games.memtab import rules_kernels as K
from memtab_env.games.memtab.rules import FLIPS_PER_TURN, NUM_KINDS, NUM_POSITIONS, MemTab, MemTabState
from memtab_env.memory import Memory
from memtab_env.observations import Encoder, Field

_INT8 = np.dtype(np.int8)


class MemTabEncoder(Encoder):
    """Flat int8 observation of MemTab for one observer (``n`` = number of players).

    Seats are listed *relative to the observer*: block 0 is the observer, block 1 the next
    seat in turn order, and so on.

    ================  ==========  =====================================================
    field             shape       meaning
    ================  ==========  =====================================================
    status            28 x 4      one-hot per position: down, up (flipped this turn),
                                  gone, tableau
    card              28 x 14     one-hot kind of the card at the position when this
                                  observer can see it: face up, in a tableau, or face
                                  down and remembered; all zeros otherwise (and for gone)
    tableaux          n x 14      1 where that seat's tableau holds a card of that kind
    scores            n           each seat's current score (-35..35)
    flip              3           one-hot index of the next flip within the turn
    turn              n           one-hot seat on turn (all zeros once the game is over)
    ================  ==========  =====================================================

    Total size ``507 + 16 n`` (539 for two players). Kind ids: ``R2..R8`` = 0..6,
    ``B2..B8`` = 7..13.
    """

    #: the fused kernel's compiled entry (``rules_kernels.direct``), set by the first
    #: instance (a class attribute: encoders pickle as plain data)
    _kernel: ClassVar[Any] = None

    def token_layout(self) -> dict[str, Any]:
        """The set network's layout of this observation (plain data)."""
        o = self.offsets
        return {"game": "memtab", "size": self.size, "positions": NUM_POSITIONS,
                "kinds": NUM_KINDS, "status": list(o["status"]), "card": list(o["card"]),
                "tableaux": list(o["tableaux"]), "num_players": self.game.num_players,
                "global_start": o["tableaux"][0], "scores": list(o["scores"])}

    def __init__(self, game: MemTab) -> None:
        if MemTabEncoder._kernel is None:
            MemTabEncoder._kernel = K.direct("observe")
        n = game.num_players
        self.game = game
        self.num_players = n
        lo, hi = (int(b) for b in game.info.score_bounds)
        self.fields = [
            Field("status", (NUM_POSITIONS, 4), 0, 1, "one-hot: down, up, gone, tableau"),
            Field("card", (NUM_POSITIONS, NUM_KINDS), 0, 1, "visible or remembered kind"),
            Field("tableaux", (n, NUM_KINDS), 0, 1, "kinds held, observer first"),
            Field("scores", (n,), lo, hi, "scores, observer first"),
            Field("flip", (FLIPS_PER_TURN,), 0, 1, "one-hot next flip in the turn"),
            Field("turn", (n,), 0, 1, "one-hot seat on turn, observer first"),
        ]
        self._finish()
        # the fused observe writes observation, action mask and remembered mask into one
        # buffer; these slices cut it
        size = self.size
        self._buf_size = size + 2 * NUM_POSITIONS
        self._obs = slice(0, size)
        self._mask = slice(size, size + NUM_POSITIONS)
        self._remembered = slice(size + NUM_POSITIONS, size + 2 * NUM_POSITIONS)

    def encode(self, state: MemTabState, observer: int, remembered: np.ndarray) -> np.ndarray:
        """Encode ``state`` for ``observer``; ``remembered`` masks the face-down positions
        whose card the observer remembers (from :class:`memtab_env.memory.Memory`)."""
        out = np.empty(self.size, dtype=np.int8)
        K.encode(state.data, self.num_players, observer, remembered, out)
        return out

    def observe(
        self, game: MemTab, state: MemTabState, observer: int, memory: Memory, on_turn: bool
    ) -> dict[str, np.ndarray]:
        """Fused version of :meth:`Encoder.observe`: one buffer, one kernel call (the
        memory is read through :meth:`Memory.source`, no mask is built in Python)."""
        values, threshold = memory.source(observer)
        buf = np.empty(self._buf_size, _INT8)
        self._kernel(state.data, self.num_players, observer, values, threshold, on_turn, buf)
        return {"observation": buf[self._obs], "action_mask": buf[self._mask],
                "remembered_mask": buf[self._remembered]}
