"""Memory models: from the public history of reveals to what each observer still knows.

Every player watches every flip (the rules hide nothing that was turned face up). What a
*later* observation still shows of a card that went back face down is decided by the
memory model, chosen per env (``RULINGS.md``, "Memory models"):

============  ============================================================================
spec          an observer remembers a face-down card when ...
============  ============================================================================
``perfect``   it was ever revealed.
``none``      it was revealed by or after that observer's own previous action (what it
              watched since its last observation: the result of its own flip and the
              flips of others since); nothing older. A recurrent agent must carry the
              rest.
``decay:p``   it was revealed and not yet forgotten: after every flip, each remembered
              card is forgotten with probability ``p`` (0 <= p <= 1), independently per
              observer, drawn from per-observer seeded streams; the card just revealed is
              then added. Same seed, same forgetting.
``window:k``  it is among the ``k`` most recent reveals (k >= 0; a card revealed twice
              counts from its latest reveal).
============  ============================================================================

Cards face up right now and cards in a tableau are visible to everybody under every
model; the models only concern cards face down on the table. Positions never change,
so a remembered position identifies its card.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memtab_env.errors import InvalidOptionError

MEMORY_KINDS = ("perfect", "none", "decay", "window")
_ALLOWED = "'perfect', 'none', 'decay:p' (0 <= p <= 1) or 'window:k' (integer k >= 0)"


@dataclass(frozen=True)
class MemorySpec:
    """A parsed memory-model spec: ``kind`` and its parameter (p for decay, k for window)."""

    kind: str
    param: float = 0.0

    def __str__(self) -> str:
        if self.kind == "decay":
            return f"decay:{self.param:g}"
        if self.kind == "window":
            return f"window:{int(self.param)}"
        return self.kind


def parse_memory(spec: str | MemorySpec) -> MemorySpec:
    """Parse ``'perfect' | 'none' | 'decay:p' | 'window:k'``; raise InvalidOptionError."""
    if isinstance(spec, MemorySpec):
        return spec
    if not isinstance(spec, str):
        raise InvalidOptionError(f"memory must be a string, one of {_ALLOWED}; got {spec!r}")
    kind, _, arg = spec.strip().partition(":")
    if kind in ("perfect", "none"):
        if arg:
            raise InvalidOptionError(f"memory {kind!r} takes no parameter; got {spec!r}")
        return MemorySpec(kind)
    if kind == "decay":
        try:
            p = float(arg)
        except ValueError:
            raise InvalidOptionError(
                f"memory {spec!r}: decay needs a probability, e.g. 'decay:0.1'; allowed: {_ALLOWED}"
            ) from None
        if not 0.0 <= p <= 1.0:
            raise InvalidOptionError(
                f"memory {spec!r}: decay probability must be in [0, 1]; allowed: {_ALLOWED}"
            )
        return MemorySpec("decay", p)
    if kind == "window":
        try:
            k = int(arg)
        except ValueError:
            raise InvalidOptionError(
                f"memory {spec!r}: window needs an integer size, e.g. 'window:6'; allowed: {_ALLOWED}"
            ) from None
        if k < 0:
            raise InvalidOptionError(f"memory {spec!r}: window size must be >= 0; allowed: {_ALLOWED}")
        return MemorySpec("window", k)
    raise InvalidOptionError(f"unknown memory model {spec!r}; allowed: {_ALLOWED}")


class Memory:
    """What every observer of one game remembers. Feed it every action, query it per observer.

    ``on_action(actor, revealed_positions)`` must be called once per action, in order;
    ``remembered(observer, face_down)`` is the bool mask of face-down positions whose card
    ``observer`` remembers.
    """

    def __init__(
        self,
        spec: str | MemorySpec,
        num_observers: int,
        num_positions: int,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        self.spec = parse_memory(spec)
        self.num_observers = num_observers
        self.num_positions = num_positions
        self.reset(seed)

    @property
    def random(self) -> bool:
        """Whether this model draws from its seeded streams (``decay`` only)."""
        return self.spec.kind == "decay"

    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Forget everything; ``seed`` seeds the per-observer forgetting streams (decay)."""
        n, p = self.num_observers, self.num_positions
        self.time = 0  # number of reveals so far
        # time of each position's latest reveal (1-based); 0 = never revealed
        self.reveal_time = np.zeros(p, dtype=np.int64)
        # time of each observer's latest action
        self.last_action = np.zeros(n, dtype=np.int64)
        # known[o, q]: observer o remembers the card at q (kept up to date for every model)
        self.known = np.zeros((n, p), dtype=bool)
        self._window: deque[tuple[int, int]] = deque()
        self._rngs: list[np.random.Generator] = []
        if self.spec.kind == "decay":
            ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
            self._rngs = [np.random.default_rng(s) for s in ss.spawn(n)]

    def on_action(self, actor: int, revealed: Sequence[int] | Sequence[tuple[int, int]]) -> None:
        """Record that ``actor`` acted and that its action revealed ``revealed`` positions
        (positions, or ``(position, kind)`` pairs as in ``Transition.revealed``).

        Under ``none`` the actor forgets everything revealed before this action and keeps
        what this action revealed: its next observation shows the result of its own flip
        (otherwise, in Pelmanism, the second card of a turn would never be shown to the
        player who flipped it) and what others reveal until then.
        """
        kind = self.spec.kind
        known = self.known
        for item in revealed:
            pos = item[0] if type(item) is tuple else item
            if kind == "decay" and self.spec.param > 0.0:
                p = self.spec.param
                for obs in range(self.num_observers):
                    row = known[obs]
                    idx = np.flatnonzero(row)
                    if idx.size:
                        forget = self._rngs[obs].random(idx.size) < p
                        row[idx[forget]] = False
            self.time += 1
            self.reveal_time[pos] = self.time
            known[:, pos] = True
            if kind == "window":
                self._window.append((self.time, pos))
                if len(self._window) > self.spec.param:
                    t0, p0 = self._window.popleft()
                    if self.reveal_time[p0] == t0:  # not revealed again since
                        known[:, p0] = False
        if kind == "none":
            known[actor] = False
            for item in revealed:
                known[actor, item[0] if type(item) is tuple else item] = True
        self.last_action[actor] = self.time

    def known_row(self, observer: int) -> np.ndarray:
        """The observer's remembered bits over all positions (a view; face-down or not)."""
        return self.known[observer]

    def remembered(self, observer: int, face_down: np.ndarray) -> np.ndarray:
        """Bool mask: face-down positions whose card ``observer`` remembers."""
        return self.known[observer] & face_down
