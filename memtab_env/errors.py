"""Exceptions shared by every engine and env.

Every error names what was wrong and what is allowed, and is raised *before* any state
changes, so a caught error leaves the game exactly as it was.
"""

from __future__ import annotations


class MemTabError(Exception):
    """Base class of every error raised by memtab-env."""


class IllegalActionError(MemTabError, ValueError):
    """An action that the rules do not allow in the current state."""


class GameOverError(MemTabError, RuntimeError):
    """An action was applied to a game that has already ended."""


class InvalidOptionError(MemTabError, ValueError):
    """An unknown option, or an option value outside what is allowed."""


class RecordError(MemTabError, ValueError):
    """A game record that is malformed, from another version, or does not replay."""
