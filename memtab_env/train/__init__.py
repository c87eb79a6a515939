"""Training with Stable-Baselines3: ``memtab train`` (or the repository's ``train.py``).

    memtab train --config quick                       # a shipped config, by name
    memtab train --config my.yaml --seed 3 --set total_timesteps=200_000
    memtab train --resume runs/<run_name>             # or just --resume: the latest run
    memtab train --evaluate runs/<run>/model.zip --eval-games 2000 --out eval.json

Modules, in the order a run uses them:

- :mod:`memtab_env.train.config`: the typed :class:`~memtab_env.train.config.Config`
  (one docstring per field; ``--help`` prints them), its validation, the YAML files
  (keyed by env id; the shipped ones in :mod:`memtab_env.configs`) and CLI overrides;
- :mod:`memtab_env.train.opponents`: opponent mixing and the self-play pool;
- :mod:`memtab_env.train.vec`: the training VecEnv (scalar, subprocess or batched);
- :mod:`memtab_env.train.model`: the algorithm and its policy network;
- :mod:`memtab_env.train.callbacks`: statistics, checkpoints, self-play snapshots;
- :mod:`memtab_env.train.evaluation`: the final evaluation, by the benchmark's protocol;
- :mod:`memtab_env.train.run`: :func:`~memtab_env.train.run.main`, top to bottom.

Illegal actions: ``maskable_ppo`` never sends one (it samples from the action mask). The
other algorithms see no mask while learning: an illegal action gets the env's penalty
(``illegal_penalty``), leaves the game unchanged and is counted (``rollout/illegal_rate``
in TensorBoard). At evaluation every policy plays through the bare AEC env, where an
illegal action would raise, so the loader agent restricts its choice to the legal flips
(see ``docs/training.md``).

Only :mod:`~memtab_env.train.config` loads without the ``train`` extra; the rest needs
``pip install -e ".[train]"`` in the memtab-env checkout.
"""

from memtab_env.train.config import Config, ConfigError, config_path, load_yaml, shipped_configs
from memtab_env.train.run import cli, main

__all__ = ["Config", "ConfigError", "cli", "config_path", "load_yaml", "main", "shipped_configs"]
