"""The model of a run: the Stable-Baselines3 / sb3-contrib algorithm and its policy
(SB3's MLP, the set network of :mod:`memtab_env.agents.set_policy`, or the recurrent
policies of :mod:`memtab_env.agents.recurrent_policy`)."""

from __future__ import annotations

from typing import Any

from memtab_env.train.config import Config


def algo_class(algo: str) -> Any:
    """The Stable-Baselines3 / sb3-contrib class of ``algo``."""
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "recurrent_ppo":
        from sb3_contrib import RecurrentPPO

        return RecurrentPPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    from stable_baselines3 import DQN

    return DQN


def make_model(cfg: Config, env: Any, tensorboard_dir: str | None) -> Any:
    """A new model of ``cfg.algo`` on ``env``."""
    from torch import nn

    lr: Any = cfg.learning_rate
    if cfg.lr_schedule == "linear":
        from stable_baselines3.common.utils import LinearSchedule

        lr = LinearSchedule(cfg.learning_rate, 0.0, 1.0)
    activation = {"tanh": nn.Tanh, "relu": nn.ReLU}[cfg.activation]
    common = dict(learning_rate=lr, gamma=cfg.gamma, batch_size=cfg.batch_size, seed=cfg.seed,
                  device=cfg.device, verbose=cfg.verbose, tensorboard_log=tensorboard_dir,
                  max_grad_norm=cfg.max_grad_norm)
    if cfg.algo == "dqn":
        return algo_class("dqn")(
            "MlpPolicy", env, buffer_size=cfg.buffer_size, learning_starts=cfg.learning_starts,
            train_freq=cfg.train_freq, gradient_steps=cfg.gradient_steps,
            target_update_interval=cfg.target_update_interval,
            exploration_fraction=cfg.exploration_fraction,
            exploration_final_eps=cfg.exploration_final_eps,
            policy_kwargs=dict(net_arch=list(cfg.net_arch), activation_fn=activation), **common,
        )
    ppo = dict(n_steps=cfg.n_steps, n_epochs=cfg.n_epochs, gae_lambda=cfg.gae_lambda,
               clip_range=cfg.clip_range, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
               target_kl=cfg.target_kl, **common)
    layout: dict[str, Any] | None = None
    if cfg.policy == "set":  # where the fields lie, from the game's encoder (slot memory too)
        from memtab_env.agents.set_policy import token_layout

        layout = token_layout(cfg.game, num_players=cfg.num_players, **cfg.env_options)
    if cfg.algo == "recurrent_ppo":
        policy: Any = "MlpLstmPolicy"
        kwargs: dict[str, Any] = dict(net_arch=list(cfg.net_arch), activation_fn=activation,
                                      lstm_hidden_size=cfg.lstm_hidden_size)
        if cfg.obs_mask:
            from memtab_env.agents.recurrent_policy import ObsMaskedLstmPolicy, legal_status

            policy = ObsMaskedLstmPolicy
            kwargs["legal_status"] = legal_status(cfg.game, num_players=cfg.num_players, **cfg.env_options)
        if cfg.slot_memory:
            from memtab_env.agents.recurrent_policy import SlotMemoryPolicy

            policy = SlotMemoryPolicy
            kwargs = dict(legal_status=kwargs["legal_status"], slot_size=cfg.slot_memory,
                          set_dim=cfg.set_dim, set_layers=cfg.set_layers, layout=layout)
        elif cfg.policy == "set":
            from memtab_env.agents.set_policy import SetFeatures

            kwargs.update(features_extractor_class=SetFeatures, features_extractor_kwargs=dict(
                dim=cfg.set_dim, layers=cfg.set_layers, layout=layout))
            if cfg.obs_mask:  # the set scores also reach the logits directly
                kwargs["action_skip"] = True
    elif cfg.policy == "set":
        from memtab_env.agents.set_policy import MaskableMemTabSetPolicy, MemTabSetPolicy

        policy = MaskableMemTabSetPolicy if cfg.algo == "maskable_ppo" else MemTabSetPolicy
        kwargs = dict(set_dim=cfg.set_dim, set_layers=cfg.set_layers, set_layout=layout)
    else:
        policy = "MlpPolicy"
        kwargs = dict(net_arch=list(cfg.net_arch), activation_fn=activation)
    return algo_class(cfg.algo)(policy, env, policy_kwargs=kwargs, **ppo)
