"""Building blocks of the JAX observation encoders, shared by every game."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def one_hot_rows(values: jax.Array, depth: int, shown: jax.Array | None = None) -> jax.Array:
    """int8[P * depth]: row ``p`` is the one-hot of ``values[p]`` (any integer dtype) over
    ``range(depth)``, all zeros where ``shown`` (bool[P]) is False or the value lies
    outside the range (the numba encoders' status and card blocks). Compared in the
    values' own dtype and kept bool until the one int8 conversion."""
    rows = values[:, None] == jnp.arange(depth, dtype=values.dtype)
    if shown is not None:
        rows = rows & shown[:, None]
    return rows.astype(jnp.int8).ravel()
