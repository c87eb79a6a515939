"""Trained policies shipped with the package, loadable by name.

- ``agents.make("ppo-memtab")``: the best MemTab policy trained with ``train.py``
  (MaskablePPO with the position-equivariant network of :mod:`memtab_env.agents.set_policy`, two
  players, perfect memory; ``configs/selfplay.yaml``).
- ``agents.make("ppo-pelmanism", game="pelmanism")``: a Pelmanism policy (the same
  network, two players, perfect memory, the standard deck; ``configs/pelmanism.yaml``).
- ``agents.make("rppo-memtab-none")``: a MemTab policy for memory ``none`` that carries
  its own memory (RecurrentPPO with the per-position memory of
  :class:`memtab_env.agents.recurrent_policy.SlotMemoryPolicy`, two players, trained against
  ``random``; ``configs/recurrent_none.yaml``). It keeps its recurrent state from one
  ``act`` to the next and starts afresh at ``reset``: give it every observation of its own
  moves, in order, from the start of each game.
- ``agents.make("gru-memtab-none")`` (extra ``[jax]``): a stronger MemTab policy for memory
  ``none``, from the memory study (``docs/study.md``): the JAX PPO of
  :mod:`memtab_env.jax.ppo` with a GRU memory per position behind the ``kinds`` network,
  two players, trained against ``random``, then against ``greedy`` (seed 2 of the study's
  track ``memtab-2p-none-latch-greedy``). It remembers as ``rppo-memtab-none`` does: give
  it every observation of its own moves, in order.

Each has three files in ``agents/policies/``:

- ``<name>.zip``: the Stable-Baselines3 model (for ``gru-memtab-none``, a JAX PPO
  checkpoint: config JSON and equinox weights);
- ``<name>.yaml``: the exact config of the run that produced it (the first line is the
  command; ``docs/training.md`` gives the full reproduction recipe); for
  ``gru-memtab-none``, the part of ``configs/study.yaml`` that trained it;
- ``<name>_eval.json``: its measured win rates (``train.py --evaluate`` schema).

The policies are played by :class:`memtab_env.agents.sb3_policy.SB3Agent` (``gru-memtab-none`` by
:class:`memtab_env.jax.ppo.JaxPPOAgent`), so they only ever choose legal flips. Each was
trained on two-player games (``perfect`` memory, but ``none`` for ``rppo-memtab-none`` and
``gru-memtab-none``); the observation length fixes the number of players (and for
Pelmanism the deck): the loader refuses other games with a message that says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memtab_env.agents.sb3_policy import SB3Agent

#: folder of the shipped policy files
POLICY_DIR = Path(__file__).resolve().parent / "policies"

#: name -> (zip in POLICY_DIR, algorithm as SB3Agent spells it)
SHIPPED: dict[str, tuple[str, str]] = {
    "ppo-memtab": ("ppo_memtab.zip", "MaskablePPO"),
    "ppo-pelmanism": ("ppo_pelmanism.zip", "MaskablePPO"),
    "rppo-memtab-none": ("rppo_memtab_none.zip", "RecurrentPPO"),
    "gru-memtab-none": ("gru_memtab_none.zip", "jax_ppo"),
}

#: shipped policies that are one seed of a memory study cell: name -> (benchmark track the
#: cell is scored on, study track, memory, architecture, seed) of the cell's run file under
#: ``results/study/`` (the leaderboard labels the policy's row on that benchmark track
#: "best of N seeds; cell IQM X [lo, hi]")
STUDY_SEEDS: dict[str, tuple[str, str, str, str, int]] = {
    "gru-memtab-none": ("memtab-2p-none", "memtab-2p-none-latch-greedy", "none", "GRU", 2),
}


def study_seed_config(model_path: str | Path) -> dict[str, Any] | None:
    """The ``config`` that an evaluation of ``model_path`` records when the file is a
    shipped study seed (the same bytes as its zip in :data:`STUDY_SEEDS`): the one in its
    ``<name>_eval.json``, which names every stage that trained it (the study command, and
    each stage's track, run file, steps and PPO config; held equal to the run files by
    ``tests/test_shipped_provenance.py``). ``None`` for any other file, or when that
    evaluation file is missing."""
    data = Path(model_path).read_bytes()
    for name in STUDY_SEEDS:
        zip_path = shipped_path(name)
        report = zip_path.with_name(f"{zip_path.stem}_eval.json")
        if zip_path.read_bytes() == data and report.is_file():
            return json.loads(report.read_text())["config"]
    return None


def shipped_path(name: str) -> Path:
    """The zip of the shipped policy ``name``."""
    if name not in SHIPPED:
        raise KeyError(f"no shipped policy {name!r}; shipped: {sorted(SHIPPED)}")
    return POLICY_DIR / SHIPPED[name][0]


class _Shipped(SB3Agent):
    """A shipped policy, by its name in :data:`SHIPPED`."""

    shipped_name = ""

    def __init__(self, deterministic: bool = True, seed: int | None = None, **kwargs: Any) -> None:
        zip_name, algo = SHIPPED[self.shipped_name]
        super().__init__(POLICY_DIR / zip_name, algo=algo, deterministic=deterministic, seed=seed, **kwargs)
        self.name = self.shipped_name


class PPOMemTab(_Shipped):
    """The shipped MemTab policy (``agents.make("ppo-memtab")``).

    Args:
        deterministic: play the most probable legal flip (default) or sample.
        seed: seed of the sampling generator (``deterministic=False`` only).
        **kwargs: further options of :class:`memtab_env.agents.sb3_policy.SB3Agent` (``device``).
    """

    shipped_name = "ppo-memtab"


class PPOPelmanism(_Shipped):
    """The shipped Pelmanism policy (``agents.make("ppo-pelmanism", game="pelmanism")``):
    two players, perfect memory, standard deck. Arguments as :class:`PPOMemTab`."""

    shipped_name = "ppo-pelmanism"


class RPPOMemTabNone(_Shipped):
    """The shipped no-memory MemTab policy (``agents.make("rppo-memtab-none")``): plays
    under memory ``none`` and remembers by itself. Arguments as :class:`PPOMemTab`."""

    shipped_name = "rppo-memtab-none"


def gru_memtab_none(deterministic: bool = True, seed: int | None = None) -> Any:
    """The shipped JAX policy for memory ``none`` (``agents.make("gru-memtab-none")``), a
    :class:`memtab_env.jax.ppo.JaxPPOAgent`; needs the ``[jax]`` extra.

    Args:
        deterministic: play the most probable legal flip (default) or sample.
        seed: seed of the sampling key (``deterministic=False`` only).
    """
    name = "gru-memtab-none"
    try:
        from memtab_env.jax.ppo import JaxPPOAgent
    except ModuleNotFoundError as exc:
        from memtab_env.errors import InvalidOptionError
        from memtab_env.extras import missing_message

        raise InvalidOptionError(missing_message(exc, f"the shipped policy {name}", extra="jax")) from None
    agent = JaxPPOAgent(shipped_path(name), deterministic=deterministic, seed=seed)
    agent.name = name
    return agent


__all__ = ["POLICY_DIR", "SHIPPED", "PPOMemTab", "PPOPelmanism", "RPPOMemTabNone", "gru_memtab_none",
           "shipped_path"]
