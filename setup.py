"""Package layout (everything else is in pyproject.toml).

The repository keeps the baselines in the top-level ``agents/`` folder and the training
configs in ``configs/``; they install as ``memtab_env.agents`` and ``memtab_env.configs``,
so an installed memtab-env claims no top-level import name but ``memtab_env`` (another
distribution's ``agents`` package, such as the OpenAI Agents SDK's, cannot clash with it).
"""

from setuptools import find_packages, setup

MAPPED = {"memtab_env.agents": "agents", "memtab_env.configs": "configs"}
#: folders of data files only (listed so that setuptools ships them as package data)
DATA = ["memtab_env.data", "memtab_env.agents.policies"]

setup(
    packages=[*find_packages(include=["memtab_env", "memtab_env.*"]), *MAPPED, *DATA],
    package_dir=MAPPED,
)
