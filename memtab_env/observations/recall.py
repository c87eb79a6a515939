"""An agent's own perfect record of the cards its observations showed.

:class:`PerfectRecall` turns the observations an agent is given into the observations that
memory ``perfect`` would give it: every face-down card it was ever shown keeps its kind in
the ``card`` block. Under memory ``none`` an observation shows every card revealed since
the observer's previous action, so the union of what an agent is shown is every card
revealed before it acts: the rebuilt observation *is* the ``perfect`` one, byte for byte
(``tests/test_recall.py`` holds it so for MemTab and Pelmanism). Under ``window:k`` and
``decay:p`` it is what the agent was shown, which may be less.

This is how a memoryless policy trained under ``perfect`` (the study's perfect-memory
reference) plays a track whose env forgets: it keeps its own record, as the ``greedy`` and
``search`` agents keep theirs (:mod:`memtab_env.agents.belief`). It reads only the
observations, never the state, and works from the encoder's ``status`` and ``card``
fields, so it is the same code for every game that has them.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class PerfectRecall:
    """The ``perfect``-memory observations rebuilt from one observer's observations.

    ``encoder`` is the game's observation encoder
    (:func:`memtab_env.registry.make_encoder`); call :meth:`reset` at the start of every
    game and :meth:`observe` on each observation, in order."""

    def __init__(self, encoder: Any) -> None:
        names = {f.name for f in encoder.fields}
        if not {"status", "card"} <= names:
            raise ValueError(f"PerfectRecall needs an observation with 'status' and 'card' fields; "
                             f"{type(encoder).__name__} has {sorted(names)}")
        start, positions, width, down = encoder.legal_status()  # raises for a game without one
        self._status = slice(start, start + positions * width)
        self._positions, self._width, self._down = positions, width, down
        card_start, card_end = encoder.offsets["card"]
        self._card = slice(card_start, card_end)
        self._kinds = (card_end - card_start) // positions
        self.size = encoder.size
        self.reset()

    def reset(self) -> None:
        """Forget everything: a new game starts."""
        #: int[P]: the kind each position was shown with, -1 never shown
        self.seen = np.full(self._positions, -1, np.int64)

    def observe(self, observation: np.ndarray) -> np.ndarray:
        """A copy of the flat int8 ``observation`` whose face-down cards show every kind
        this observer has been shown, now or before (the record is updated first)."""
        obs = np.asarray(observation)
        if obs.shape != (self.size,):
            raise ValueError(f"PerfectRecall: an observation of shape ({self.size},) was expected, "
                             f"got {obs.shape}")
        card = obs[self._card].reshape(self._positions, self._kinds)
        shown = card.any(axis=1)
        self.seen[shown] = card[shown].argmax(axis=1)
        status = obs[self._status].reshape(self._positions, self._width)
        fill = (status[:, self._down] == 1) & ~shown & (self.seen >= 0)
        out = obs.copy()
        rows = out[self._card].reshape(self._positions, self._kinds)
        rows[fill, self.seen[fill]] = 1  # a view into out
        return out
