"""RL Zoo hyperparameters of ``--algo ppo_lstm`` (sb3-contrib's RecurrentPPO; see
:mod:`memtab_env.rl_zoo`). Memory ``none`` by default: the LSTM has to remember."""

from memtab_env.rl_zoo import ENV_IDS, env_kwargs
from memtab_env.rl_zoo.ppo import COMMON

_common = {
    **COMMON,
    "policy": "MlpLstmPolicy",
    "n_timesteps": 2_000_000,
    "policy_kwargs": {"net_arch": [128], "lstm_hidden_size": 128},
}

hyperparams = {env_id: {**_common, "env_kwargs": env_kwargs(memory="none")} for env_id in ENV_IDS}
