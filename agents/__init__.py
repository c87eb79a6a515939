"""Agents: every agent maps the acting player's observation (with its mask) to an action.

The protocol
------------
Every agent, built in or loaded, has two methods::

    agent.reset(seed=None)          # at the start of every game
    action = agent.act(observation) # the AEC observation dict of the acting player

``observation`` is what the AEC env gives the player on turn: ``{"observation": int8
vector, "action_mask": int8 vector (1 = legal), ...}``. An agent never reads hidden state;
an agent that remembers does so from the observations it is given (it is only given
observations when it acts), under whatever memory model the env uses.

An agent may also have ``watch(revealed)``: the game loops of the package
(:func:`memtab_env.play.play_game`, the evaluation, its audit and the Gymnasium view's
opponents) then tell it, after every action of every player, the positions that action
revealed, in order (every player watches every flip; the order of reveals is public but
no observation shows it). A JAX policy with ``window=k`` needs it
(:class:`memtab_env.observations.recall.WindowRecall`) and refuses a loop that does not
call it.

Building agents
---------------
``make(name, game="memtab", **kwargs)`` builds an agent from the table below (imported
lazily); ``make("path/to/model.zip")`` loads a trained policy: a Stable-Baselines3 model
(:class:`memtab_env.agents.sb3_policy.SB3Agent`: the policy is rebuilt from the zip's weights
and plain settings, nothing is unpickled unless ``trust_pickle=True`` is passed) or a JAX
PPO checkpoint (:class:`memtab_env.jax.ppo.JaxPPOAgent`, extra ``[jax]``: config JSON and
equinox weights, nothing executed).
``available(game)`` lists the names.

=============  ===========  ===========================================================
game           name         agent
=============  ===========  ===========================================================
memtab         random       uniform over legal flips
memtab         greedy       perfect-memory pair finder (exact rule: :mod:`memtab_env.agents.memtab_agents`)
memtab         expert       hand-written player (:mod:`memtab_env.agents.expert`)
memtab         search       determinized Monte Carlo search (:mod:`memtab_env.agents.search`)
memtab         sb3          trained SB3 policy; needs ``path=`` (:mod:`memtab_env.agents.sb3_policy`)
memtab         human        plays from the terminal (:mod:`memtab_env.agents.human`)
memtab         ppo-memtab   the shipped trained policy (:mod:`memtab_env.agents.shipped`)
memtab         rppo-memtab  the shipped policy for memory ``none``: ``rppo-memtab-none``,
                            it remembers by itself (:mod:`memtab_env.agents.shipped`)
memtab         gru-memtab   a stronger one, from the memory study: ``gru-memtab-none``
                            (extra ``[jax]``; :mod:`memtab_env.agents.shipped`)
pelmanism      random, greedy, nomemory        (:mod:`memtab_env.agents.pelmanism_agents`),
pelmanism      optimal      the exact two-player optimum, decks of pairs
                            (:mod:`memtab_env.agents.pelmanism_agents`),
               ppo-pelmanism                   (:mod:`memtab_env.agents.shipped`)
memory_board   random, greedy                  (:mod:`memtab_env.agents.memory_board_agents`)
=============  ===========  ===========================================================
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from memtab_env.errors import InvalidOptionError


@runtime_checkable
class Agent(Protocol):
    """What every agent provides."""

    def reset(self, seed: int | None = None) -> None:
        """Start a new game (``seed`` seeds the agent's own randomness, if any)."""

    def act(self, observation: Any) -> int:
        """The action of the acting player, from its observation dict."""


#: (game, name) -> "module:Class" (or a function that builds the agent), imported when first built
REGISTRY: dict[tuple[str, str], str] = {
    ("memtab", "random"): "memtab_env.agents.memtab_agents:RandomAgent",
    ("memtab", "greedy"): "memtab_env.agents.memtab_agents:GreedyAgent",
    ("memtab", "expert"): "memtab_env.agents.expert:ExpertAgent",
    ("memtab", "search"): "memtab_env.agents.search:SearchAgent",
    ("memtab", "sb3"): "memtab_env.agents.sb3_policy:SB3Agent",
    ("memtab", "human"): "memtab_env.agents.human:HumanAgent",
    ("memtab", "ppo-memtab"): "memtab_env.agents.shipped:PPOMemTab",
    ("memtab", "rppo-memtab-none"): "memtab_env.agents.shipped:RPPOMemTabNone",
    ("memtab", "gru-memtab-none"): "memtab_env.agents.shipped:gru_memtab_none",
    ("pelmanism", "random"): "memtab_env.agents.pelmanism_agents:PelmanismRandomAgent",
    ("pelmanism", "greedy"): "memtab_env.agents.pelmanism_agents:PelmanismGreedyAgent",
    ("pelmanism", "nomemory"): "memtab_env.agents.pelmanism_agents:PelmanismNoMemoryAgent",
    ("pelmanism", "optimal"): "memtab_env.agents.pelmanism_agents:PelmanismOptimalAgent",
    ("pelmanism", "ppo-pelmanism"): "memtab_env.agents.shipped:PPOPelmanism",
    ("memory_board", "random"): "memtab_env.agents.memory_board_agents:MemoryBoardRandomAgent",
    ("memory_board", "greedy"): "memtab_env.agents.memory_board_agents:MemoryBoardGreedyAgent",
}


def available(game: str = "memtab") -> list[str]:
    """Names that :func:`make` accepts for ``game`` (a path to a ``.zip`` works too)."""
    return sorted(name for g, name in REGISTRY if g == game)


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def make(name: str, game: str = "memtab", **kwargs: Any) -> Agent:
    """Build the agent ``name`` for ``game`` with ``kwargs``.

    ``name`` may also be a path ending in ``.zip``: a saved Stable-Baselines3 model,
    loaded with :class:`memtab_env.agents.sb3_policy.SB3Agent` (``kwargs`` go to it, e.g. ``algo=``).
    Raises :class:`memtab_env.errors.InvalidOptionError` for an unknown game or name,
    listing what exists.
    """
    games = sorted({g for g, _ in REGISTRY})
    if isinstance(name, (str, Path)) and str(name).endswith(".zip"):
        from memtab_env.agents.model_data import ModelFileError, is_jax_checkpoint

        from memtab_env import untrusted

        untrusted.check_regular(name, ModelFileError)  # a pipe or a device never hangs the load
        if is_jax_checkpoint(name):
            try:
                agent_class = _load("memtab_env.jax.ppo:JaxPPOAgent")
            except ModuleNotFoundError as exc:
                from memtab_env.extras import missing_message

                raise InvalidOptionError(missing_message(exc, f"the JAX checkpoint {name}",
                                                         extra="jax")) from None
            return agent_class(str(name), **kwargs)
        return _load("memtab_env.agents.sb3_policy:SB3Agent")(str(name), **kwargs)
    if game not in games:
        raise InvalidOptionError(f"unknown game {game!r} for agents; known games: {games}")
    key = (game, name)
    if key not in REGISTRY:
        raise InvalidOptionError(
            f"unknown {game} agent {name!r}; available: {available(game)} "
            "(or a path to a Stable-Baselines3 .zip)"
        )
    return _load(REGISTRY[key])(**kwargs)


__all__ = ["REGISTRY", "Agent", "available", "make"]
