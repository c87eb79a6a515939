"""An LSTM actor-critic that never chooses an illegal flip, for sb3-contrib's RecurrentPPO.

sb3-contrib has no masked recurrent PPO, and the env's ``action_masks()`` does not reach
``RecurrentPPO``. But in MemTab and Pelmanism the observation itself says which flips are
legal for the player on turn: exactly the positions whose status is "face down" (status
column 0 of :class:`memtab_env.games.memtab.observation.MemTabEncoder` and
:class:`memtab_env.games.pelmanism.observation.PelmanismEncoder`). :class:`ObsMaskedLstmPolicy`
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
from memtab_env.agents.set_policy import _encoder, _SetPolicyMixin
from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
from stable_baselines3.common.distributions import Distribution
from torch import nn

#: logit of an action the observation shows to be illegal (as sb3-contrib's masks)
MASKED_LOGIT = -1e8


def legal_status(game: str, **options: Any) -> list[int]:
    """``[first index of the status block, positions, status width, face-down column]`` of
    ``game``'s flat observation (the options give the deck and the number of players):
    the game's encoder's ``legal_status()``."""
    return _encoder(game, "no observation mask", **options).legal_status()


class ObsMaskedLstmPolicy(RecurrentActorCriticPolicy):
    """sb3-contrib's ``MlpLstmPolicy`` restricted to the flips the observation shows face
    down (see the module docstring).

    With ``action_skip=True`` (needs the set features extractor,
    :class:`memtab_env.agents.set_policy.SetFeatures`) the action logits are the set network's
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


class SlotLstm(nn.Module):
    """One small LSTM per position, with shared weights, behind ``nn.LSTM``'s interface.

    sb3-contrib's recurrent policies call their LSTM as ``lstm(x, (h, c))`` with ``x`` of
    shape ``(L, N, input_size)`` and states ``(num_layers, N, hidden_size)``; this module
    takes the flat observation as ``x`` and runs the *same* cell over every position's
    token (its status and card one-hots), so the state is ``positions x slot_size``
    values: what the policy remembers about each position. The output is the observation
    followed by that memory, ``(L, N, input_size + hidden_size)``, which
    :class:`memtab_env.agents.set_policy.MemTabSetNet` reads with :func:`slot_layout`.

    A position's memory sees only its own tokens: "remember the card seen here" is learnt
    once for all positions, and what to do with it is the set network's business.

    The cell starts as a *latch* (``latch_init``; every weight stays trainable): the input
    gate opens only when the token shows a card (input-gate bias ``-latch_gain / 2``, card
    weights ``+latch_gain``), the forget gate is nearly shut (bias ``forget_bias``), the
    candidate values are spread (unit-variance card weights, so each kind writes its own
    pattern) and the output gate is open. A fresh policy thus already carries what it has
    seen; training decides what to keep and how to use it. Without it (PyTorch's default
    init, forget bias only) the memory has to discover by itself when to write, and a
    terminal +-1 reward did not teach it that within 500k steps (``docs/training.md``).

    Args:
        layout: the observation's :func:`memtab_env.agents.set_policy.token_layout`.
        slot_size: memory values per position.
        forget_bias: initial bias of the forget gate.
        latch_init: start the cell as a latch (see above).
        latch_gain: scale of the latch's input-gate weights.
    """

    def __init__(self, layout: dict[str, Any], slot_size: int = 16, forget_bias: float = 5.0,
                 latch_init: bool = True, latch_gain: float = 8.0) -> None:
        super().__init__()
        p = int(layout["positions"])
        self.positions, self.slot_size = p, int(slot_size)
        self.status, self.card = tuple(layout["status"]), tuple(layout["card"])
        width = (self.status[1] - self.status[0] + self.card[1] - self.card[0]) // p
        #: read by sb3-contrib (state shapes, reshaping of the features)
        self.input_size = int(layout["size"])
        self.hidden_size = p * self.slot_size
        self.num_layers = 1
        self.cell = nn.LSTM(width, self.slot_size)
        d, card = self.slot_size, slice(width - (self.card[1] - self.card[0]) // p, width)
        with th.no_grad():  # gate blocks of d rows: input, forget, cell (candidate), output
            w, b = self.cell.weight_ih_l0, self.cell.bias_ih_l0
            b[d : 2 * d].fill_(forget_bias)
            if latch_init:
                b[:d].fill_(-latch_gain / 2)
                w[:d, card].fill_(latch_gain)
                w[2 * d : 3 * d, card].normal_(0.0, 1.0)
                b[3 * d :].fill_(2.0)

    def forward(self, x: th.Tensor, states: tuple[th.Tensor, th.Tensor]
                ) -> tuple[th.Tensor, tuple[th.Tensor, th.Tensor]]:
        length, n, _ = x.shape
        p, d = self.positions, self.slot_size
        tokens = th.cat([x[..., self.status[0] : self.status[1]].reshape(length, n, p, -1),
                         x[..., self.card[0] : self.card[1]].reshape(length, n, p, -1)], -1)
        h, c = (s.reshape(1, n * p, d) for s in states)
        out, (h, c) = self.cell(tokens.reshape(length, n * p, -1), (h, c))
        memory = out.reshape(length, n, p * d)
        return th.cat([x, memory], -1), (h.reshape(1, n, p * d), c.reshape(1, n, p * d))


def slot_layout(layout: dict[str, Any], slot_size: int) -> dict[str, Any]:
    """``layout`` (a :func:`memtab_env.agents.set_policy.token_layout`) extended by the memory that
    :class:`SlotLstm` appends: one more per-position field, also read as the believed kind
    of a face-down position."""
    size, p = int(layout["size"]), int(layout["positions"])
    memory = [size, size + p * int(slot_size)]
    out = dict(layout, size=memory[1], memory=memory)
    out["extra_tokens"] = [*layout.get("extra_tokens", []), memory]
    if out.get("global_start") is not None and not layout.get("globals"):
        out["globals"] = [[layout["global_start"], size]]  # the globals end where memory starts
    return out


class SlotMemoryPolicy(_SetPolicyMixin, ObsMaskedLstmPolicy):
    """A recurrent set policy: :class:`SlotLstm` (a memory cell per position) followed by
    the set network of :mod:`memtab_env.agents.set_policy` over "what the observation shows and what I
    remember here", for sb3-contrib's ``RecurrentPPO`` (``slot_memory`` in ``train.py``).

    Only the memory is recurrent; the actor and the critic share it (sb3-contrib's
    ``shared_lstm``: the critic reads it without sending gradients into it), and the action
    logits are restricted to the flips the observation shows face down, as in
    :class:`ObsMaskedLstmPolicy`. The set network and its heads are built as in the
    feed-forward set policies (``agents.set_policy._SetPolicyMixin``), on
    :func:`slot_layout` of the observation's layout.

    Args:
        layout: the observation's :func:`memtab_env.agents.set_policy.token_layout`.
        slot_size: memory values per position.
        set_dim, set_layers, value_hidden: the set network's widths and depth.
        legal_status: :func:`legal_status` of the game.
        *args, **kwargs: those of ``RecurrentActorCriticPolicy`` (``lstm_hidden_size``,
            ``shared_lstm``, ``enable_critic_lstm`` and ``n_lstm_layers`` are set here).
    """

    #: set here, or derived from ``layout``: a saved model's values are recomputed
    _DERIVED = ("lstm_hidden_size", "shared_lstm", "enable_critic_lstm", "n_lstm_layers", "set_layout")

    def __init__(self, *args: Any, layout: dict[str, Any], slot_size: int = 16, set_dim: int = 32,
                 set_layers: int = 3, **kwargs: Any) -> None:
        self.layout, self.slot_size = dict(layout), int(slot_size)
        for name in self._DERIVED:
            kwargs.pop(name, None)
        super().__init__(*args, set_dim=set_dim, set_layers=set_layers,
                         set_layout=slot_layout(self.layout, self.slot_size),
                         lstm_hidden_size=int(layout["positions"]) * self.slot_size,
                         shared_lstm=True, enable_critic_lstm=False, **kwargs)
        if self.features_dim != self.layout["size"]:
            raise ValueError(f"the layout is for observations of {self.layout['size']} values, "
                             f"the features have {self.features_dim} (use the flat observation)")
        self.lstm_actor = SlotLstm(self.layout, self.slot_size)
        lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr, **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        for name in self._DERIVED:
            data.pop(name, None)
        data.update(layout=self.layout, slot_size=self.slot_size)
        return data


__all__ = ["MASKED_LOGIT", "ObsMaskedLstmPolicy", "SlotLstm", "SlotMemoryPolicy", "legal_status",
           "slot_layout"]
