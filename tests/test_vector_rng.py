"""The batched engine's generators are NumPy's ``SeedSequence`` / ``PCG64`` bit for bit.

Everything the batch draws (deals, decay forgetting, game seeds, opponents) goes through
:mod:`memtab_env.vector.rng`; these tests pin each function to NumPy's own result.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from memtab_env.games.memtab.rules import DECK
from memtab_env.vector import rng as R

SEEDS = [0, 1, 5, 12345, 2**32 - 1, 2**32, 2**62 + 7, 2**63 + 12345, 2**64 - 1]
KEYS = [(), (0,), (1,), (1, 0), (1, 5), (0, 2**32 - 1)]


@njit(cache=True)
def _state(seed: np.uint64, key_len: int, k0: int, k1: int) -> np.ndarray:
    r = np.zeros((1, R.PCG_WORDS), dtype=np.uint64)
    R.seed_pcg64_buffered(r, 0, 0, seed, key_len, k0, k1)
    return r


@njit(cache=True)
def _draw(r: np.ndarray, kind: int, arg: int, count: int) -> np.ndarray:
    out = np.zeros(count, dtype=np.float64)
    for j in range(count):
        if kind == 0:
            out[j] = R.next_double(r, 0, 0)
        elif kind == 1:
            out[j] = R.integers_small(r, 0, 0, arg)
        elif kind == 2:
            out[j] = float(R.next_seed(r, 0, 0) >> np.uint64(11))  # exact in a double
        else:
            out[j] = float(R.next_uint32(r, 0, 0))
    return out


@njit(cache=True)
def _permutations(r: np.ndarray, deck: np.ndarray, count: int) -> np.ndarray:
    out = np.empty((count, deck.shape[0]), dtype=np.int8)
    for g in range(count):
        for p in range(deck.shape[0]):
            out[g, p] = deck[p]
        R.shuffle_row(r, 0, 0, out, g, 0, deck.shape[0])
    return out


def _pad(key: tuple[int, ...]) -> tuple[int, int, int]:
    k = [*key, 0, 0]
    return len(key), k[0], k[1]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("key", KEYS)
def test_seeding_matches_seedsequence(seed: int, key: tuple[int, ...]) -> None:
    r = _state(np.uint64(seed), *_pad(key))
    expected = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)).state["state"]
    assert (int(r[0, 0]) << 64) | int(r[0, 1]) == expected["state"]
    assert (int(r[0, 2]) << 64) | int(r[0, 3]) == expected["inc"]


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_draws_match_generator(seed: int) -> None:
    key = (1, 3)
    gen = lambda: np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))  # noqa: E731
    args = (np.uint64(seed), *_pad(key))
    np.testing.assert_array_equal(_draw(_state(*args), 0, 0, 100), gen().random(100))
    for k in (1, 2, 3, 7, 28, 1000, 2**31 + 11):
        g = gen()
        expected = [g.integers(k) for _ in range(60)]
        np.testing.assert_array_equal(_draw(_state(*args), 1, k, 60), expected)
    g = gen()
    expected = [g.integers(2**63) >> 11 for _ in range(40)]
    np.testing.assert_array_equal(_draw(_state(*args), 2, 0, 40), expected)
    g = gen()
    bits = g.bit_generator
    expected = [bits.random_raw() for _ in range(20)]
    raw = _draw(_state(*args), 3, 0, 40)  # 32-bit halves, low first
    halves = [h for x in expected for h in (x & 0xFFFFFFFF, x >> 32)]
    np.testing.assert_array_equal(raw, halves)


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffle_is_permutation_of_the_deck(seed: int) -> None:
    """Successive deals from one stream are NumPy's ``permutation(DECK)`` calls, including
    the 32-bit half carried over from one deal to the next."""
    g = np.random.default_rng(seed)
    expected = np.stack([g.permutation(DECK) for _ in range(5)])
    got = _permutations(_state(np.uint64(seed), 0, 0, 0), DECK, 5)
    np.testing.assert_array_equal(got, expected)
