"""memtab-env: reinforcement-learning environments for memory card games.

Importing the package registers every game with Gymnasium (``gymnasium.make("MemTab-v0")``)
and, with PettingZoo 1.27 or later (the first with a registry), with PettingZoo
(``pettingzoo.make("aec", "memtab/MemTab-v0")``). With older PettingZoo releases (down to
the supported floor in ``pyproject.toml``) build the envs from their modules:
``memtab_env.memtab_v0.env()``, as PettingZoo's own environments are built.
"""

from __future__ import annotations

import os
import sys

__version__ = "0.1.0"


def _numba_cache_dir() -> None:
    """numba's ``cache=True`` files go to a user cache directory, never beside the
    installed modules (``site-packages``, where ``pip uninstall`` would leave them):
    ``$NUMBA_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/memtab-env/numba`` (default
    ``~/.cache/memtab-env/numba``). Set before the engines compile; numba reads the
    variable when it is imported, and its config when it caches."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "memtab-env", "numba")
    os.environ["NUMBA_CACHE_DIR"] = path
    config = sys.modules.get("numba.core.config")
    if config is not None and not config.CACHE_DIR:  # numba was imported first
        config.CACHE_DIR = path


def _checkout_layout() -> None:
    """Imported from a checkout (the working directory comes first on ``sys.path``, also
    with a regular install), the top-level ``agents/`` and ``configs/`` folders are
    ``memtab_env.agents`` and ``memtab_env.configs``, as setup.py maps them for installs."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if (not os.path.isdir(os.path.join(here, "agents"))
            and os.path.isfile(os.path.join(root, "setup.py"))
            and os.path.isfile(os.path.join(root, "agents", "__init__.py"))):
        __path__.append(root)  # type: ignore[name-defined]  # noqa: F821


_numba_cache_dir()
_checkout_layout()

from memtab_env.errors import (  # noqa: E402
    GameOverError,
    IllegalActionError,
    InvalidOptionError,
    MemTabError,
    RecordError,
)
from memtab_env.registry import GAMES, game_spec  # noqa: E402


def _register() -> None:
    import gymnasium
    import pettingzoo

    for spec in GAMES.values():
        if spec.env_id not in gymnasium.registry:
            gymnasium.register(
                id=spec.env_id,
                entry_point="memtab_env.gym_env:SingleAgentEnv",
                kwargs={"game": spec.name},
                max_episode_steps=spec.max_episode_steps,
                vector_entry_point=spec.vector_entry_point,
            )
        registry = getattr(pettingzoo, "aec_registry", None)  # PettingZoo >= 1.27 only
        if registry is not None and spec.pettingzoo_id not in registry:
            pettingzoo.register("aec", spec.pettingzoo_id, f"{spec.aec_module}:env")


_register()


def _catalogue() -> str:
    """The ids, memory models and agents, from the tables that define them (so
    ``help(memtab_env)`` cannot drift from the code)."""
    from memtab_env import agents
    from memtab_env.memory import MEMORY_KINDS

    params = {"decay": "decay:p", "window": "window:k"}
    lines = ["", "Registered ids", "--------------",
             f"{'game':<14}{'Gymnasium':<18}{'PettingZoo AEC':<26}module"]
    for spec in GAMES.values():
        lines.append(f"{spec.name:<14}{spec.env_id:<18}{spec.pettingzoo_id:<26}{spec.aec_module}")
    lines += ["", "Memory models (``memory=``, :mod:`memtab_env.memory`): "
              + ", ".join(params.get(k, k) for k in MEMORY_KINDS), "",
              "Agents (``memtab_env.agents.make(name, game=...)``; a path to a saved ``.zip`` too)",
              "-" * 80]
    for game in sorted({g for g, _ in agents.REGISTRY}):
        lines.append(f"{game:<14}" + ", ".join(agents.available(game)))
    return "\n".join(lines) + "\n"


__doc__ = (__doc__ or "") + _catalogue()

__all__ = [
    "GAMES",
    "GameOverError",
    "IllegalActionError",
    "InvalidOptionError",
    "MemTabError",
    "RecordError",
    "__version__",
    "game_spec",
]
