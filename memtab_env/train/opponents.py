"""Who the learner plays in training: built-in agents, saved policies and the self-play
pool of frozen snapshots, mixed per game (:class:`OpponentMix`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from memtab_env.train.config import SELF

#: the config's algorithm names -> the names of the SB3 loader (memtab_env.agents.sb3_policy)
LOADER_ALGOS = {"maskable_ppo": "MaskablePPO", "ppo": "PPO", "recurrent_ppo": "RecurrentPPO", "dqn": "DQN",
                "jax_ppo": "jax_ppo"}


def policy_agent(path: str | Path, algo: str, deterministic: bool = True) -> Any:
    """An agent (``reset``/``act`` on AEC observations) that plays the saved model
    ``path`` with the project's SB3 loader, :class:`memtab_env.agents.sb3_policy.SB3Agent`. The
    loader restricts the policy to the legal flips (the bare AEC env raises on an illegal
    one) and counts how often its unrestricted choice would have been illegal."""
    from memtab_env.agents.sb3_policy import SB3Agent

    return SB3Agent(path, algo=LOADER_ALGOS[algo], deterministic=deterministic)


#: snapshot agents loaded in this process, shared by every opponent seat (stateless
#: policies only: a recurrent agent carries its LSTM state and is loaded per seat)
_SNAPSHOTS: dict[str, Any] = {}


class OpponentMix:
    """One opponent seat: at every reset it draws an agent from a weighted mix of
    built-in agents and (name ``self``) the frozen snapshots of the self-play pool."""

    def __init__(self, weights: dict[str, float], game: str, algo: str, pool_size: int,
                 deterministic: bool) -> None:
        from memtab_env import agents

        self.names = list(weights)
        total = float(sum(weights.values()))
        self.probs = np.array([weights[n] / total for n in self.names])
        self.builtin = {n: agents.make(n, game=game) for n in self.names if n != SELF}
        self.algo, self.pool_size, self.deterministic = algo, pool_size, deterministic
        self.pool: list[str] = []
        self._loaded: dict[str, Any] = {}
        self.rng = np.random.default_rng()
        self.current: Any = None
        self.name = "mix(" + ", ".join(f"{n}:{w:g}" for n, w in weights.items()) + ")"

    def set_pool(self, paths: Sequence[str]) -> None:
        """Use the last ``pool_size`` of ``paths`` (snapshot zips) as the self-play pool."""
        self.pool = list(paths)[-self.pool_size :]
        self._loaded = {p: a for p, a in self._loaded.items() if p in self.pool}
        for p in [p for p in _SNAPSHOTS if p not in self.pool]:
            del _SNAPSHOTS[p]

    def _snapshot(self) -> Any:
        if not self.pool:
            raise RuntimeError("the self-play pool is empty (no snapshot was set)")
        path = self.pool[int(self.rng.integers(len(self.pool)))]
        cache = self._loaded if self.algo == "recurrent_ppo" else _SNAPSHOTS
        if path not in cache:
            cache[path] = policy_agent(path, self.algo, self.deterministic)
        return cache[path]

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        name = self.names[int(self.rng.choice(len(self.names), p=self.probs))]
        self.current = self._snapshot() if name == SELF else self.builtin[name]
        self.current.reset(seed=int(self.rng.integers(2**31)))

    def act(self, observation: Any) -> int:
        return int(self.current.act(observation))


def _set_pool_everywhere(env: Any, paths: Sequence[str]) -> None:
    for opponent in env.unwrapped.opponents:
        if isinstance(opponent, OpponentMix):
            opponent.set_pool(paths)


class SelfPlayPool(gymnasium.Wrapper):
    """Wrapper that lets a vector env update the opponents' self-play pool
    (``vec_env.env_method("set_pool", paths)``, also across processes)."""

    def set_pool(self, paths: Sequence[str]) -> None:
        _set_pool_everywhere(self.env, paths)
