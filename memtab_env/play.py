"""Play whole games between agents through the AEC env, for any registered game.

This is the one game loop that the command line, the evaluation protocol and the
tournaments share: agents see exactly what a PettingZoo agent sees, and every game
returns its record (``docs/record_format.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from memtab_env.registry import game_spec, load


def make_raw_env(game: str = "memtab", **options: Any) -> Any:
    """The bare AEC env of ``game`` (name or id) with ``options``."""
    return load(f"{game_spec(game).aec_module}:raw_env")(**options)


def reset_agents(agents: Sequence[Any], seed: int | None) -> None:
    """Reset every agent that has a ``reset(seed)`` method with its seat's seed, derived
    from the game's ``seed`` as the protocol does."""
    agent_seeds = np.random.SeedSequence(seed).generate_state(len(agents))
    for a, s in zip(agents, agent_seeds, strict=True):
        if hasattr(a, "reset"):
            a.reset(seed=int(s))


def play_game(env: Any, agents: Sequence[Any], seed: int | None = None,
              layout: Sequence[Any] | None = None) -> dict[str, Any]:
    """Play one game in ``env`` (a bare AEC env) with ``agents[s]`` in seat ``s``; return
    its record. Agents with a ``reset(seed)`` method are reset with seeds derived from
    ``seed``; agents with a ``watch(revealed)`` method are told each action's reveals
    (:func:`tell_reveals`). An agent's illegal action raises (the bare env never guesses)."""
    if len(agents) != len(env.possible_agents):
        raise ValueError(f"{len(env.possible_agents)} seats need {len(env.possible_agents)} agents, "
                         f"got {len(agents)}")
    reset_agents(agents, seed)
    env.reset(seed=seed, options={"layout": list(layout)} if layout is not None else None)
    watchers = watching(agents)
    for _, seat, obs in turns(env):
        env.step(int(agents[seat].act(obs)))
        tell_reveals(env, watchers)
    return env.record()


def watching(agents: Sequence[Any]) -> list[Any]:
    """The agents that watch every flip: those with a ``watch(revealed)`` method (each
    once, whichever seats it holds)."""
    return list({id(a): a for a in agents if callable(getattr(a, "watch", None))}.values())


def tell_reveals(env: Any, watchers: Sequence[Any]) -> None:
    """After a step of ``env``: tell every watcher the positions that step revealed, in
    order (``watch(revealed)``). Every player watches every flip; what a watcher keeps of
    it is its own affair (:class:`memtab_env.observations.recall.WindowRecall` keeps the
    order of reveals, which no observation shows)."""
    if watchers:
        revealed = env.last_revealed()
        for agent in watchers:
            agent.watch(revealed)


def turns(env: Any) -> Iterator[tuple[str, int, Any]]:
    """``(agent name, seat, observation)`` of every turn of ``env``'s game (the AEC loop:
    the caller steps the env with the turn's action; agents whose game is over are
    stepped with None here)."""
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        yield name, env.agent_name_mapping[name], obs


def win_shares(record: dict[str, Any]) -> list[float]:
    """Each seat's share of the win: 1/k for each of k winners, 0 for the others."""
    winners = record["result"]["winners"]
    n = record["num_players"]
    return [1.0 / len(winners) if p in winners else 0.0 for p in range(n)]
