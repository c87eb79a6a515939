"""An LSTM actor-critic that never chooses an illegal flip, for sb3-contrib's RecurrentPPO.

sb3-contrib has no masked recurrent PPO, and the env's ``action_masks()`` does not reach
``RecurrentPPO``. But in MemTab and Pelmanism the observation itself says which flips are
legal for the player on turn: exactly the positions whose status is "face down" (status
column 0 of :class:`memtab_env.observations.memtab.MemTabEncoder` and
:class:`memtab_env.observations.pelmanism.PelmanismEncoder`). :class:`ObsMaskedLstmPolicy`
reads that mask from the observation it is given and sets the logits of every other
action to -1e8 before building the action distribution (as sb3-contrib's
``MaskableCategorical`` does), in rollouts, in the PPO update (``evaluate_actions``) and in
``predict``. So the policy only samples legal flips, its log-probabilities are those of the
masked distribution, and no illegal-action penalty is ever needed. Nothing is remapped in
the env: the policy itself puts no probability on an illegal flip.

``train.py`` uses it for ``algo: recurrent_ppo`` on MemTab and Pelmanism (``obs_mask:
true``, the default); the learner is always on turn when it acts, so the face-down
positions are exactly its legal flips.
"""

from __future__ import annotations

from typing import Any

import torch as th
from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
from stable_baselines3.common.distributions import Distribution

#: logit of an action the observation shows to be illegal (as sb3-contrib's masks)
MASKED_LOGIT = -1e8


def legal_status(game: str, **options: Any) -> list[int]:
    """``[first index of the status block, positions, status width, face-down column]`` of
    ``game``'s flat observation (the options give the deck and the number of players)."""
    if game == "memtab":
        from memtab_env.games.memtab import NUM_POSITIONS, MemTab
        from memtab_env.observations.memtab import MemTabEncoder

        enc: Any = MemTabEncoder(MemTab(num_players=int(options.get("num_players", 2))))
        p = NUM_POSITIONS
    elif game == "pelmanism":
        from memtab_env.games.pelmanism import Pelmanism
        from memtab_env.observations.pelmanism import PelmanismEncoder

        g = Pelmanism(options.get("deck", "standard"), int(options.get("num_players", 2)))
        enc, p = PelmanismEncoder(g), g.num_positions
    else:
        raise ValueError(f"no observation mask for game {game!r}: MemTab and Pelmanism only "
                         "(the board game's placements are not visible as one status column)")
    lo, hi = enc.offsets["status"]
    return [int(lo), int(p), int((hi - lo) // p), 0]


class ObsMaskedLstmPolicy(RecurrentActorCriticPolicy):
    """sb3-contrib's ``MlpLstmPolicy`` restricted to the flips the observation shows face
    down (see the module docstring).

    With ``action_skip=True`` (needs the set features extractor,
    :class:`agents.set_policy.SetFeatures`) the action logits are the set network's
    per-action scores of the current observation *plus* the LSTM head's logits: the
    position-wise skill (take a pair the observation shows) does not have to pass through
    the LSTM, which only has to add what memory knows.

    Args:
        legal_status: :func:`legal_status` of the game.
        action_skip: add the features extractor's per-action scores to the logits.
        *args, **kwargs: those of ``RecurrentActorCriticPolicy``.
    """

    def __init__(self, *args: Any, legal_status: list[int] | None = None, action_skip: bool = False,
                 **kwargs: Any) -> None:
        if legal_status is None:
            raise ValueError("ObsMaskedLstmPolicy needs legal_status (see legal_status())")
        self.legal_status = list(legal_status)
        self.action_skip = bool(action_skip)
        self._legal: th.Tensor | None = None
        super().__init__(*args, **kwargs)
        if self.action_skip and not hasattr(self.features_extractor, "net"):
            raise ValueError("action_skip needs the set features extractor (policy: set)")
        if self.action_skip and not self.share_features_extractor:
            raise ValueError("action_skip needs a shared features extractor")

    def _set_legal(self, obs: th.Tensor) -> None:
        """Read the legal flips of ``obs`` (preprocessed, (B, size)) for the next
        distribution this policy builds."""
        lo, p, width, column = self.legal_status
        self._legal = obs[:, lo : lo + p * width].reshape(obs.shape[0], p, width)[:, :, column] > 0.5

    # every public path to an action distribution reads the mask of its observations first
    def forward(self, obs: th.Tensor, *args: Any, **kwargs: Any) -> Any:
        self._set_legal(obs)
        return super().forward(obs, *args, **kwargs)

    def get_distribution(self, obs: th.Tensor, *args: Any, **kwargs: Any) -> Any:
        self._set_legal(obs)
        return super().get_distribution(obs, *args, **kwargs)

    def evaluate_actions(self, obs: th.Tensor, *args: Any, **kwargs: Any) -> Any:
        self._set_legal(obs)
        return super().evaluate_actions(obs, *args, **kwargs)

    def _get_action_dist_from_latent(self, latent_pi: th.Tensor) -> Distribution:
        logits = self.action_net(latent_pi)
        if self.action_skip:  # the scores of the observations just passed through the extractor
            scores = self.features_extractor.scores
            if scores.shape != logits.shape:
                raise RuntimeError("the set scores of the current observations are missing")
            logits = logits + scores
        if self._legal is None or self._legal.shape != logits.shape:
            raise RuntimeError("the legal mask of the current observations is missing")
        logits = th.where(self._legal, logits, th.full_like(logits, MASKED_LOGIT))
        return self.action_dist.proba_distribution(action_logits=logits)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(legal_status=self.legal_status, action_skip=self.action_skip)
        return data


__all__ = ["MASKED_LOGIT", "ObsMaskedLstmPolicy", "legal_status"]
