"""Train a policy for a memtab-env game with Stable-Baselines3, then evaluate it.

    python train.py --config configs/quick.yaml
    python train.py --config configs/quick.yaml --total-timesteps 50_000 --set seed=3
    python train.py --resume runs/<run_name>            # or just --resume: the latest run
    python train.py --evaluate agents/policies/ppo_memtab.zip --eval-games 2000

The same as ``memtab train`` (the installed command): the trainer lives in
:mod:`memtab_env.train` (config, opponents, vector envs, model, callbacks, evaluation),
and ``python train.py --help`` lists every config field.
"""

import sys

from memtab_env.train import cli

if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:], prog="train.py"))
