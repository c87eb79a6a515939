"""RL Zoo hyperparameters of ``--algo dqn`` (see :mod:`memtab_env.rl_zoo`)."""

from memtab_env.rl_zoo import ENV_IDS, env_kwargs

_common = {
    "policy": "MlpPolicy",
    "n_envs": 4,
    "n_timesteps": 1_000_000,
    "buffer_size": 100_000,
    "learning_starts": 1_000,
    "batch_size": 64,
    "gamma": 0.995,
    "learning_rate": 1.0e-4,
    "train_freq": 4,
    "gradient_steps": 1,
    "target_update_interval": 1_000,
    "exploration_fraction": 0.2,
    "exploration_final_eps": 0.05,
    "policy_kwargs": {"net_arch": [256, 256]},
}

hyperparams = {env_id: {**_common, "env_kwargs": env_kwargs()} for env_id in ENV_IDS}
