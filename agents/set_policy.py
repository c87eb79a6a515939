"""A position-equivariant actor-critic for MemTab (``policy: set`` in ``train.py``).

MemTab's 28 positions are interchangeable: cards never move and nothing depends on where
a card lies, only on what is known about it. A plain MLP on the flat observation has to
learn the same rule ("flip the twin of the card I just saw") 28 times over, once per
position. This network reads the flat observation of
:class:`memtab_env.observations.memtab.MemTabEncoder` as a *set* of 28 position tokens
(the position's status one-hot and card one-hot, with the global fields broadcast to
every token) and applies the same layers to every token, mixing tokens only through a
sum over the set (Deep Sets, Zaheer et al. 2017):

    h_p   = relu(W_in [token_p, globals])
    h_p  <- h_p + relu(W_self h_p + W_pool sum_q h_q)          (``set_layers`` times)
    logit_p = w_out . h_p                                        (one logit per position)
    value   = MLP([mean_p h_p, globals])

So the action logits are permutation-equivariant and the value is permutation-invariant
by construction. The sum (not the mean) keeps counts: "two known face-down cards of kind
k" is a threshold on a pooled feature, which is what pair finding needs.

It plugs into Stable-Baselines3 as the ``mlp_extractor`` of an actor-critic policy:
:class:`MaskableMemTabSetPolicy` for sb3-contrib's ``MaskablePPO`` and
:class:`MemTabSetPolicy` for ``PPO``. Models saved with these policies reference this
module by name, so loading them needs ``agents`` importable (it is part of the package).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from memtab_env.games.memtab import NUM_KINDS, NUM_POSITIONS, MemTab
from memtab_env.observations.memtab import MemTabEncoder

#: scale applied to the score fields (-35..35) so that every input is of order one
SCORE_SCALE = 0.1


def num_players_from_size(size: int) -> int:
    """Number of players of a MemTab flat observation of length ``size`` (507 + 16 n)."""
    base = MemTabEncoder(MemTab(num_players=1)).size - 16
    n, rest = divmod(size - base, 16)
    if rest or n < 1:
        raise ValueError(f"{size} is not the length of a MemTab observation (507 + 16 n)")
    return n


class MemTabSetNet(nn.Module):
    """Shared trunk of the set actor-critic; ``forward`` gives ``(logits, value latent)``.

    Args:
        obs_size: length of the flat MemTab observation (gives the number of players).
        dim: width of every token embedding.
        layers: number of residual set layers after the input embedding.
        value_hidden: width of the value head's hidden layer.
    """

    def __init__(self, obs_size: int, dim: int = 64, layers: int = 3, value_hidden: int = 64) -> None:
        super().__init__()
        n = num_players_from_size(obs_size)
        enc = MemTabEncoder(MemTab(num_players=n))
        self.num_players = n
        self.slices = {name: enc.offsets[name] for name in ("status", "card", "tableaux")}
        start = enc.offsets["tableaux"][0]
        self.global_start = start
        scale = np.ones(enc.size - start, dtype=np.float32)
        lo, hi = enc.offsets["scores"]
        scale[lo - start : hi - start] = SCORE_SCALE
        self.register_buffer("global_scale", th.as_tensor(scale))
        self.register_buffer("off_diagonal", 1.0 - th.eye(NUM_POSITIONS))
        global_size = enc.size - start
        self.embed = nn.Linear(4 + NUM_KINDS + n + global_size, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.self_layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.kind_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.pool_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.logit = nn.Linear(dim, 1)
        self.value = nn.Sequential(nn.Linear(dim + global_size, value_hidden), nn.ReLU())
        #: read by Stable-Baselines3 to size the heads
        self.latent_dim_pi = NUM_POSITIONS
        self.latent_dim_vf = value_hidden

    def _field(self, obs: th.Tensor, name: str, shape: tuple[int, int]) -> th.Tensor:
        lo, hi = self.slices[name]
        return obs[:, lo:hi].reshape(obs.shape[0], *shape)

    def trunk(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Token embeddings (B, 28, dim) and scaled global fields (B, G)."""
        b = obs.shape[0]
        status = self._field(obs, "status", (NUM_POSITIONS, 4))
        card = self._field(obs, "card", (NUM_POSITIONS, NUM_KINDS))
        tableaux = self._field(obs, "tableaux", (self.num_players, NUM_KINDS))
        glob = obs[:, self.global_start :] * self.global_scale
        held = card @ tableaux.transpose(1, 2)  # (B, 28, n): which seat holds this kind
        same_kind = (card @ card.transpose(1, 2)) * self.off_diagonal  # (B, 28, 28)
        tokens = th.cat([status, card, held, glob[:, None, :].expand(b, NUM_POSITIONS, glob.shape[1])], 2)
        h = th.relu(self.embed(tokens))
        for norm, lin_self, lin_kind, lin_pool in zip(
            self.norms, self.self_layers, self.kind_layers, self.pool_layers, strict=True
        ):
            x = norm(h)
            h = h + th.relu(lin_self(x) + lin_kind(same_kind @ x) + lin_pool(x.mean(dim=1, keepdim=True)))
        return h, glob

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        h, glob = self.trunk(features)
        logits = self.logit(h).squeeze(-1)
        value = self.value(th.cat([h.mean(dim=1), glob], dim=1))
        return logits, value

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        h, _ = self.trunk(features)
        return self.logit(h).squeeze(-1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        h, glob = self.trunk(features)
        return self.value(th.cat([h.mean(dim=1), glob], dim=1))


class _SetPolicyMixin:
    """Replaces the MLP extractor by :class:`MemTabSetNet` and the action head by the
    identity (the trunk already gives one logit per position)."""

    def __init__(self, *args: Any, set_dim: int = 64, set_layers: int = 3, value_hidden: int = 64,
                 **kwargs: Any) -> None:
        self.set_dim = set_dim
        self.set_layers = set_layers
        self.value_hidden = value_hidden
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = MemTabSetNet(self.features_dim, self.set_dim, self.set_layers,
                                          self.value_hidden)

    def _build(self, lr_schedule: Schedule) -> None:
        super()._build(lr_schedule)  # type: ignore[misc]
        self.action_net = nn.Identity()
        logit = self.mlp_extractor.logit
        nn.init.orthogonal_(logit.weight, gain=0.01)
        nn.init.zeros_(logit.bias)
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()  # type: ignore[misc]
        data.update(set_dim=self.set_dim, set_layers=self.set_layers, value_hidden=self.value_hidden)
        return data


class MemTabSetPolicy(_SetPolicyMixin, ActorCriticPolicy):
    """Set actor-critic for ``PPO`` (flat MemTab observations, ``Discrete(28)`` actions)."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space,
                 lr_schedule: Schedule, **kwargs: Any) -> None:
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)


class MaskableMemTabSetPolicy(_SetPolicyMixin, MaskableActorCriticPolicy):
    """Set actor-critic for sb3-contrib's ``MaskablePPO``."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space,
                 lr_schedule: Schedule, **kwargs: Any) -> None:
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)


__all__ = ["MaskableMemTabSetPolicy", "MemTabSetNet", "MemTabSetPolicy", "num_players_from_size"]
