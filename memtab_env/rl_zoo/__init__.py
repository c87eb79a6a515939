"""Hyperparameters for the RL Baselines3 Zoo (``rl_zoo3``), one module per algorithm.

    python -m rl_zoo3.train --algo ppo --env MemTab-v0 --gym-packages memtab_env -conf memtab_env.rl_zoo.ppo
    python -m rl_zoo3.train --algo dqn --env MemTab-v0 --gym-packages memtab_env -conf memtab_env.rl_zoo.dqn
    python -m rl_zoo3.train --algo ppo_lstm --env MemTab-v0 --gym-packages memtab_env \\
        -conf memtab_env.rl_zoo.ppo_lstm
    python -m rl_zoo3.enjoy --algo ppo --env MemTab-v0 --gym-packages memtab_env -f logs/ --no-render

``-conf`` takes a module path (rl_zoo3 imports it and reads its ``hyperparams``), so the
files work from any folder once memtab-env is installed; :func:`path` gives the file of a
module for rl_zoo3's ``-conf FILE.py`` form. Each module is keyed by env id
(``MemTab-v0``, ``Pelmanism-v0``, ``MemoryBoard-v0``), rl_zoo3's layout; the RL Zoo keeps
one file per algorithm because the policy names differ (``MlpLstmPolicy`` for
``ppo_lstm``).

The Zoo's algorithms see no action mask, so the envs are made with
``illegal_action="terminate"``: an illegal flip ends the episode with a loss (-1), and a
deterministic policy cannot loop on one illegal flip to the step limit in ``enjoy`` or
SB3's ``evaluate_policy``. The opponents are ``random``; everything in ``env_kwargs`` can
be changed with rl_zoo3's ``--env-kwargs`` (``--env-kwargs opponents:"'greedy'"``).
MaskablePPO is not one of the Zoo's algorithms: ``memtab train`` trains it
(``docs/training.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: the algorithms with a module here (rl_zoo3's names)
ALGOS = ("ppo", "dqn", "ppo_lstm")
#: env ids every module has an entry for
ENV_IDS = ("MemTab-v0", "Pelmanism-v0", "MemoryBoard-v0")


def env_kwargs(**extra: Any) -> dict[str, Any]:
    """The env options of every entry: random opponents, illegal flips end the episode."""
    return {"opponents": "random", "illegal_action": "terminate", **extra}


def path(algo: str) -> Path:
    """The file of the hyperparameter module of ``algo`` (for ``-conf FILE.py``)."""
    if algo not in ALGOS:
        raise ValueError(f"no RL Zoo hyperparameters for {algo!r}; algorithms: {list(ALGOS)}")
    return Path(__file__).with_name(f"{algo}.py")
