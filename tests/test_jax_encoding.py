"""The building blocks of the JAX observation encoders (:mod:`memtab_env.jax.encoding`)
against their numpy definition; the encoders themselves are held equal to the numba ones
flip for flip by ``tests/test_jax_backend.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")
jnp = jax.numpy

from memtab_env.jax.encoding import bit_set, one_hot, pack_bytes, raw  # noqa: E402

DTYPES = {"int8": (np.int8, -128, 127), "uint8": (np.uint8, 0, 255), "int32": (np.int32, -1000, 1000)}


def expected_one_hot(values: np.ndarray, depth: int, shown: np.ndarray | None = None) -> np.ndarray:
    out = np.zeros((len(values), depth), np.int8)
    for p, v in enumerate(values.astype(np.int64)):
        if (shown is None or shown[p]) and 0 <= v < depth:
            out[p, v] = 1
    return out.ravel()


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(1, 140), dtype=st.sampled_from(sorted(DTYPES)), data=st.data())
def test_one_hot_is_one_row_per_value_zero_outside_the_range_or_unshown(depth, dtype, data):
    kind, lo, hi = DTYPES[dtype]
    ints = st.integers(max(lo, -3), min(hi, depth + 2))
    values = np.asarray(data.draw(st.lists(ints, min_size=1, max_size=70)), kind)
    shown = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))))
    got = np.asarray(pack_bytes([one_hot(jnp.asarray(values), depth, jnp.asarray(shown))]))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, expected_one_hot(values, depth, shown))
    np.testing.assert_array_equal(np.asarray(pack_bytes([one_hot(jnp.asarray(values), depth)])),
                                  expected_one_hot(values, depth))


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 32), data=st.data())
def test_bit_set_bytes_are_the_bits_of_each_value(depth, data):
    ints = st.integers(0, 2 ** depth - 1)
    values = np.asarray(data.draw(st.lists(ints, min_size=1, max_size=12)), np.int64)
    got = np.asarray(pack_bytes([bit_set(jnp.asarray(values.astype(np.uint32)), depth)]))
    expected = ((values[:, None] >> np.arange(depth)) & 1).astype(np.int8).ravel()
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=40, deadline=None)
@given(bounds=st.tuples(st.integers(-128, 127), st.integers(-128, 127)).map(sorted), data=st.data())
def test_raw_bytes_are_the_values(bounds, data):
    low, high = bounds
    values = np.asarray(data.draw(st.lists(st.integers(low, high), min_size=1, max_size=40)), np.int32)
    got = np.asarray(pack_bytes([raw(jnp.asarray(values), low, high)]))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, values.astype(np.int8))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_blocks_follow_one_another_and_vmap_row_by_row(data):
    """Mixed blocks in any order, batched: each row equals its own encoding and the
    numpy definition of every block, laid end to end."""
    batch = data.draw(st.integers(1, 4))
    specs = data.draw(st.lists(st.one_of(
        st.tuples(st.just("one_hot"), st.integers(0, 9), st.integers(0, 30)),
        st.tuples(st.just("bit_set"), st.integers(0, 5), st.integers(1, 20)),
        st.tuples(st.just("raw"), st.integers(0, 9), st.integers(0, 60))), min_size=1, max_size=5))
    arrays = []
    for kind, count, depth in specs:
        if kind == "one_hot":
            ints = st.integers(-2, depth + 1)
        elif kind == "bit_set":
            ints = st.integers(0, 2 ** depth - 1)
        else:
            ints = st.integers(-depth // 2, depth - depth // 2)
        arrays.append(np.asarray(data.draw(st.lists(st.lists(ints, min_size=count, max_size=count),
                                                    min_size=batch, max_size=batch)), np.int64))

    def encode(*rows):
        blocks = []
        for (kind, _, depth), row in zip(specs, rows, strict=True):
            if kind == "one_hot":
                blocks.append(one_hot(row, depth))
            elif kind == "bit_set":
                blocks.append(bit_set(row, depth))
            else:
                blocks.append(raw(row, -depth // 2, depth - depth // 2))
        return pack_bytes(blocks)

    inputs = [jnp.asarray(a.astype(np.uint32 if k == "bit_set" else np.int32))
              for (k, _, _), a in zip(specs, arrays, strict=True)]
    batched = np.asarray(jax.jit(jax.vmap(encode))(*inputs))
    for b in range(batch):
        expected = []
        for (kind, _, depth), a in zip(specs, arrays, strict=True):
            row = a[b]
            if kind == "one_hot":
                expected.append(expected_one_hot(row, depth))
            elif kind == "bit_set":
                expected.append(((row[:, None] >> np.arange(depth)) & 1).astype(np.int8).ravel())
            else:
                expected.append(row.astype(np.int8))
        np.testing.assert_array_equal(batched[b], np.concatenate(expected))
        np.testing.assert_array_equal(np.asarray(encode(*(x[b] for x in inputs))), batched[b])


def test_empty_blocks_give_no_bytes():
    assert pack_bytes([]).shape == (0,)
    assert pack_bytes([one_hot(jnp.zeros(0, jnp.int8), 5), one_hot(jnp.zeros(3, jnp.int8), 0)]).shape == (0,)
    np.testing.assert_array_equal(np.asarray(pack_bytes([one_hot(jnp.zeros(0, jnp.int8), 5),
                                                         raw(jnp.asarray([3]), 0, 5)])), [3])


def test_raw_bounds_outside_int8_are_refused():
    with pytest.raises(ValueError, match=r"raw: bounds \[0, 200\] must lie within int8"):
        raw(jnp.asarray([1]), 0, 200)
