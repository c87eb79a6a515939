"""``expert``: the strongest hand-written MemTab player of the project.

It keeps its own memory of everything its observations have shown
(:class:`memtab_env.agents.belief.MemTabBelief`), so it plays the same way under every memory model:
what the env's memory model drops, the agent still remembers; what the env never showed
it, it does not know. From that belief it knows the kind of some face-down cards, the
tableaux of every seat, and the expected make-up of the unknown cards (kinds gone for good
are deduced: cards leave the table only in pairs). The decision is the numba kernel
:func:`memtab_env.agents._memtab_policy.policy_choose`, whose docstring gives the details:

- MemTab is a race to the instant win (two pairs in one turn), so a table is valued by
  the chance of each player to win it instantly on its next turn: known pairs, known
  cards matching each tableau ("matches"), and the chances of unknown flips;
- known pairs are taken first (an extra turn each); a known pair with a known match is
  an instant win, played at once;
- the third card is chosen for the table it leaves: an instant win; pairing off its own
  tableau for an extra turn (a black card wins its points back); breaking a known pair
  that would give the next player an extra turn, or taking the card the next player
  could pair off (denying an instant win); setting up its own matches; points last;
- the first and second flips are an expectimax over what an unknown card turns out to
  be, against flipping a known card, which reveals nothing to the next player.

It is deterministic: equal observations give equal flips.

Its whole memory is the belief's ``seen`` (every other field of the belief is read afresh
from each observation), so :func:`flips_from_seen` can play it for the single-agent JAX
view, which keeps ``seen`` in its state: the same code, on the host, through
``jax.pure_callback``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from memtab_env.agents._memtab_policy import DEFAULT_WEIGHTS, WEIGHT_NAMES, policy_choose
from memtab_env.agents.belief import MemTabBelief, action_mask


class ExpertAgent:
    """Hand-written MemTab expert.

    Args:
        weights: overrides of the valuation weights, by name (``base_rate``, ``live``,
            ``points``; see :mod:`memtab_env.agents._memtab_policy`). The defaults were tuned on
            seeded games against ``greedy`` (two and three players).
        fast: skip the expectimax of a turn's first flip (the search rollouts' mode);
            measured 0.48 against the full expert over 1000 games.
    """

    def __init__(self, weights: dict[str, float] | None = None, fast: bool = False) -> None:
        self.fast = bool(fast)
        self.weights = DEFAULT_WEIGHTS.copy()
        for name, value in (weights or {}).items():
            if name not in WEIGHT_NAMES:
                raise ValueError(f"unknown expert weight {name!r}; known: {list(WEIGHT_NAMES)}")
            self.weights[WEIGHT_NAMES.index(name)] = float(value)
        self.belief = MemTabBelief()

    def reset(self, seed: int | None = None) -> None:
        self.belief.reset()

    def act(self, observation: Any) -> int:
        b = self.belief
        b.update(observation)
        legal = action_mask(observation)
        if not legal.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        pos = int(
            policy_choose(
                b.kinds_view(),
                b.status,
                b.owner,
                0,
                b.num_players,
                max(b.flip, 0),
                b.pool(),
                self.weights,
                self.fast,
            )
        )
        if not 0 <= pos < legal.size or not legal[pos]:  # defensive: never flip illegally
            pos = int(np.flatnonzero(legal)[0])
        return pos


def flips_from_seen(observations: np.ndarray, seen: np.ndarray, active: np.ndarray) -> np.ndarray:
    """The default expert's flips for a batch of positions, each given by the flat
    observation of the player on turn and the kinds that player had seen before it
    (``seen``: int8[..., 28], -1 unknown; the belief's whole memory); int32[...], 0 where
    ``active`` is False. Each flip is :meth:`ExpertAgent.act` on a belief restored from
    ``seen``: the JAX view's ``expert`` opponent plays through this function."""
    observations = np.asarray(observations)
    seen = np.asarray(seen, dtype=np.int8)
    active = np.asarray(active, dtype=bool)
    batch = active.shape
    flat_obs = observations.reshape(-1, observations.shape[-1])
    flat_seen = seen.reshape(-1, seen.shape[-1])
    flips = np.zeros(flat_obs.shape[0], dtype=np.int32)
    agent = ExpertAgent()
    for i in np.flatnonzero(active.reshape(-1)):
        agent.reset()
        agent.belief.seen[:] = flat_seen[i]
        flips[i] = agent.act(flat_obs[i])
    return flips.reshape(batch)
