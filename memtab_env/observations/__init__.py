"""Observation encoders: ``(state, observer, remembered) -> flat int8 vector``.

An encoder is built apart from the state it reads (OpenSpiel ``Observer`` style). Each
game has one encoder class with:

- ``fields``: the layout as an ordered list of :class:`Field` (name, shape); the flat
  vector is their concatenation, and the docstring of ``encode`` carries the same table
  (a test checks that they agree);
- ``size``, ``low``, ``high``: the flat vector's length and bounds (int8);
- ``encode(state, observer, remembered)``: a fresh int8 array;
- ``views(obs)``: named views (reshaped slices) of a flat vector, for people and tests;
- ``token_layout()``: where the fields lie, as plain data, for the set network
  (:mod:`memtab_env.agents.set_policy`); ``legal_status()``: the status block that shows
  the face-down (flippable) positions, for the observation-masked recurrent policies
  (:mod:`memtab_env.agents.recurrent_policy`). What those policies ask of a game comes
  from its encoder, never from a branch on the game's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Field:
    """One named block of the flat observation."""

    name: str
    shape: tuple[int, ...]
    low: int
    high: int
    doc: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


class Encoder:
    """Shared machinery: offsets, bounds and named views from ``self.fields``."""

    fields: list[Field]
    #: why :meth:`legal_status` has no answer for this game (None: it has one)
    no_legal_status: str | None = None

    def legal_status(self) -> list[int]:
        """``[first index of the status block, positions, status width, face-down
        column]``: the flips legal on an observation are the positions whose status is
        face down, where the action id of a flip is its position."""
        if self.no_legal_status is not None:
            raise ValueError(self.no_legal_status)
        lo, hi = self.offsets["status"]
        p = self.fields[0].shape[0]
        return [int(lo), int(p), int((hi - lo) // p), 0]

    def token_layout(self) -> dict[str, Any]:
        """Where the fields lie, as plain data (the set network's ``layout``)."""
        raise NotImplementedError

    def _finish(self) -> None:
        self.offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for f in self.fields:
            self.offsets[f.name] = (start, start + f.size)
            start += f.size
        self.size = start
        self.low = np.concatenate([np.full(f.size, f.low, np.int8) for f in self.fields])
        self.high = np.concatenate([np.full(f.size, f.high, np.int8) for f in self.fields])

    def observe(
        self, game: Any, state: Any, observer: int, memory: Any, on_turn: bool
    ) -> dict[str, np.ndarray]:
        """The AEC observation dict (``observation``, ``action_mask``, ``remembered_mask``),
        fresh arrays. ``memory`` is the game's :class:`~memtab_env.memory.Memory`; the action
        mask is all zeros unless ``on_turn``. Encoders may override this with a fused
        version; the result must be the same."""
        remembered = memory.known_row(observer) & game.face_down(state)
        if on_turn:
            mask = game.legal_mask(state).astype(np.int8)
        else:
            mask = np.zeros(game.info.num_actions, dtype=np.int8)
        return {"observation": self.encode(state, observer, remembered), "action_mask": mask,
                "remembered_mask": remembered.astype(np.int8)}

    def encode(self, state: Any, observer: int, remembered: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def field(self, name: str) -> Field:
        """The field called ``name`` (its shape and bounds)."""
        for f in self.fields:
            if f.name == name:
                return f
        names = [f.name for f in self.fields]
        raise KeyError(f"{type(self).__name__} has no field {name!r}; fields: {names}")

    def views(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named views of a flat observation (no copies)."""
        return {
            f.name: obs[self.offsets[f.name][0] : self.offsets[f.name][1]].reshape(f.shape)
            for f in self.fields
        }

    def index_table(self) -> str:
        """The layout as a reStructuredText-like table (the one in the docstring)."""
        rows = []
        for f in self.fields:
            a, b = self.offsets[f.name]
            rows.append(f"[{a}, {b})  {f.name}  {'x'.join(map(str, f.shape))}  {f.doc}")
        return "\n".join(rows)
