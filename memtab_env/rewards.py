"""Reward schemes shared by every env (docs/rulings.md, "Rewards").

``win`` (default, terminal only): the winners share +1 and the losers share -1, so each of
``k`` winners gets ``+1/k`` and each of the ``n - k`` losers gets ``-1/(n - k)``; when every
player wins (a draw, or a solo game) every reward is 0. Two players: +1/-1, a draw 0/0.
Rewards sum to zero.

``score`` (dense): each step, every player receives the change of its own score, so the
rewards of a game sum to the final score.

``turns`` (dense): -1 to the player whose turn ends, so a player's rewards sum to minus the
number of turns it took (extra turns included). This is the measure of solo Pelmanism
("fewest turns"), and a time pressure in any game.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memtab_env.errors import InvalidOptionError

REWARD_SCHEMES = ("win", "score", "turns")


def check_reward_scheme(reward: str) -> str:
    if reward not in REWARD_SCHEMES:
        raise InvalidOptionError(f"reward must be one of {list(REWARD_SCHEMES)}, got {reward!r}")
    return reward


def win_rewards(num_players: int, winners: Sequence[int]) -> np.ndarray:
    """Terminal rewards of the ``win`` scheme (float64 array, one per seat)."""
    out = np.zeros(num_players, dtype=np.float64)
    k = len(winners)
    if k == 0 or k == num_players:
        return out
    out[:] = -1.0 / (num_players - k)
    out[list(winners)] = 1.0 / k
    return out
