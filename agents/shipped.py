"""Trained policies shipped with the package, loadable by name.

``agents.make("ppo-memtab")`` plays the best MemTab policy trained with ``train.py``
(MaskablePPO with the position-equivariant network of :mod:`agents.set_policy`, two
players, perfect memory). Its files live in ``agents/policies/``:

- ``ppo_memtab.zip``: the Stable-Baselines3 model;
- ``ppo_memtab.yaml``: the exact config of the run that produced it (the first line is
  the command; ``docs/training.md`` gives the full reproduction recipe);
- ``ppo_memtab_eval.json``: its measured win rates (``train.py --evaluate`` schema).

The policy is played by :class:`agents.sb3_policy.SB3Agent`, so it only ever chooses
legal flips. It was trained on two-player games with the ``perfect`` memory model; its
observation length fixes the number of players (the loader refuses other games).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.sb3_policy import SB3Agent

#: folder of the shipped policy files
POLICY_DIR = Path(__file__).resolve().parent / "policies"

#: name -> (zip in POLICY_DIR, algorithm as SB3Agent spells it)
SHIPPED: dict[str, tuple[str, str]] = {
    "ppo-memtab": ("ppo_memtab.zip", "MaskablePPO"),
}


def shipped_path(name: str) -> Path:
    """The zip of the shipped policy ``name``."""
    if name not in SHIPPED:
        raise KeyError(f"no shipped policy {name!r}; shipped: {sorted(SHIPPED)}")
    return POLICY_DIR / SHIPPED[name][0]


class PPOMemTab(SB3Agent):
    """The shipped MemTab policy (``agents.make("ppo-memtab")``).

    Args:
        deterministic: play the most probable legal flip (default) or sample.
        seed: seed of the sampling generator (``deterministic=False`` only).
        **kwargs: further options of :class:`agents.sb3_policy.SB3Agent` (``device``).
    """

    def __init__(self, deterministic: bool = True, seed: int | None = None, **kwargs: Any) -> None:
        zip_name, algo = SHIPPED["ppo-memtab"]
        super().__init__(POLICY_DIR / zip_name, algo=algo, deterministic=deterministic, seed=seed, **kwargs)
        self.name = "ppo-memtab"


__all__ = ["POLICY_DIR", "SHIPPED", "PPOMemTab", "shipped_path"]
