"""RL Zoo hyperparameters of ``--algo ppo_lstm`` (sb3-contrib's RecurrentPPO; see
:mod:`memtab_env.rl_zoo`). Memory ``none`` by default: the LSTM has to remember."""

from memtab_env.rl_zoo import ENV_IDS, env_kwargs

_common = {
    "policy": "MlpLstmPolicy",
    "n_envs": 8,
    "n_timesteps": 2_000_000,
    "n_steps": 128,
    "batch_size": 256,
    "n_epochs": 4,
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
    "learning_rate": 3.0e-4,
    "policy_kwargs": {"net_arch": [128], "lstm_hidden_size": 128},
}

hyperparams = {env_id: {**_common, "env_kwargs": env_kwargs(memory="none")} for env_id in ENV_IDS}
