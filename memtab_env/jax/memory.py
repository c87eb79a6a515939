"""The memory models of :mod:`memtab_env.memory` as pure JAX functions.

The same compact form as the numpy :class:`memtab_env.memory.Memory`: the reveal count
``time``, the count at each position's latest reveal (``reveal_time``, 0 = never) and, per
observer, the count before its latest action (``action_start``). Under ``perfect``,
``none`` and ``window:k`` an observer remembers exactly the positions whose
``reveal_time`` is above a threshold; ``decay:p`` keeps remembered bits per observer,
forgotten with probability ``p`` after every reveal. The numpy model draws its
forgetting from seeded numpy streams, this one from uniforms the caller passes
(:func:`reveal`), drawn from JAX keys: the same law, other streams.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from memtab_env.memory import MemorySpec, parse_memory


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class MemoryState:
    """What every observer of one game remembers (a pytree of fixed-shape arrays).

    Attributes:
        time: int32, reveals so far.
        reveal_time: int32[P], ``time`` at each position's latest reveal (0 = never).
        action_start: int32[n], ``time`` before each observer's latest action.
        bits: bool[n, P] remembered bits under ``decay`` (shape (0, P) otherwise).
    """

    time: jax.Array
    reveal_time: jax.Array
    action_start: jax.Array
    bits: jax.Array


class MemoryModel:
    """One parsed memory model for ``num_observers`` observers of ``num_positions``."""

    def __init__(self, spec: str | MemorySpec, num_observers: int, num_positions: int) -> None:
        self.spec = parse_memory(spec)
        self.kind = self.spec.kind
        self.param = self.spec.param
        self.num_observers = num_observers
        self.num_positions = num_positions

    @property
    def random(self) -> bool:
        """Whether :func:`reveal` reads its uniforms (``decay`` only)."""
        return self.kind == "decay"

    def init(self) -> MemoryState:
        n, p = self.num_observers, self.num_positions
        return MemoryState(
            time=jnp.int32(0),
            reveal_time=jnp.zeros(p, jnp.int32),
            action_start=jnp.zeros(n, jnp.int32),
            bits=jnp.zeros((n if self.random else 0, p), jnp.bool_),
        )

    def reveal(self, mem: MemoryState, actor: jax.Array, position: jax.Array,
               uniforms: jax.Array | None = None) -> MemoryState:
        """``actor`` acted and its action revealed ``position``.

        ``uniforms`` (float[n, P], decay only): observer o forgets remembered position q
        when ``uniforms[o, q] < p``, before the revealed card is added. The numpy model
        draws the same Bernoulli(p) for every remembered bit.
        """
        start = mem.time
        time = start + 1
        hit = jnp.arange(self.num_positions) == position
        bits = mem.bits
        if self.random:
            if self.param > 0.0:
                assert uniforms is not None, "decay needs the forgetting uniforms"
                bits = bits & ~(uniforms < self.param)
            bits = bits | hit[None, :]
        return MemoryState(
            time=time,
            reveal_time=jnp.where(hit, time, mem.reveal_time),
            action_start=mem.action_start.at[actor].set(start),
            bits=bits,
        )

    def remembered(self, mem: MemoryState, observer: jax.Array, face_down: jax.Array) -> jax.Array:
        """bool[P]: face-down positions whose card ``observer`` remembers."""
        if self.kind == "decay":
            return mem.bits[observer] & face_down
        if self.kind == "perfect":
            threshold = jnp.int32(0)
        elif self.kind == "none":
            threshold = mem.action_start[observer]
        else:  # window:k
            # a window longer than any game remembers everything (and fits int32)
            threshold = jnp.maximum(0, mem.time - min(int(self.param), 2**30))
        return (mem.reveal_time > threshold) & face_down
