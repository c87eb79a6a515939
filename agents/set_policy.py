"""A position-equivariant actor-critic for MemTab (``policy: set`` in ``train.py``).

MemTab's 28 positions are interchangeable: cards never move and nothing depends on where
a card lies, only on what is known about it. A plain MLP on the flat observation has to
learn the same rule ("flip the twin of the card I just saw") 28 times over, once per
position. This network reads the flat observation of
:class:`memtab_env.games.memtab.observation.MemTabEncoder` as a *set* of 28 position tokens
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

For Memory: The Board Game (``policy: set`` on ``MemoryBoard-v0``) the tokens are the
board's spaces; they also carry the space's landscape, whether it was placed in the
current return and how many cards of its landscape each seat holds, a second graph joins
side neighbours (where a return may grow), and the actions are two logits per space
(flip it, place on it) plus two from the pooled state (end the return, pass). The
neighbour graph makes it equivariant only under the board's symmetries.

The same network plays Pelmanism (``policy: set`` on ``Pelmanism-v0``): its observation
(:class:`memtab_env.games.pelmanism.observation.PelmanismEncoder`) is also a status one-hot and a
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
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import MemTab

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
    """Where the fields of a flat observation lie, for :class:`MemTabSetNet`: the game's
    encoder's ``token_layout()`` for the options (``num_players``, ``deck``, ``board``,
    ...). The layout is plain data (ints, lists), so it is saved in the model's zip with
    the policy's constructor arguments.
    """
    return _encoder(game, "no set layout", **options).token_layout()


def _encoder(game: str, what: str, **options: Any) -> Any:
    """The encoder of ``game`` with ``options``; an unknown game is a ValueError saying
    ``what`` it has no answer for."""
    from memtab_env.registry import GAMES, make_encoder

    if not any(game in (s.name, s.env_id) for s in GAMES.values()):
        raise ValueError(f"{what} for game {game!r}; the games are {sorted(GAMES)}")
    return make_encoder(game, **options)


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
        # optional parts (the board game): more per-position fields, a held-cards table
        # read through another per-position one-hot, a static neighbour graph, and
        # several logits per position plus global logits
        self.extra = [tuple(x) for x in layout.get("extra_tokens", [])]
        extra_width = sum((hi - lo) // p for lo, hi in self.extra)
        self.held = layout.get("held")
        held = n if ("tableaux" in self.slices or self.held) else 0
        globals_ = layout.get("globals") or [[layout["global_start"], obs_size]]
        scaled = layout.get("scaled") or [layout["scores"]]
        self.globals = [tuple(g) for g in globals_]
        scale = np.concatenate([
            np.where([any(a <= i < b for a, b in scaled) for i in range(lo, hi)], SCORE_SCALE, 1.0)
            for lo, hi in self.globals
        ]).astype(np.float32)
        self.register_buffer("global_scale", th.as_tensor(scale))
        self.register_buffer("off_diagonal", 1.0 - th.eye(p))
        global_size = int(scale.size)
        self.embed = nn.Linear(self.status_width + k + extra_width + held + global_size, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.self_layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.kind_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.pool_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        adjacency = layout.get("adjacency")
        if adjacency is not None:
            adj = th.zeros(p, p)
            for i, near in enumerate(adjacency):
                adj[i, list(near)] = 1.0
            self.register_buffer("adjacency", adj)
            self.adj_layers = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        # a per-position recurrent memory (agents.recurrent_policy.SlotMemoryPolicy): its
        # state is one extra token field; a readout of it gives the kind a face-down
        # position is believed to hold (one more class: "I do not know"), used in place of
        # the card the observation no longer shows
        self.memory = layout.get("memory")
        if self.memory is not None:
            self.readout = nn.Linear((self.memory[1] - self.memory[0]) // p, k + 1)
        self.token_logits = int(layout.get("token_logits", 1))
        self.global_logits = int(layout.get("global_logits", 0))
        self.logit = nn.Linear(dim, self.token_logits)
        if self.global_logits:
            self.global_logit = nn.Linear(dim + global_size, self.global_logits)
        self.value = nn.Sequential(nn.Linear(dim + global_size, value_hidden), nn.ReLU())
        #: read by Stable-Baselines3 to size the heads
        self.latent_dim_pi = p * self.token_logits + self.global_logits
        self.latent_dim_vf = value_hidden

    def _field(self, obs: th.Tensor, name: str, shape: tuple[int, int]) -> th.Tensor:
        lo, hi = self.slices[name]
        return obs[:, lo:hi].reshape(obs.shape[0], *shape)

    def trunk(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Token embeddings (B, P, dim) and scaled global fields (B, G)."""
        b, p = obs.shape[0], self.positions
        status = self._field(obs, "status", (p, self.status_width))
        card = self._field(obs, "card", (p, self.kinds))
        if self.memory is not None:  # face down and not shown: the kind memory believes
            lo, hi = self.memory
            believed = th.softmax(self.readout(obs[:, lo:hi].reshape(b, p, -1)), -1)[..., :-1]
            hidden = status[..., :1] * (1.0 - card.sum(-1, keepdim=True))
            card = card + hidden * believed
        if len(self.globals) == 1:
            glob = obs[:, self.globals[0][0] : self.globals[0][1]] * self.global_scale
        else:
            glob = th.cat([obs[:, lo:hi] for lo, hi in self.globals], 1) * self.global_scale
        parts = [status, card, *(obs[:, lo:hi].reshape(b, p, -1) for lo, hi in self.extra)]
        if "tableaux" in self.slices:  # MemTab: which seat's tableau holds this kind
            tableaux = self._field(obs, "tableaux", (self.num_players, self.kinds))
            parts.append(card @ tableaux.transpose(1, 2))  # (B, P, n)
        elif self.held:  # the board: how many cards of this space's landscape each seat holds
            lo, hi = self.held["token"]
            token = obs[:, lo:hi].reshape(b, p, -1)
            lo, hi = self.held["table"]
            table = obs[:, lo:hi].reshape(b, self.num_players, -1)
            parts.append((token @ table.transpose(1, 2)) * SCORE_SCALE)
        same_kind = (card @ card.transpose(1, 2)) * self.off_diagonal  # (B, P, P)
        tokens = th.cat([*parts, glob[:, None, :].expand(b, p, glob.shape[1])], 2)
        h = th.relu(self.embed(tokens))
        adj_layers = getattr(self, "adj_layers", None)
        for i, (norm, lin_self, lin_kind, lin_pool) in enumerate(zip(
            self.norms, self.self_layers, self.kind_layers, self.pool_layers, strict=True
        )):
            x = norm(h)
            mix = lin_self(x) + lin_kind(same_kind @ x) + lin_pool(x.mean(dim=1, keepdim=True))
            if adj_layers is not None:  # neighbours by side (the board's connectivity)
                mix = mix + adj_layers[i](self.adjacency @ x)
            h = h + th.relu(mix)
        return h, glob

    def _logits(self, h: th.Tensor, glob: th.Tensor) -> th.Tensor:
        """Action logits: per position (``token_logits`` blocks of P, in action order),
        then the global ones."""
        tok = self.logit(h)  # (B, P, m)
        if self.token_logits == 1 and not self.global_logits:
            return tok.squeeze(-1)
        out = [tok.transpose(1, 2).reshape(h.shape[0], -1)]
        if self.global_logits:
            out.append(self.global_logit(th.cat([h.mean(dim=1), glob], dim=1)))
        return th.cat(out, 1)

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        h, glob = self.trunk(features)
        value = self.value(th.cat([h.mean(dim=1), glob], dim=1))
        return self._logits(h, glob), value

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        h, glob = self.trunk(features)
        return self._logits(h, glob)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        h, glob = self.trunk(features)
        return self.value(th.cat([h.mean(dim=1), glob], dim=1))


class SetFeatures(BaseFeaturesExtractor):
    """The set network as a features extractor, for policies that put their own layers
    after it (``recurrent_ppo`` with ``policy: set``: sb3-contrib's LSTM policy).

    The features are the network's per-action scores (one per action, in action order)
    followed by the mean token embedding, so the LSTM and the action head after it can
    pass the position-wise scores through (a linear map suffices) while the LSTM carries
    what the observation no longer shows.

    Args:
        observation_space: the flat observation's Box.
        dim, layers: width and depth of the set network.
        layout: a :func:`token_layout`; None: MemTab's for the observation length.
    """

    def __init__(self, observation_space: spaces.Box, dim: int = 32, layers: int = 3,
                 layout: dict[str, Any] | None = None) -> None:
        size = int(observation_space.shape[0])
        net = MemTabSetNet(size, dim, layers, layout=layout)
        super().__init__(observation_space, features_dim=net.latent_dim_pi + dim)
        self.net = net

    def forward(self, observations: th.Tensor) -> th.Tensor:
        h, glob = self.net.trunk(observations)
        #: the per-action scores of the latest call (read by a policy with a skip path,
        #: agents.recurrent_policy.ObsMaskedLstmPolicy with action_skip=True)
        self.scores = self.net._logits(h, glob)
        return th.cat([self.scores, h.mean(dim=1)], dim=1)


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
        size = self.features_dim if self.set_layout is None else self.set_layout["size"]
        self.mlp_extractor = MemTabSetNet(size, self.set_dim, self.set_layers, self.value_hidden,
                                          self.set_layout)

    def _build(self, lr_schedule: Schedule) -> None:
        super()._build(lr_schedule)  # type: ignore[misc]
        self.action_net = nn.Identity()
        for head in (self.mlp_extractor.logit, getattr(self.mlp_extractor, "global_logit", None)):
            if head is not None:
                nn.init.orthogonal_(head.weight, gain=0.01)
                nn.init.zeros_(head.bias)
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


__all__ = ["MaskableMemTabSetPolicy", "MemTabSetNet", "MemTabSetPolicy", "SetFeatures",
           "num_players_from_size", "token_layout"]
