"""``TriplesSB3VecEnv``: :class:`~tests.triples_game.vector_env.TriplesVectorEnv` as a
Stable-Baselines3 ``VecEnv`` with ``action_masks()``."""

from __future__ import annotations

from memtab_env.vector.sb3 import BatchedSB3VecEnv
from tests.triples_game.vector_env import TriplesVectorEnv


class TriplesSB3VecEnv(BatchedSB3VecEnv):
    vector_env_class = TriplesVectorEnv
