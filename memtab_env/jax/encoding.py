"""Building blocks of the JAX observation encoders, shared by every game.

An encoder describes its flat int8 observation as a list of blocks, in layout order, and
:func:`pack_bytes` builds it::

    pack_bytes([one_hot(status, 3), one_hot(kinds, 13, shown=visible),
                raw(pairs, 0, 26), one_hot(flip[None], 2)])

Each block has *sources* (one value per position or seat) and a fixed number of bytes per
source: :func:`one_hot` (byte ``k`` is 1 where the value is ``k``), :func:`bit_set` (byte
``k`` is bit ``k`` of the value) and :func:`raw` (one byte, the value itself).

Why not ``jnp.concatenate`` of ``[P, depth]`` compares: XLA's CPU loops then divide every
byte's index by ``depth``, about three times the work (``benchmarks/bench_jax.py``). Here a
block's bytes are cut into runs of a power of two; each run reads one uint32 word that
packs the codes of the sources it covers, and every byte is a shift, a mask and a compare.
Blocks are built one by one and concatenated: one loop over mixed blocks measured slower
(its per-byte tables no longer fold into constants).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

#: bits in the word that carries a run's codes
_WORD_BITS = 32
#: the kinds of block, as :class:`Block` names them
_ONE_HOT, _BIT_SET, _RAW = "one_hot", "bit_set", "raw"


class Block(NamedTuple):
    """Part of an observation: ``codes`` (uint32[m], one per source, each below
    ``2 ** code_bits``) and how each source becomes ``width`` bytes."""

    codes: jax.Array
    kind: str
    width: int
    code_bits: int
    low: int = 0


def one_hot(values: jax.Array, depth: int, shown: jax.Array | None = None) -> Block:
    """``depth`` bytes per value: the one-hot of ``values[p]`` (any integer dtype) over
    ``range(depth)``, all zeros where ``shown`` (bool) is False or the value lies outside
    the range."""
    values = jnp.asarray(values).astype(jnp.int32)
    ok = (values >= 0) & (values < depth)
    if shown is not None:
        ok = ok & shown
    codes = jnp.where(ok, values, depth).astype(jnp.uint32)  # depth: no byte set
    return Block(codes, _ONE_HOT, depth, depth.bit_length())


def bit_set(values: jax.Array, depth: int) -> Block:
    """``depth`` bytes per value: byte ``k`` is bit ``k`` of ``values[p]`` (0 or 1); the
    values must be non-negative and below ``2 ** depth``."""
    return Block(jnp.asarray(values).astype(jnp.uint32), _BIT_SET, depth, depth)


def raw(values: jax.Array, low: int, high: int) -> Block:
    """One byte per value, the value itself; every value must lie in ``[low, high]``
    (an int8 range: the encoder's field bounds)."""
    if not -128 <= low <= high <= 127:
        raise ValueError(f"raw: bounds [{low}, {high}] must lie within int8's [-128, 127]")
    codes = (jnp.asarray(values).astype(jnp.int32) - low).astype(jnp.uint32)
    return Block(codes, _RAW, 1, (high - low).bit_length(), low)


def pack_bytes(blocks: list[Block]) -> jax.Array:
    """int8[size]: the blocks' bytes one after the other."""
    parts = [_block_bytes(b) for b in blocks]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, jnp.int8)


def _block_bytes(block: Block) -> jax.Array:
    count = block.codes.shape[0]
    plan = _plan(count, block.width, block.code_bits, block.kind == _BIT_SET)
    if plan.size == 0:
        return jnp.zeros(0, jnp.int8)
    codes = jnp.concatenate([block.codes, jnp.zeros(plan.slots - 1, jnp.uint32)])
    words = block.codes
    for slot in range(1, plan.slots):  # words[s]: the codes of s, s + 1, ... packed
        words = words | (codes[slot:slot + count] << (slot * plan.bits))
    fields = (words[plan.first_source][:, None] >> plan.shift) & jnp.uint32(plan.mask)  # [runs, run]
    if block.kind == _ONE_HOT:
        out = fields == plan.target
    else:
        out = fields.astype(jnp.int32) + block.low
    return out.astype(jnp.int8).ravel()[:plan.size]


class _Plan(NamedTuple):
    """Where each byte of a block finds its code (numpy constants)."""

    size: int
    bits: int  # bits per source in a word
    slots: int  # most sources one run covers
    mask: int
    first_source: np.ndarray  # int32[runs]
    shift: np.ndarray  # uint32[runs, run]: where each byte's bits lie in its run's word
    target: np.ndarray  # uint32[runs, run]: the value a one-hot byte stands for


@functools.cache
def _plan(count: int, width: int, code_bits: int, bit_per_byte: bool) -> _Plan:
    size = count * width
    if size == 0:
        return _Plan(0, code_bits, 1, 0, np.zeros(0, np.int32), *(np.zeros((0, 1), np.uint32),) * 2)
    if code_bits > _WORD_BITS:
        raise ValueError(f"pack_bytes: a code of {code_bits} bits does not fit a word of {_WORD_BITS}")
    for run in (32, 16, 8, 4, 2, 1):  # the longest runs whose codes fit one word
        runs = -(-size // run)
        byte = np.minimum(np.arange(runs * run), size - 1)  # the tail repeats the last byte
        first = (np.arange(runs) * run) // width
        slot = byte // width - np.repeat(first, run)
        slots = int(slot.max()) + 1
        if slots * code_bits <= _WORD_BITS:
            break
    part = byte % width
    shift = slot * code_bits + (part if bit_per_byte else 0)
    return _Plan(size, code_bits, slots, 1 if bit_per_byte else (1 << code_bits) - 1,
                 first.astype(np.int32), shift.reshape(runs, run).astype(np.uint32),
                 part.reshape(runs, run).astype(np.uint32))
