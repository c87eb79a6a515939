"""``PelmanismVectorEnv``: the single-agent Pelmanism view for B games at once (Gymnasium).

``gymnasium.make_vec("Pelmanism-v0", num_envs=B, vectorization_mode="vector_entry_point",
deck="pairs:8")`` (the registration names this class as its ``vector_entry_point``), or
directly ``PelmanismVectorEnv(num_envs=B, opponents="greedy")``. It is
:class:`~memtab_env.games.memtab.vector_env.MemTabVectorEnv` for Pelmanism: the same options,
spaces, info keys and auto-reset, over :class:`~memtab_env.games.pelmanism.batched.BatchedPelmanism`.

It is :class:`memtab_env.gym_env.SingleAgentEnv` batched: the learner holds one seat of
every game, its opponents are stepped inside the compiled batch, and each ``step`` makes
one learner flip in every game followed by the opponents' flips until the learner is on
turn again or the game has ended.

- Observation: the learner's flat observation (``PelmanismEncoder``, ``P (3 + K) + 2 n +
  2`` values) as float32; action: one flip position per game (``MultiDiscrete([P] * B)``).
- ``action_masks()`` (B, P) int8 (sb3-contrib's name); also ``info["action_mask"]``.
- Rewards (:mod:`memtab_env.rewards`): ``"win"`` (terminal share of +1/-1; 0 in a solo
  game), ``"score"`` (+1 when the learner's flip takes a pair) or ``"turns"`` (-1 when
  its flip ends its turn: the solo measure).
- Illegal learner action: ``illegal_penalty`` as reward, nothing changes (the opponents
  do not move either), ``info["illegal_action"]`` is True; ``illegal_action="raise"``
  raises :class:`~memtab_env.errors.IllegalActionError` before any game changes. Nothing
  is remapped.
- Episodes end when the game is over (``terminated``), or are truncated after
  ``max_episode_steps`` learner steps (as ``TimeLimit``; 3000 by default, the
  registration's) or when the game's flips reach the engine's practical cap
  (``game.info.max_game_length``, where the AEC env truncates). Auto-reset in the same
  step (``AutoresetMode.SAME_STEP``): the returned observation is the next episode's
  first one; ``info["final_obs"]`` and ``info["final_info"]`` (``scores``, ``winners``,
  ``learner_seat``, ``game_seed``, ``turns``, ``flips``) hold the finished ones. Declared in
  ``metadata["autoreset_mode"]``. So the masks a step returns (``action_masks()``,
  ``info["action_mask"]``) are always those of a game in progress: never all zeros, and a
  masked categorical can be evaluated on every row (``tests/test_vector_conventions.py``).
- Opponents: ``"random"`` (uniform legal flip) and ``"greedy"``
  (``agents.pelmanism_agents.PelmanismGreedyAgent`` with its own memory, the default:
  each greedy seat observes the game under the ``memory`` model at each of its flips,
  records what it is shown, and applies the exact greedy rule), vectorised.
- Seeds, opponents and redeals as in :mod:`memtab_env.games.memtab.vector_env`: slot ``i``
  after ``reset(seed=s)`` plays the episodes of the scalar view after
  ``reset(seed=s + i)``, flip for flip, ``random`` opponents included. Configurations
  in which every deal ends before a fixed learner seat plays (a deck of one kind, or a
  ``max_turns`` limit reached before the learner's seat plays) are refused up front.
"""

from __future__ import annotations

import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.games.pelmanism.rules import PelmanismState
from memtab_env.vector.vector_env_base import BatchedVectorView

GAME_OPTIONS = ("deck", "first_player", "max_turns", "num_players")


class PelmanismVectorEnv(BatchedVectorView):
    """B single-agent Pelmanism games stepped together; see the module docstring. Arguments
    as :class:`~memtab_env.vector.vector_env_base.BatchedVectorView` (with
    ``max_episode_steps=None`` the game's flip cap still truncates), with the game options
    ``deck``, ``num_players`` (1..6), ``first_player`` and ``max_turns``.
    """

    game_name = "pelmanism"
    game_options = GAME_OPTIONS

    def _check_learner_gets_a_turn(self) -> None:
        """Refuse a fixed learner seat that no deal ever lets play (the kernels would deal
        again and again): a deck of one kind (every flip matches, so the first seat takes
        every card) or a ``max_turns`` limit reached before the learner's first turn."""
        eng = self.engine
        if self._seat_mode < 0:
            return
        before = (self._seat_mode - eng.first_player) % eng.num_players  # turns before it
        if before and eng.num_kinds == 1:
            raise InvalidOptionError(
                f"deck {eng.game.deck.spec!r} has one kind: seat {eng.first_player} takes every "
                f"card before learner_seat {self._seat_mode} plays; use learner_seat="
                f"{eng.first_player} or 'random'"
            )
        if eng.max_turns is not None and eng.max_turns <= before:
            raise InvalidOptionError(
                f"max_turns={eng.max_turns} ends every game before learner_seat "
                f"{self._seat_mode} plays ({before} turn(s) come first); allowed: max_turns > "
                f"{before}, or learner_seat 'random'"
            )

    def _final_extra(self) -> dict[str, np.ndarray]:
        return {"turns": self._final_turns.copy()}

    def get_state(self, i: int) -> PelmanismState:
        """Game ``i`` as a scalar :class:`~memtab_env.games.pelmanism.rules.PelmanismState`."""
        return self.engine.get_state(i)
