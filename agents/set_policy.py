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

The same network plays Pelmanism (``policy: set`` on ``Pelmanism-v0``): its observation
(:class:`memtab_env.observations.pelmanism.PelmanismEncoder`) is also a status one-hot and a
kind one-hot per position followed by global fields, and the same kind graph expresses
"a known pair" and "the twin of the card face up". A :func:`token_layout` says where the
fields lie; MemTab's is inferred from the observation length (so the zips saved before
layouts existed still load), Pelmanism's is passed as the policy's ``set_layout``.

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


def token_layout(game: str, **options: Any) -> dict[str, Any]:
    """Where the fields of a flat observation lie, for :class:`MemTabSetNet`.

    ``game`` is ``"memtab"`` (options: ``num_players``) or ``"pelmanism"`` (options:
    ``deck``, ``num_players``). The layout is plain data (ints, lists), so it is saved in
    the model's zip with the policy's constructor arguments.
    """
    if game == "memtab":
        enc = MemTabEncoder(MemTab(num_players=int(options.get("num_players", 2))))
        return {"game": "memtab", "size": enc.size, "positions": NUM_POSITIONS, "kinds": NUM_KINDS,
                "status": list(enc.offsets["status"]), "card": list(enc.offsets["card"]),
                "tableaux": list(enc.offsets["tableaux"]), "num_players": enc.game.num_players,
                "global_start": enc.offsets["tableaux"][0], "scores": list(enc.offsets["scores"])}
    if game == "pelmanism":
        from memtab_env.games.pelmanism import Pelmanism
        from memtab_env.observations.pelmanism import PelmanismEncoder

        g = Pelmanism(options.get("deck", "standard"), int(options.get("num_players", 2)))
        enc = PelmanismEncoder(g)
        return {"game": "pelmanism", "size": enc.size, "positions": g.num_positions,
                "kinds": g.num_kinds, "status": list(enc.offsets["status"]),
                "card": list(enc.offsets["card"]), "tableaux": None, "num_players": g.num_players,
                "global_start": enc.offsets["card"][1], "scores": list(enc.offsets["pairs"])}
    raise ValueError(f"no set layout for game {game!r}; the set network plays 'memtab' and 'pelmanism'")


class MemTabSetNet(nn.Module):
    """Shared trunk of the set actor-critic; ``forward`` gives ``(logits, value latent)``.

    Args:
        obs_size: length of the flat observation (for MemTab it gives the number of
            players when ``layout`` is None).
        dim: width of every token embedding.
        layers: number of residual set layers after the input embedding.
        value_hidden: width of the value head's hidden layer.
        layout: a :func:`token_layout`; None: MemTab's for ``obs_size``.
    """

    def __init__(self, obs_size: int, dim: int = 64, layers: int = 3, value_hidden: int = 64,
                 layout: dict[str, Any] | None = None) -> None:
        super().__init__()
        if layout is None:
            layout = token_layout("memtab", num_players=num_players_from_size(obs_size))
        if layout["size"] != obs_size:
            raise ValueError(f"the set layout is for observations of {layout['size']} values, "
                             f"got {obs_size} (another game, deck or number of players?)")
        n, p, k = layout["num_players"], layout["positions"], layout["kinds"]
        self.num_players, self.positions, self.kinds = n, p, k
        self.status_width = (layout["status"][1] - layout["status"][0]) // p
        self.slices = {"status": layout["status"], "card": layout["card"]}
        if layout["tableaux"] is not None:
            self.slices["tableaux"] = layout["tableaux"]
        start = layout["global_start"]
        self.global_start = start
        scale = np.ones(obs_size - start, dtype=np.float32)
        lo, hi = layout["scores"]
        scale[lo - start : hi - start] = SCORE_SCALE
        self.register_buffer("global_scale", th.as_tensor(scale))
        self.register_buffer("off_diagonal", 1.0 - th.eye(p))
        global_size = obs_size - start
        held = n if "tableaux" in self.slices else 0
        self.embed = nn.Linear(self.status_width + k + held + global_size, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.self_layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.kind_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.pool_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.logit = nn.Linear(dim, 1)
        self.value = nn.Sequential(nn.Linear(dim + global_size, value_hidden), nn.ReLU())
        #: read by Stable-Baselines3 to size the heads
        self.latent_dim_pi = p
        self.latent_dim_vf = value_hidden

    def _field(self, obs: th.Tensor, name: str, shape: tuple[int, int]) -> th.Tensor:
        lo, hi = self.slices[name]
        return obs[:, lo:hi].reshape(obs.shape[0], *shape)

    def trunk(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Token embeddings (B, P, dim) and scaled global fields (B, G)."""
        b, p = obs.shape[0], self.positions
        status = self._field(obs, "status", (p, self.status_width))
        card = self._field(obs, "card", (p, self.kinds))
        glob = obs[:, self.global_start :] * self.global_scale
        parts = [status, card]
        if "tableaux" in self.slices:  # MemTab: which seat's tableau holds this kind
            tableaux = self._field(obs, "tableaux", (self.num_players, self.kinds))
            parts.append(card @ tableaux.transpose(1, 2))  # (B, P, n)
        same_kind = (card @ card.transpose(1, 2)) * self.off_diagonal  # (B, P, P)
        tokens = th.cat([*parts, glob[:, None, :].expand(b, p, glob.shape[1])], 2)
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
                 set_layout: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self.set_dim = set_dim
        self.set_layers = set_layers
        self.value_hidden = value_hidden
        self.set_layout = set_layout
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = MemTabSetNet(self.features_dim, self.set_dim, self.set_layers,
                                          self.value_hidden, self.set_layout)

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
        if self.set_layout is not None:  # MemTab models saved without one load as before
            data.update(set_layout=self.set_layout)
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


__all__ = ["MaskableMemTabSetPolicy", "MemTabSetNet", "MemTabSetPolicy", "num_players_from_size",
           "token_layout"]
