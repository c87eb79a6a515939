"""The ecosystem's own checkers on every registered MemTab configuration."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import memtab_env
from memtab_env import memtab_v0
from tests.helpers import needs_pz_registry


@pytest.mark.parametrize("num_players", [1, 2, 4, 6])
@pytest.mark.parametrize("memory", ["perfect", "none", "decay:0.2", "window:4"])
def test_pettingzoo_api_test(num_players, memory):
    api_test(memtab_v0.env(num_players=num_players, memory=memory), num_cycles=200)


@pytest.mark.parametrize("num_players", [2, 3])
def test_pettingzoo_api_test_raw_env(num_players):
    api_test(memtab_v0.raw_env(num_players=num_players), num_cycles=200)


@pytest.mark.parametrize("memory", ["perfect", "decay:0.3"])
def test_pettingzoo_seed_test(memory):
    seed_test(lambda: memtab_v0.env(num_players=3, memory=memory), num_cycles=200)


def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: memtab_v0.env(render_mode=render_mode))


@needs_pz_registry
def test_registered_with_pettingzoo_make():
    env = pettingzoo.make("aec", "memtab/MemTab-v0", num_players=3, memory="none")
    env.reset(seed=1)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.unwrapped.metadata["name"] == "memtab_v0"
    assert env.unwrapped.memory_spec.kind == "none"


def test_metadata_matches_the_specs_table():
    doc = memtab_v0.__doc__
    raw = memtab_v0.raw_env(num_players=2)
    assert ("Parallel API          No" in doc) == (not raw.metadata["is_parallelizable"])
    assert f"Discrete({raw.action_space('player_0').n})" in doc
    assert f"({raw.observation_space('player_0')['observation'].shape[0]},) for 2 players" in doc
    for n in range(1, 7):
        size = memtab_v0.raw_env(num_players=n).observation_space("player_0")["observation"].shape[0]
        assert size == 507 + 16 * n
    lo = raw.observation_space("player_0")["observation"].low.min()
    hi = raw.observation_space("player_0")["observation"].high.max()
    assert f"Observation Values    [{lo}, {hi}]" in doc
    for mode in raw.metadata["render_modes"]:
        assert f'"{mode}"' in doc


def test_encoder_docstring_table_matches_fields():
    from memtab_env.games.memtab.observation import MemTabEncoder

    doc = MemTabEncoder.__doc__
    enc = memtab_v0.raw_env(num_players=3).encoder
    for f in enc.fields:
        assert f.name in doc
    rows = [line.split()[0] for line in doc.splitlines()
            if line.strip() and line.strip().split()[0] in enc.offsets]
    assert rows == [f.name for f in enc.fields]


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 4, "memory": "none"},
                                    {"obs_mode": "dict", "memory": "window:5"},
                                    {"learner_seat": "random", "reward": "score"}])
def test_gymnasium_check_env(kwargs):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("MemTab-v0", **kwargs)
    check_env(env.unwrapped, skip_render_check=False)


def test_gymnasium_make_with_module_prefix():
    env = gym.make("memtab_env:MemTab-v0")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["action_mask"].dtype == np.int8


@pytest.mark.parametrize("obs_mode", ["flat", "dict"])
def test_sb3_check_env(obs_mode):
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make("MemTab-v0", obs_mode=obs_mode).unwrapped, warn=True)


@pytest.mark.parametrize("env_id,start_method", [
    ("MemTab-v0", "fork"),  # the registry is inherited
    ("memtab_env:MemTab-v0", "spawn"),  # fresh interpreters import memtab_env from the id
])
def test_subproc_vec_env_with_registered_id(env_id, start_method):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(env_id, n_envs=2, seed=0, vec_env_cls=SubprocVecEnv,
                        vec_env_kwargs={"start_method": start_method},
                        env_kwargs={"opponents": "greedy"})
    try:
        obs = venv.reset()
        assert obs.shape == (2, 539)
        dones_seen = 0
        for _ in range(120):
            masks = np.stack(venv.env_method("action_masks"))
            assert masks.shape == (2, 28) and masks.any(axis=1).all()
            actions = np.array([np.flatnonzero(m)[0] for m in masks])
            obs, rewards, dones, infos = venv.step(actions)
            dones_seen += int(dones.sum())
        assert dones_seen >= 2  # episodes end and auto-reset
    finally:
        venv.close()


def test_version_is_exposed():
    assert memtab_env.__version__ == "0.1.0"
