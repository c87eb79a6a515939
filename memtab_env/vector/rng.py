"""NumPy's ``SeedSequence`` and ``PCG64`` re-expressed as numba kernels, bit for bit.

The batched engine deals, forgets (``decay:p``) and draws opponent moves inside compiled
kernels, B games at a time, so it cannot call ``np.random.Generator`` per game. It runs the
very same generator instead: ``default_rng(seed)`` is ``PCG64(SeedSequence(seed))``, and
this module reproduces

- ``SeedSequence(entropy, spawn_key=...)`` -> the 4 x 64-bit words that seed ``PCG64``
  (:func:`seed_pcg64`), for an entropy ``0 <= seed < 2**64`` and spawn keys of words
  below ``2**32``;
- ``PCG64.random_raw()`` (:func:`next_uint64`), its buffered 32-bit draw
  (:func:`next_uint32`), ``Generator.random()`` (:func:`next_double`),
  ``Generator.integers(k)`` for ``1 <= k < 2**32`` (:func:`integers_small`),
  ``Generator.integers(2**63)`` (:func:`next_seed`) and
  ``Generator.permutation(x)`` of a 1-D array (:func:`shuffle_row`).

``tests/test_vector_rng.py`` checks every one of them against NumPy.

A generator is 6 ``uint64`` words in row ``i`` of a 2-D state array ``r``, from column
``o``: ``[o]`` state high, ``[o + 1]`` state low, ``[o + 2]`` increment high, ``[o + 3]``
increment low, ``[o + 4]`` has_uint32 (0/1), ``[o + 5]`` the buffered 32-bit half.
(Functions index ``r[i, o + k]`` rather than taking a row view: in numba a view costs
reference counting, which dominated the batched loops.)
Generators that only draw 64-bit words (:func:`next_uint64`, :func:`next_double`,
:func:`next_seed`) never touch the last two words and may be stored in 4.

All arithmetic is on ``np.uint64`` scalars: a ``uint64`` mixed with a Python int becomes
a float64 in numba, so every constant below is a ``np.uint64``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PCG_WORDS = 6  # words of a generator with the 32-bit buffer
PCG_WORDS_64 = 4  # words of a generator that only draws 64-bit words

_M32 = np.uint64(0xFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U11 = np.uint64(11)
_U16 = np.uint64(16)
_U32 = np.uint64(32)
_U58 = np.uint64(58)
_U63 = np.uint64(63)
_U64 = np.uint64(64)
_MULT_HI = np.uint64(0x2360ED051FC65DA4)  # PCG_DEFAULT_MULTIPLIER_128
_MULT_LO = np.uint64(0x4385DF649FCCF645)
# SeedSequence constants (numpy/random/bit_generator.pyx)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_POOL = 4
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def _mul_wide(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The 128-bit product ``a * b`` as ``(high, low)``."""
    a0 = a & _M32
    a1 = a >> _U32
    b0 = b & _M32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _U32) + (p01 & _M32) + (p10 & _M32)
    hi = p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    lo = (mid << _U32) | (p00 & _M32)
    return hi, lo


@njit(cache=True)
def _pcg_step(r: np.ndarray, i: int, o: int) -> None:
    """state = state * MULT + inc (mod 2**128)."""
    shi = r[i, o]
    slo = r[i, o + 1]
    hi, lo = _mul_wide(slo, _MULT_LO)
    hi = hi + shi * _MULT_LO + slo * _MULT_HI
    lo2 = lo + r[i, o + 3]
    carry = _U1 if lo2 < lo else _U0
    r[i, o] = hi + r[i, o + 2] + carry
    r[i, o + 1] = lo2


@njit(cache=True)
def next_uint64(r: np.ndarray, i: int, o: int) -> np.uint64:
    """``PCG64.random_raw()``: step, then the XSL-RR output of the new state."""
    _pcg_step(r, i, o)
    hi = r[i, o]
    x = hi ^ r[i, o + 1]
    rot = hi >> _U58
    return (x >> rot) | (x << ((_U64 - rot) & _U63))


@njit(cache=True)
def next_uint32(r: np.ndarray, i: int, o: int) -> np.uint64:
    """NumPy's buffered 32-bit draw: low half of a 64-bit word, then its high half."""
    if r[i, o + 4] != _U0:
        r[i, o + 4] = _U0
        return r[i, o + 5]
    x = next_uint64(r, i, o)
    r[i, o + 4] = _U1
    r[i, o + 5] = x >> _U32
    return x & _M32


@njit(cache=True)
def next_double(r: np.ndarray, i: int, o: int) -> float:
    """``Generator.random()``: a double in [0, 1) from the top 53 bits of a 64-bit word."""
    return float(next_uint64(r, i, o) >> _U11) * _TWO_M53


@njit(cache=True)
def next_seed(r: np.ndarray, i: int, o: int) -> np.uint64:
    """``Generator.integers(2**63)`` (Lemire's method for a range of 2**63 is a shift)."""
    return next_uint64(r, i, o) >> _U1


@njit(cache=True)
def random_interval(r: np.ndarray, i: int, o: int, max_value: int) -> int:
    """NumPy's ``random_interval(max)`` for ``max < 2**32``: a uniform int in [0, max]
    by masked rejection on buffered 32-bit draws (what ``shuffle`` uses)."""
    if max_value == 0:
        return np.int64(0)
    mx = np.uint64(max_value)
    mask = mx
    mask |= mask >> _U1
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> _U16
    value = next_uint32(r, i, o) & mask
    while value > mx:
        value = next_uint32(r, i, o) & mask
    return np.int64(value)


@njit(cache=True)
def integers_small(r: np.ndarray, i: int, o: int, k: int) -> int:
    """``Generator.integers(k)`` for ``1 <= k < 2**32`` (Lemire's method on 32-bit draws)."""
    if k <= 1:
        return np.int64(0)  # NumPy draws nothing for a range of one value
    rng_excl = np.uint64(k)
    m = next_uint32(r, i, o) * rng_excl
    leftover = m & _M32
    if leftover < rng_excl:
        threshold = ((_M32 - (rng_excl - _U1)) % rng_excl) & _M32
        while leftover < threshold:
            m = next_uint32(r, i, o) * rng_excl
            leftover = m & _M32
    return np.int64(m >> _U32)


@njit(cache=True)
def shuffle_row(r: np.ndarray, i: int, o: int, x: np.ndarray, row: int, start: int, size: int) -> None:
    """``Generator.shuffle`` of ``x[row, start:start + size]`` in place (Fisher-Yates
    from the end, ``random_interval`` draws)."""
    for k in range(size - 1, 0, -1):
        j = random_interval(r, i, o, k)
        t = x[row, start + k]
        x[row, start + k] = x[row, start + j]
        x[row, start + j] = t


@njit(cache=True)
def _hash32(value: np.uint64, h: np.uint64, mult: np.uint64) -> tuple[np.uint64, np.uint64]:
    """SeedSequence's 32-bit hash step: the hashed ``value`` and the next hash constant
    (``h * mult``); ``hashmix`` uses ``_MULT_A``, ``generate_state`` ``_MULT_B``."""
    value = (value ^ h) & _M32
    h = (h * mult) & _M32
    value = (value * h) & _M32
    return value ^ (value >> _U16), h


@njit(cache=True)
def _hashmix(value: np.uint64, hc: np.uint64) -> tuple[np.uint64, np.uint64]:
    """SeedSequence's ``hashmix``: returns the hashed value and the next hash constant."""
    return _hash32(value, hc, _MULT_A)


@njit(cache=True)
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = ((_MIX_MULT_L * x) - (_MIX_MULT_R * y)) & _M32
    return result ^ (result >> _U16)


@njit(cache=True)
def _mix_into(
    src: np.uint64, a: np.uint64, b: np.uint64, c: np.uint64, hc: np.uint64
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """Mix the word ``src`` into ``a``, ``b`` and ``c`` in that order (one hash each)."""
    h, hc = _hashmix(src, hc)
    a = _mix(a, h)
    h, hc = _hashmix(src, hc)
    b = _mix(b, h)
    h, hc = _hashmix(src, hc)
    c = _mix(c, h)
    return a, b, c, hc


@njit(cache=True)
def _mix_word(
    p0: np.uint64, p1: np.uint64, p2: np.uint64, p3: np.uint64, word: np.uint64, hc: np.uint64
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """Mix one entropy word beyond the pool size into every pool word."""
    h, hc = _hashmix(word, hc)
    p0 = _mix(p0, h)
    p1, p2, p3, hc = _mix_into(word, p1, p2, p3, hc)
    return p0, p1, p2, p3, hc


@njit(cache=True)
def _out_pair(lo_word: np.uint64, hi_word: np.uint64, hb: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Two 32-bit words of ``generate_state``, paired little-endian into one 64-bit word,
    and the next hash constant."""
    lo, hb = _hash32(lo_word, hb, _MULT_B)
    hi, hb = _hash32(hi_word, hb, _MULT_B)
    return lo | (hi << _U32), hb


@njit(cache=True)
def seed_pcg64(
    r: np.ndarray, i: int, o: int, seed: np.uint64, key_len: int, k0: int, k1: int
) -> None:
    """Seed the generator at ``r[o:o+4]`` exactly as ``PCG64(SeedSequence(seed,
    spawn_key=key))`` does, ``key`` being ``()``, ``(k0,)`` or ``(k0, k1)`` by ``key_len``.

    ``0 <= seed < 2**64`` and ``0 <= k0, k1 < 2**32``. The entropy words are the seed's
    32-bit words (one, or two from 2**32 on), zero-padded to the pool size of 4 when a
    spawn key follows, then the key words; padding and the pool's own zero fill hash
    alike, so the pool always starts from ``[lo, hi, 0, 0]``. No memory is allocated.
    """
    seed = np.uint64(seed)
    hc = _INIT_A
    p0, hc = _hashmix(seed & _M32, hc)
    p1, hc = _hashmix(seed >> _U32, hc)
    p2, hc = _hashmix(_U0, hc)
    p3, hc = _hashmix(_U0, hc)
    # every pool word into every other one, source-major (SeedSequence.mix_entropy)
    p1, p2, p3, hc = _mix_into(p0, p1, p2, p3, hc)
    p0, p2, p3, hc = _mix_into(p1, p0, p2, p3, hc)
    p0, p1, p3, hc = _mix_into(p2, p0, p1, p3, hc)
    p0, p1, p2, hc = _mix_into(p3, p0, p1, p2, hc)
    if key_len >= 1:
        p0, p1, p2, p3, hc = _mix_word(p0, p1, p2, p3, np.uint64(k0), hc)
    if key_len >= 2:
        p0, p1, p2, p3, hc = _mix_word(p0, p1, p2, p3, np.uint64(k1), hc)
    # generate_state(4, uint64): 8 words of 32 bits cycling over the pool, paired
    # little-endian into 64-bit words w0..w3
    hb = _INIT_B
    w0, hb = _out_pair(p0, p1, hb)
    w1, hb = _out_pair(p2, p3, hb)
    w2, hb = _out_pair(p0, p1, hb)
    w3, hb = _out_pair(p2, p3, hb)
    # pcg64_set_seed: initstate = (w0, w1), initseq = (w2, w3) as (high, low);
    # srandom: state = 0, inc = initseq << 1 | 1, step, state += initstate, step
    r[i, o + 2] = (w2 << _U1) | (w3 >> _U63)
    r[i, o + 3] = (w3 << _U1) | _U1
    r[i, o] = _U0
    r[i, o + 1] = _U0
    _pcg_step(r, i, o)
    lo = r[i, o + 1] + w1
    carry = _U1 if lo < r[i, o + 1] else _U0
    r[i, o] = r[i, o] + w0 + carry
    r[i, o + 1] = lo
    _pcg_step(r, i, o)


@njit(cache=True)
def seed_pcg64_buffered(
    r: np.ndarray, i: int, o: int, seed: np.uint64, key_len: int, k0: int, k1: int
) -> None:
    """:func:`seed_pcg64` plus an empty 32-bit buffer (``r[i, o + 4] = r[i, o + 5] = 0``)."""
    seed_pcg64(r, i, o, seed, key_len, k0, k1)
    r[i, o + 4] = _U0
    r[i, o + 5] = _U0
