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

from memtab_env.jax.encoding import one_hot_rows  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 30), data=st.data())
def test_one_hot_rows_is_one_row_per_value_zero_outside_the_range_or_unshown(depth, data):
    values = np.asarray(data.draw(st.lists(st.integers(-3, depth + 2), min_size=1, max_size=60)), np.int8)
    shown = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))))
    expected = np.zeros((len(values), depth), np.int8)
    for p, (v, s) in enumerate(zip(values, shown, strict=True)):
        if s and 0 <= v < depth:
            expected[p, v] = 1
    got = np.asarray(one_hot_rows(jnp.asarray(values), depth, jnp.asarray(shown)))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, expected.ravel())
    without_mask = np.asarray(one_hot_rows(jnp.asarray(values), depth))
    np.testing.assert_array_equal(without_mask, np.where(
        (values[:, None] == np.arange(depth)), 1, 0).astype(np.int8).ravel())
