"""memtab-env: reinforcement-learning environments for memory card games.

Importing the package registers every game with Gymnasium (``gymnasium.make("MemTab-v0")``)
and, with PettingZoo 1.27 or later (the first with a registry), with PettingZoo
(``pettingzoo.make("aec", "memtab/MemTab-v0")``). With older PettingZoo releases (down to
the supported floor in ``pyproject.toml``) build the envs from their modules:
``memtab_env.memtab_v0.env()``, as PettingZoo's own environments are built.
"""

from __future__ import annotations

__version__ = "0.1.0"

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
