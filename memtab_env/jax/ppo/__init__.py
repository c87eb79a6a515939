"""PPO with memory, end to end in JAX (PureJaxRL style): environment, policy and update in
one jitted function per update, on the single-agent JAX view.

Memory models come from memax (``memory_model``: ``MLP`` for none, ``Stack`` for a window
of the last k inputs, ``LSTM``, ``GRU``, ``MGU``, ``LRU``, ``S6``, ``FFM``, ``FART``,
``Attention``, ...; any name of ``memax.equinox.train_utils.get_residual_memory_model``).
Recurrent policies are trained over the rollout's whole sequences, with the recurrent
state reset where an episode starts (memax's start flags) and the rollout's first state
carried from the previous rollout, as PureJaxRL's ``ppo_rnn.py`` does.

Usage::

    from memtab_env.jax.ppo import PPOConfig, train
    model, history = train(PPOConfig(memory_model="GRU", total_timesteps=200_000))

One update: ``num_steps`` steps of ``num_envs`` games (auto-reset, the learner's steps;
opponents play inside the view), generalised advantage estimates, then
``update_epochs`` epochs of ``num_minibatches`` minibatches (split over games, whole
sequences). Actions are sampled from the policy's logits with illegal flips masked out.

Checkpoints are data, not code: one zip holding the config as JSON and the weights as
equinox's leaf serialisation (:func:`save`, :func:`load`), no pickle;
``memtab_env.agents.make(path)`` plays one (:class:`JaxPPOAgent`).

The package, one module per part (this face only hands their names on):

- :mod:`~memtab_env.jax.ppo.config`: :class:`PPOConfig`, everything a run depends on;
- :mod:`~memtab_env.jax.ppo.networks`: the encoders (``flat``, ``set``, ``kinds``)
  around a memax memory, the latch initialisation (:func:`latch_gru`),
  :func:`make_policy` and :func:`make_view`;
- :mod:`~memtab_env.jax.ppo.algorithm`: the algorithm top to bottom: the rollout, GAE,
  the loss, the minibatch epochs and :func:`make_train`;
- :mod:`~memtab_env.jax.ppo.trainer`: seeds side by side, devices, the loop
  (:class:`Trainer`, :func:`train`);
- :mod:`~memtab_env.jax.ppo.checkpoints`: policy zips and training states;
- :mod:`~memtab_env.jax.ppo.agent`: a checkpoint as an agent (:class:`JaxPPOAgent`).
"""

from __future__ import annotations

from memtab_env.jax.ppo.agent import JaxPPOAgent
from memtab_env.jax.ppo.algorithm import Runner, make_train
from memtab_env.jax.ppo.checkpoints import (
    CHECKPOINT_FORMAT,
    CONFIG_MEMBER,
    WEIGHTS_MEMBER,
    load,
    load_runner,
    read_meta,
    save,
    save_runner,
)
from memtab_env.jax.ppo.config import ENCODERS, LR_SCHEDULES, PPOConfig
from memtab_env.jax.ppo.networks import (
    MEMORY_MODELS,
    ActorCritic,
    KindSetActorCritic,
    SetActorCritic,
    count_parameters,
    latch_gru,
    make_policy,
    make_view,
)
from memtab_env.jax.ppo.trainer import Trainer, train

__all__ = [
    "CHECKPOINT_FORMAT",
    "CONFIG_MEMBER",
    "ENCODERS",
    "LR_SCHEDULES",
    "MEMORY_MODELS",
    "WEIGHTS_MEMBER",
    "ActorCritic",
    "JaxPPOAgent",
    "KindSetActorCritic",
    "PPOConfig",
    "Runner",
    "SetActorCritic",
    "Trainer",
    "count_parameters",
    "latch_gru",
    "load",
    "load_runner",
    "make_policy",
    "make_train",
    "make_view",
    "read_meta",
    "save",
    "save_runner",
    "train",
]
