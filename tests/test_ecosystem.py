"""Libraries users install beside memtab-env, driven through their documented entry points
(each test runs when its library is installed)."""

from __future__ import annotations

import importlib

import pytest

GAMES = ["memtab", "pelmanism", "memory_board"]


@pytest.mark.parametrize("game", GAMES)
def test_torchrl_pettingzoo_wrapper_with_state(game: str) -> None:
    """TorchRL's ``PettingZooWrapper(return_state=True)`` on the turn-based AEC env, with
    the action mask, through the end of a game (random legal actions)."""
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    mod = importlib.import_module(f"memtab_env.{game}_v0")
    options = {"deck": "pairs:4"} if game == "pelmanism" else {}
    env = PettingZooWrapper(env=mod.env(num_players=2, **options), use_mask=True, return_state=True,
                            categorical_actions=True, seed=0)
    td = env.reset()
    assert td["state"].shape[-1] == mod.env(**options).state_space.shape[0]
    rollout = env.rollout(5_000, break_when_any_done=True)
    assert rollout["next", "done"].any()  # a whole game was played
    assert env.observation_spec["state"].shape[-1] == td["state"].shape[-1]


def test_openai_agents_beside_memtab_env(tmp_path) -> None:
    """With the OpenAI Agents SDK installed (its top-level ``agents`` package), the envs,
    the baselines and a shipped policy work, and ``import agents`` is the SDK's. In a
    fresh interpreter outside the checkout (whose ``agents/`` folder would shadow it)."""
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        "if importlib.util.find_spec('agents') is None: sys.exit(77)\n"
        "import agents as sdk\n"
        "if not hasattr(sdk, 'Runner'): sys.exit(77)\n"
        "import gymnasium as gym, memtab_env\n"
        "from memtab_env import agents\n"
        "gym.make('MemTab-v0').reset(seed=0)\n"
        "from memtab_env.play import make_raw_env, play_game\n"
        "play_game(make_raw_env('memtab'), [agents.make('ppo-memtab'), agents.make('expert')], seed=0)\n"
        "assert sys.modules['agents'] is sdk and agents is not sdk\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    if proc.returncode == 77:
        pytest.skip("the OpenAI Agents SDK is not installed")
    assert proc.returncode == 0, proc.stderr
