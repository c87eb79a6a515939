"""What the functional JAX env checks of its inputs, and where.

A *concrete* value (a Python number, a numpy array, a JAX array outside a trace) is
checked in full before anything is converted, so that JAX's conversions can never wrap it
(with 64-bit types off, JAX's default, ``jnp.asarray`` casts an int64 array to int32
modulo 2**32, so ``2**32 + 3`` would become the legal action 3):

- an action must be one integer (any width, signed or not; never a bool, a float, a
  string or a container of several); a value outside ``[0, num_actions)`` becomes ``-1``,
  the illegal action (:func:`action`); a batch is checked the same way by
  :func:`actions`;
- a player (``observe``, ``first_player``, ``learner``) must be one integer in
  ``[0, num_players)`` (:func:`player`);
- options have their exact types: ``observe`` a bool, ``illegal_action_penalty`` a
  finite real number (:func:`flag`, :func:`real`).

A *traced* value (inside ``jit``/``vmap``) only has its dtype and shape checked, at trace
time (an integer scalar); its value is the program's: an action outside the range is
illegal (the game ends with the penalty, never wrapped, whatever its integer dtype), a
player outside the range is *not* checked (JAX clamps indices). What JAX converts at a
``jit`` boundary is done before the env sees it: pass int32 arrays, or run a concrete
batch through :func:`actions` first (``docs/jax.md``).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from memtab_env.errors import InvalidOptionError


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a value being traced by ``jit``/``vmap``/``grad`` (not concrete)."""
    return isinstance(x, jax.core.Tracer)


def _integers(x: Any, what: str) -> np.ndarray:
    """``x`` as a numpy integer array (any shape), refusing bools, floats, strings, objects."""
    if isinstance(x, (bool, np.bool_)):
        raise InvalidOptionError(f"{what} is an integer, got the bool {x!r}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidOptionError(f"{what} is an integer, got {type(x).__name__} {x!r:.60} ({exc})") from None
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "O" and all(isinstance(v, int) and not isinstance(v, bool) for v in arr.flat):
            return arr  # Python integers too large for int64: compared exactly below
        raise InvalidOptionError(f"{what} is an integer, got {type(x).__name__} of dtype {arr.dtype} "
                                 f"{x!r:.60}")
    return arr


def _traced_integer(x: Any, what: str, scalar: bool) -> None:
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise InvalidOptionError(f"{what} is an integer, got a traced value of dtype {x.dtype}")
    if scalar and x.ndim != 0:
        raise InvalidOptionError(f"{what} is one integer per game, got a traced array of shape {x.shape} "
                                 "(vmap over a batch)")


def action(x: Any, num_actions: int) -> jax.Array:
    """One action as the env plays it: a concrete integer in ``[0, num_actions)`` as an
    int32 scalar, any other concrete integer as ``-1`` (illegal); a traced integer scalar
    unchanged (``Env.step`` makes its out-of-range values illegal). Anything else raises
    :class:`InvalidOptionError`."""
    if is_traced(x):
        _traced_integer(x, "an action", scalar=True)
        return x
    arr = _integers(x, "an action")
    if arr.ndim != 0:
        raise InvalidOptionError(f"an action is one integer, got shape {arr.shape} ({x!r:.60}); "
                                 "step one game per call, or vmap over a batch")
    value = int(arr)
    return jnp.int32(value if 0 <= value < num_actions else -1)


def actions(x: Any, num_actions: int) -> jax.Array:
    """A concrete batch of actions (any shape) as int32, every value outside
    ``[0, num_actions)`` as ``-1`` (illegal): what to pass to a jitted, vmapped ``step``
    when the actions come as int64 or uint64 numpy arrays."""
    if is_traced(x):
        _traced_integer(x, "an action", scalar=False)
        return x
    arr = _integers(x, "an action")
    valid = np.vectorize(lambda v: 0 <= int(v) < num_actions, otypes=[bool])(arr) if arr.dtype.kind == "O" \
        else (arr >= 0) & (arr < num_actions)
    return jnp.asarray(np.where(valid, arr, -1).astype(np.int32))


def player(x: Any, num_players: int, what: str = "player") -> Any:
    """A concrete player checked (one integer in ``[0, num_players)``, returned as int32);
    a traced one checked for dtype and shape only (returned unchanged)."""
    if is_traced(x):
        _traced_integer(x, what, scalar=True)
        return x
    arr = _integers(x, what)
    if arr.ndim != 0:
        raise InvalidOptionError(f"{what} is one integer, got shape {arr.shape} ({x!r:.60})")
    value = int(arr)
    if not 0 <= value < num_players:
        raise InvalidOptionError(f"{what} must be in [0, {num_players - 1}], got {value}")
    return jnp.int32(value)


def flag(x: Any, name: str) -> bool:
    """A bool option (``True``/``False``, numpy's bools too); anything else, even truthy, refused."""
    if not isinstance(x, (bool, np.bool_)):
        raise InvalidOptionError(f"{name} must be True or False, got {type(x).__name__} {x!r:.60}")
    return bool(x)


def real(x: Any, name: str) -> float:
    """A finite real number option (an int or a float, never a bool or a string)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(x)):
        raise InvalidOptionError(f"{name} must be a finite number, got {type(x).__name__} {x!r:.60}")
    return float(x)
