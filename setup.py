"""Package layout (everything else is in pyproject.toml).

The repository keeps the baselines in the top-level ``agents/`` folder and the training
configs in ``configs/``; they install as ``memtab_env.agents`` and ``memtab_env.configs``,
so an installed memtab-env claims no top-level import name but ``memtab_env`` (another
distribution's ``agents`` package, such as the OpenAI Agents SDK's, cannot clash with it).
"""

from setuptools import find_packages, setup

MAPPED = {"memtab_env.agents": "agents", "memtab_env.configs": "configs"}

setup(
    packages=[*find_packages(include=["memtab_env", "memtab_env.*"]), *MAPPED],
    package_dir=MAPPED,
)
