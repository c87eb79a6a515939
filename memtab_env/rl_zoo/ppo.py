"""RL Zoo hyperparameters of ``--algo ppo`` (see :mod:`memtab_env.rl_zoo`)."""

from memtab_env.rl_zoo import ENV_IDS, env_kwargs

#: the PPO family's numbers (``ppo_lstm`` starts from them)
COMMON = {
    "policy": "MlpPolicy",
    "n_envs": 8,
    "n_timesteps": 1_000_000,
    "n_steps": 128,
    "batch_size": 256,
    "n_epochs": 4,
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
    "learning_rate": 3.0e-4,
    "policy_kwargs": {"net_arch": [256, 256]},
}

hyperparams = {env_id: {**COMMON, "env_kwargs": env_kwargs()} for env_id in ENV_IDS}
