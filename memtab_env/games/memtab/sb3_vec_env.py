"""``MemTabSB3VecEnv``: :class:`~memtab_env.games.memtab.vector_env.MemTabVectorEnv` as a
Stable-Baselines3 ``VecEnv`` (needs stable-baselines3; see :mod:`memtab_env.vector.sb3`)."""

from __future__ import annotations

from memtab_env.games.memtab.vector_env import MemTabVectorEnv
from memtab_env.vector.sb3 import BatchedSB3VecEnv


class MemTabSB3VecEnv(BatchedSB3VecEnv):
    """SB3 ``VecEnv`` over :class:`~memtab_env.games.memtab.vector_env.MemTabVectorEnv`
    (``action_masks()``: (B, 28) bool).

    Args:
        num_envs: B.
        seed: seeds of the first ``reset()`` (game ``i`` gets ``seed + i``); ``None`` draws
            fresh entropy. :meth:`seed` sets the seeds of the next reset.
        **kwargs: the options of :class:`MemTabVectorEnv` (``opponents``, ``learner_seat``,
            ``memory``, ``reward``, ``num_players``, ``max_episode_steps``, ...).
    """

    vector_env_class = MemTabVectorEnv
