"""``MemTabVectorEnv``: the single-agent MemTab view for B games at once (Gymnasium).

``gymnasium.make_vec("MemTab-v0", num_envs=B, vectorization_mode="vector_entry_point")``
(once the registration names this class as its ``vector_entry_point``), or directly
``MemTabVectorEnv(num_envs=B, opponents="greedy")``.

It is :class:`memtab_env.gym_env.SingleAgentEnv` batched: the learner holds one seat of
every game, its opponents are stepped inside the compiled batch, and each ``step`` makes
one learner flip in every game followed by the opponents' flips until the learner is on
turn again or the game is over.

- Observation: the learner's flat observation (``MemTabEncoder``) as float32, shape
  (B, 507 + 16 n); action: one flip position per game (``MultiDiscrete([28] * B)``).
- ``action_masks()`` (B, 28) int8 (sb3-contrib's name); also ``info["action_mask"]``.
- Rewards (:mod:`memtab_env.rewards`): ``"win"`` (terminal share of +1/-1), ``"score"``
  (the learner's score change over the step) or ``"turns"`` (-1 when its flip ends its
  turn).
- Illegal learner action: ``illegal_penalty`` as reward, nothing changes (the opponents
  do not move either), ``info["illegal_action"]`` is True; ``illegal_action="raise"``
  raises :class:`~memtab_env.errors.IllegalActionError` before any game changes.
- Episodes end when the game is over (``terminated``) or after ``max_episode_steps``
  learner steps (``truncated``, as ``TimeLimit``). Auto-reset in the same step
  (``AutoresetMode.SAME_STEP``): the returned observation is the next episode's first one;
  ``info["final_obs"]`` and ``info["final_info"]`` hold the finished ones (with the
  ``_final_obs`` / ``_final_info`` masks). Declared in
  ``metadata["autoreset_mode"]``. So the masks a step returns (``action_masks()``,
  ``info["action_mask"]``) are always those of a game in progress: never all zeros, and a
  masked categorical can be evaluated on every row (``tests/test_vector_conventions.py``).
- Opponents: ``"random"`` and ``"greedy"``, each playing exactly as ``agents.make(name)``
  plays in the scalar view: ``random`` from the stream its ``reset(seed)`` gets there,
  ``greedy`` with its own memory of what its observations under the ``memory`` model
  showed (:func:`memtab_env.games.memtab.batched_kernels.greedy_action`). Any other opponent is refused
  with an error naming it and the allowed ones: the batch never approximates one.
- Seeds: ``reset(seed=s)`` gives slot ``i`` the seed ``s + i``, and slot ``i`` then plays
  the episodes of ``gymnasium.make(id, ...)`` after ``reset(seed=s + i)`` followed by
  plain ``reset()`` calls, flip for flip, for every memory model, opponent and learner
  seat: the deals and forgetting follow :mod:`memtab_env.games.memtab.batched`, the random
  learner seat and the opponents' seeds come from the view's own generator
  (``default_rng(s + i)``, kept across episodes, as ``SingleAgentEnv.np_random``).
- A game that the opponents finish before the learner's first flip is set aside and the
  slot's next game is dealt, the opponents reset for it, as the scalar view does; after
  ``gym_env.MAX_REDEALS`` redeals in a row the step or reset raises the scalar view's
  :class:`~memtab_env.errors.InvalidOptionError`.
"""

from __future__ import annotations

import numpy as np

from memtab_env.games.memtab.rules import NUM_POSITIONS
from memtab_env.vector.vector_env_base import BatchedVectorView


class MemTabVectorEnv(BatchedVectorView):
    """B single-agent MemTab games stepped together; see the module docstring. Arguments
    as :class:`~memtab_env.vector.vector_env_base.BatchedVectorView` (the registration's
    ``max_episode_steps`` is 250), with the game options ``num_players`` (1..6) and
    ``first_player``.
    """

    game_name = "memtab"
    game_options = ("first_player", "num_players")

    @property
    def num_positions(self) -> int:
        return NUM_POSITIONS

    def _final_extra(self) -> dict[str, np.ndarray]:
        return {"instant_win": (self._final_bits & 1).astype(bool)}
