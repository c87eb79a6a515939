"""Memory models: from the public history of reveals to what each observer still knows.

Every player watches every flip (the rules hide nothing that was turned face up). What a
*later* observation still shows of a card that went back face down is decided by the
memory model, chosen per env (``docs/rulings.md``, "Memory models"):

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
``window:k``  it is among the ``k`` most recent reveals (0 <= k <= 1000000, the bound
              :data:`MAX_WINDOW`; a card revealed twice counts from its latest reveal; a
              window longer than a game is ``perfect``).
============  ============================================================================

Cards face up right now and cards in a tableau are visible to everybody under every
model; the models only concern cards face down on the table. Positions never change,
so a remembered position identifies its card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.vector.memory_kernels import MEMORY_CODES, remember_reveal, threshold
from memtab_env.vector.rng import PCG_WORDS_64

MEMORY_KINDS = ("perfect", "none", "decay", "window")
#: largest window of ``window:k`` (longer than any game: a larger one would be ``perfect``)
MAX_WINDOW = 1_000_000
_ALLOWED = "'perfect', 'none', 'decay:p' (0 <= p <= 1) or 'window:k' (integer 0 <= k <= 1000000)"


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
        if not 0 <= k <= MAX_WINDOW:
            raise InvalidOptionError(f"memory {spec!r}: window size must be in [0, {MAX_WINDOW}]; "
                                     f"allowed: {_ALLOWED}")
        return MemorySpec("window", k)
    raise InvalidOptionError(f"unknown memory model {spec!r}; allowed: {_ALLOWED}")


class Memory:
    """What every observer of one game remembers. Feed it every action, query it per observer.

    ``on_action(actor, revealed_positions)`` must be called once per action, in order;
    ``remembered(observer, face_down)`` is the bool mask of face-down positions whose card
    ``observer`` remembers.

    The state is the public history in compact form, as in the batched engines: the
    reveal count ``time``, the count at each position's latest reveal (``reveal_time``, 0
    = never) and, per observer, the count before its latest action. Under ``perfect``,
    ``none`` and ``window`` an observer remembers exactly the positions with
    ``reveal_time > threshold`` (:meth:`source`); only ``decay`` keeps remembered bits of
    its own, since its forgetting is random. The rules of every model are the kernels of
    :mod:`memtab_env.vector.memory_kernels` (``threshold``, ``remember_reveal``), the ones
    every game's batch runs: this class holds one game's state for them.
    """

    def __init__(
        self,
        spec: str | MemorySpec,
        num_observers: int,
        num_positions: int,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        self.spec = parse_memory(spec)
        self._kind = self.spec.kind
        self._code = MEMORY_CODES[self._kind]
        self._window_size = int(self.spec.param) if self._kind == "window" else 0
        self._p_forget = float(self.spec.param) if self._kind == "decay" else None
        self.num_observers = num_observers
        self.num_positions = num_positions
        self.reset(seed)

    @property
    def random(self) -> bool:
        """Whether this model draws from its seeded streams (``decay`` only)."""
        return self._kind == "decay"

    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Forget everything; ``seed`` seeds the per-observer forgetting streams (decay):
        observer o draws as ``default_rng(SeedSequence(seed).spawn(n)[o])``."""
        n, p = self.num_observers, self.num_positions
        self.time = 0  # number of reveals so far
        # reveal count at each position's latest reveal (1-based); 0 = never revealed
        self.reveal_time = np.zeros(p, dtype=np.int64)
        # reveal count before each observer's latest action (the threshold of none)
        self._action_start = [0] * n
        # decay: remembered bits, observer o's at [0, o * p, +p), and the observers'
        # forgetting streams (rg[0, 4 o, +4): PCG64 state high, low, increment high, low)
        self._bits: np.ndarray | None = None
        self._rg: np.ndarray | None = None
        if self._kind == "decay":
            self._bits = np.zeros((1, n * p), dtype=np.int64)
            ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
            self._rg = np.zeros((1, PCG_WORDS_64 * n), dtype=np.uint64)
            for o, child in enumerate(ss.spawn(n)):
                state = np.random.PCG64(child).state["state"]
                for k, word in enumerate((state["state"] >> 64, state["state"], state["inc"] >> 64,
                                          state["inc"])):
                    self._rg[0, PCG_WORDS_64 * o + k] = word & 0xFFFFFFFFFFFFFFFF

    def on_action(self, actor: int, revealed: Sequence[int] | Sequence[tuple[int, int]]) -> None:
        """Record that ``actor`` acted and that its action revealed ``revealed`` positions
        (positions, or ``(position, kind)`` pairs as in ``Transition.revealed``).

        Under ``none`` the actor forgets everything revealed before this action and keeps
        what this action revealed: its next observation shows the result of its own flip
        (otherwise, in Pelmanism, the second card of a turn would never be shown to the
        player who flipped it) and what others reveal until then.
        """
        start = self.time
        times = self.reveal_time
        for item in revealed:
            pos = item[0] if type(item) is tuple else item
            if self._bits is not None:
                remember_reveal(self._bits, self._rg, 0, 0, pos, self.num_positions,
                                self.num_observers, self._p_forget, 0)
            self.time += 1
            times[pos] = self.time
        self._action_start[actor] = start

    def source(self, observer: int) -> tuple[np.ndarray, int]:
        """``(values, threshold)``: ``observer`` remembers position q (face down or not)
        exactly when ``values[q] > threshold``. The values are the reveal times (decay:
        the observer's remembered bits, threshold 0); the threshold is 0 under
        ``perfect``, the reveal count before the observer's latest action under ``none``,
        ``time - k`` under ``window:k``. Read-only views: fused encoders use them without
        copying."""
        if self._bits is not None:
            p = self.num_positions
            return self._bits[0, observer * p:(observer + 1) * p], 0
        return self.reveal_time, threshold(self._code, self._window_size, self.time,
                                           self._action_start[observer])

    @property
    def known(self) -> np.ndarray:
        """bool (observers, positions): what each observer remembers (a fresh array)."""
        return np.stack([self.known_row(o) for o in range(self.num_observers)])

    def known_row(self, observer: int) -> np.ndarray:
        """The observer's remembered bits over all positions (bool; face-down or not)."""
        values, threshold = self.source(observer)
        return values > threshold

    def remembered(self, observer: int, face_down: np.ndarray) -> np.ndarray:
        """Bool mask: face-down positions whose card ``observer`` remembers."""
        return self.known_row(observer) & face_down
