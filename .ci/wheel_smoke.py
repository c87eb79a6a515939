"""Smoke test of an installed wheel (run by .ci/run in a fresh virtual environment, from a
folder outside the checkout): one game of every registered id through Gymnasium and
through PettingZoo's AEC API, a shipped config found by name, and no top-level name but
memtab_env claimed."""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util

import gymnasium as gym
import numpy as np

import memtab_env
from memtab_env.registry import GAMES, load

assert "site-packages" in memtab_env.__file__, f"not the installed wheel: {memtab_env.__file__}"
assert md.distribution("memtab-env").read_text("top_level.txt").split() == ["memtab_env"]
assert importlib.util.find_spec("agents") is None, "an installed top-level 'agents' package"

rng = np.random.default_rng(0)
for spec in GAMES.values():
    env = gym.make(spec.env_id, opponents="random")
    _, info = env.reset(seed=0)
    steps, term = 0, False
    while not term:
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        assert not trunc, spec.env_id
    aec = load(f"{spec.aec_module}:env")()
    aec.reset(seed=0)
    for _ in aec.agent_iter():
        obs, _, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    result = aec.unwrapped.record()["result"]
    assert result["over"], spec.env_id
    assert aec.state().shape == aec.state_space.shape
    print(f"{spec.env_id}: Gymnasium game of {steps} learner steps, AEC game winners {result['winners']}")

config = importlib.import_module("memtab_env.train.config")
assert "quick" in config.shipped_configs() and config.config_path("quick").is_file()
agents = importlib.import_module("memtab_env.agents")
print("agents:", agents.available("memtab"))
print("wheel smoke test passed")
