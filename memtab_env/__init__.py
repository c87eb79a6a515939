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
