"""An agent's own record of the cards its observations showed: perfect, or a window.

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

:class:`WindowRecall` rebuilds the observations of memory ``window:k`` the same way, for a
policy trained under ``window:k`` that plays a ``none`` (or ``perfect``) track. A window
depends on the order of the reveals, which no observation shows, so it also watches every
flip (``watch(revealed)``, called by the game loop: :func:`memtab_env.play.play_game`,
the evaluation, its audit); with that, under ``none`` and ``perfect`` its observations are
the ``window:k`` env's, byte for byte.
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

    def _record(self, observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check ``observation``, add the kinds it shows to the record; return it, the
        mask of positions whose card it shows and the mask of face-down positions."""
        obs = np.asarray(observation)
        if obs.shape != (self.size,):
            raise ValueError(f"{type(self).__name__}: an observation of shape ({self.size},) was "
                             f"expected, got {obs.shape}")
        card = obs[self._card].reshape(self._positions, self._kinds)
        shown = card.any(axis=1)
        self.seen[shown] = card[shown].argmax(axis=1)
        down = obs[self._status].reshape(self._positions, self._width)[:, self._down] == 1
        return obs, shown, down

    def observe(self, observation: np.ndarray) -> np.ndarray:
        """A copy of the flat int8 ``observation`` whose face-down cards show every kind
        this observer has been shown, now or before (the record is updated first)."""
        obs, shown, down = self._record(observation)
        fill = down & ~shown & (self.seen >= 0)
        out = obs.copy()
        rows = out[self._card].reshape(self._positions, self._kinds)
        rows[fill, self.seen[fill]] = 1  # a view into out
        return out


class WindowRecall(PerfectRecall):
    """The ``window:k``-memory observations rebuilt from one observer's observations and
    the reveals it watched: a face-down card shows its kind when its latest reveal is among
    the ``k`` most recent reveals of the game (:mod:`memtab_env.memory`) and this observer
    has been shown it.

    Call :meth:`reset` at the start of every game, :meth:`watch` after every action of
    every player with the positions it revealed, and :meth:`observe` on each observation,
    in order. A game loop that does not report reveals is refused at the first
    observation that shows it (a face-down card shown whose reveal was never watched):
    without the order of reveals a window cannot be told."""

    def __init__(self, encoder: Any, window: int) -> None:
        from memtab_env.memory import MAX_WINDOW

        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) \
                or not 0 <= window <= MAX_WINDOW:
            raise ValueError(f"WindowRecall: window must be an integer in [0, {MAX_WINDOW}], got {window!r}")
        self.window = int(window)
        super().__init__(encoder)

    def reset(self) -> None:
        from memtab_env.memory import Memory

        super().reset()
        #: the env's own memory model, one observer: the rule of ``window:k`` lives there
        self.memory = Memory(f"window:{self.window}", 1, self._positions)

    def watch(self, revealed: Any) -> None:
        """One action's reveals, the positions in order (every player's actions)."""
        self.memory.on_action(0, revealed)

    def observe(self, observation: np.ndarray) -> np.ndarray:
        """A copy of the flat int8 ``observation`` whose face-down cards show their kind
        exactly when they lie in the window (the record is updated first)."""
        obs, shown, down = self._record(observation)
        unwatched = down & shown & (self.memory.reveal_time == 0)
        if unwatched.any():
            raise ValueError(
                f"WindowRecall: face-down position {int(np.flatnonzero(unwatched)[0])} is shown but no "
                "reveal of it was watched: the game loop must call watch(revealed) after every "
                "action (memtab_env.play.play_game does)")
        keep = down & self.memory.known_row(0) & (self.seen >= 0)
        out = obs.copy()
        rows = out[self._card].reshape(self._positions, self._kinds)
        rows[down] = 0  # a view into out
        rows[keep, self.seen[keep]] = 1
        return out
