"""Exceptions shared by every engine and env.

Every error names what was wrong and what is allowed, and is raised *before* any state
changes, so a caught error leaves the game exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable


class MemTabError(Exception):
    """Base class of every error raised by memtab-env."""


class IllegalActionError(MemTabError, ValueError):
    """An action that the rules do not allow in the current state."""


class GameOverError(MemTabError, RuntimeError):
    """An action was applied to a game that has already ended."""


class InvalidOptionError(MemTabError, ValueError):
    """An unknown option, or an option value outside what is allowed."""


class DeprecatedEnvError(InvalidOptionError):
    """An older version of an env id: its streams changed, so it is retired (as
    ``gymnasium.error.DeprecatedEnv``); the message names the current id and what changed."""


class VersionNotFoundError(InvalidOptionError):
    """A version of an env id that never existed (as ``gymnasium.error.VersionNotFound``)."""


class UnknownOptionError(InvalidOptionError, TypeError):
    """A keyword option the env or engine does not take. Also a ``TypeError``, as Python
    raises for an unexpected keyword argument: libraries that probe keywords (TorchRL's
    ``GymEnv`` tries ``frameskip``, then retries without it on ``TypeError``) work."""


def unknown_option_error(unknown: list[str], where: str, allowed: list[str]) -> UnknownOptionError:
    """The error for keyword options nobody takes: it names them, in Python's own words
    too (``unexpected keyword argument 'x'``, the phrase probing libraries match), and
    what is allowed."""
    said = ", ".join(f"unexpected keyword argument {name!r}" for name in unknown)
    return UnknownOptionError(f"unknown option(s) {unknown} for {where} ({said}); allowed: {allowed}")


class NotResetError(MemTabError, RuntimeError):
    """An env was stepped or observed before its first ``reset()``."""


def check_seed(seed: object) -> int:
    """``seed`` as an int if it is a non-negative integer (a bool, float or string is
    refused, never truncated); raises :class:`InvalidOptionError`."""
    import numpy as np

    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise InvalidOptionError(f"seed must be None or a non-negative integer, got {seed!r:.60} "
                                 f"({type(seed).__name__})")
    return int(seed)


def check_finite(name: str, value: object) -> float:
    """``value`` as a float if it is a finite real number; raises :class:`InvalidOptionError`
    (NaN and infinities are refused: they would poison every return they enter)."""
    import math

    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        out = math.nan
    if isinstance(value, (bool, str)) or not math.isfinite(out):
        raise InvalidOptionError(f"{name} must be a finite number, got {value!r:.60}")
    return out


def reject_unknown_fields(data: Iterable[str], fields: Iterable[str], error: type[MemTabError],
                          what: str) -> None:
    """Raise ``error`` if the mapping ``data`` has keys outside ``fields``: the message is
    ``"{what} field(s) [sorted unknown keys]; fields: [sorted fields]"``."""
    allowed = set(fields)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise error(f"{what} field(s) {unknown}; fields: {sorted(allowed)}")


class RecordError(MemTabError, ValueError):
    """A game record that is malformed, from another version, or does not replay."""
