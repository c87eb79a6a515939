"""Edges of the API: odd actions are illegal actions with the usual error (never silently
converted), odd seeds and penalties are refused, calls before ``reset()`` or after the
game name the problem, ``window:k`` has its documented bound."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

import memtab_env  # noqa: F401  (registers the envs)
from memtab_env import memory_board_v0, memtab_v0, pelmanism_v0
from memtab_env.errors import GameOverError, IllegalActionError, InvalidOptionError, NotResetError
from memtab_env.memory import MAX_WINDOW, parse_memory

MODULES = [memtab_v0, pelmanism_v0, memory_board_v0]
IDS = ["MemTab-v0", "Pelmanism-v0", "MemoryBoard-v0"]
ODD_ACTIONS = ["3", b"3", 3.0, 2**63, 2**70, -(2**70), -1, None, [3], np.float32(3), True, np.bool_(True)]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("action", ODD_ACTIONS, ids=repr)
def test_raw_env_refuses_odd_actions_and_changes_nothing(module, action):
    env = module.raw_env()
    env.reset(seed=1)
    before = env.record()
    with pytest.raises(IllegalActionError):
        env.step(action)
    assert env.record() == before


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("action", ["3", 2**70, 3.5], ids=repr)
def test_wrapped_env_refuses_odd_actions(module, action):
    env = module.env()
    env.reset(seed=1)
    with pytest.raises(IllegalActionError):
        env.step(action)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("action", ["3", 3.0, 2**70, -(2**70), None, True], ids=repr)
def test_gym_view_gives_the_penalty_for_odd_actions(env_id, action):
    env = gym.make(env_id).unwrapped
    obs, _ = env.reset(seed=1)
    record = env.record()
    _, reward, term, trunc, info = env.step(action)
    assert reward == env.illegal_penalty and info["illegal_action"] and not term and not trunc
    assert env.record() == record
    raising = gym.make(env_id, illegal_action="raise").unwrapped
    raising.reset(seed=1)
    with pytest.raises(IllegalActionError):
        raising.step(action)


@pytest.mark.parametrize("env_id", IDS)
def test_gym_view_takes_numpy_integers(env_id):
    env = gym.make(env_id).unwrapped
    _, info = env.reset(seed=1)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    for action in (np.int64(legal), np.array(legal)):
        env.reset(seed=1)
        assert not env.step(action)[4]["illegal_action"]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("seed", [1.5, 2.0, "7", -1, True, 1 + 0j])
def test_non_integer_seeds_are_refused(module, seed):
    env = module.raw_env()
    with pytest.raises(InvalidOptionError, match="seed"):
        env.reset(seed=seed)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", [1.5, "7", -1])
def test_gym_view_refuses_non_integer_seeds(env_id, seed):
    env = gym.make(env_id).unwrapped
    with pytest.raises((InvalidOptionError, gym.error.Error)):
        env.reset(seed=seed)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize("penalty", [math.nan, math.inf, -math.inf, "x"])
def test_nan_or_infinite_penalties_are_refused(env_id, vector, penalty):
    with pytest.raises(InvalidOptionError, match="illegal_penalty"):
        if vector:
            gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                         illegal_penalty=penalty)
        else:
            gym.make(env_id, illegal_penalty=penalty)


@pytest.mark.parametrize("reward", [math.nan, math.inf])
def test_nan_illegal_reward_of_the_wrapper_is_refused(reward):
    from memtab_env.aec import StandardWrapper

    with pytest.raises(InvalidOptionError):
        StandardWrapper(memtab_v0.raw_env(), illegal_reward=reward)


@pytest.mark.parametrize("module", MODULES)
def test_calls_before_reset_name_the_problem(module):
    env = module.raw_env()
    for call in (lambda: env.step(0), lambda: env.last(), lambda: env.observe("player_0")):
        with pytest.raises(NotResetError, match=r"reset\(\)"):
            call()


@pytest.mark.parametrize("env_id", IDS)
def test_gym_step_before_reset_names_the_problem(env_id):
    env = gym.make(env_id).unwrapped
    with pytest.raises(NotResetError, match=r"reset\(\)"):
        env.step(0)


@pytest.mark.parametrize("module", MODULES)
def test_steps_after_the_game_name_the_problem(module):
    from memtab_env import agents
    from memtab_env.play import play_game

    env = module.raw_env()
    game = env.game_spec.name
    play_game(env, [agents.make("random", game=game) for _ in env.possible_agents], seed=2)
    assert not env.agents
    with pytest.raises(GameOverError, match=r"reset\(\)"):
        env.step(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        genv = gym.make(IDS[MODULES.index(module)]).unwrapped
    genv.reset(seed=2)
    done = False
    while not done:
        mask = genv.action_masks()
        _, _, term, trunc, _ = genv.step(int(np.flatnonzero(mask)[0]))
        done = term or trunc
    with pytest.raises(gym.error.ResetNeeded):
        genv.step(0)


def test_window_has_a_documented_upper_bound():
    assert parse_memory(f"window:{MAX_WINDOW}").param == MAX_WINDOW
    for bad in (f"window:{MAX_WINDOW + 1}", "window:-1", "window:1e9", "window:" + "9" * 5000):
        with pytest.raises(InvalidOptionError, match="window"):
            parse_memory(bad)
    assert str(MAX_WINDOW) in (memtab_env.memory.__doc__ or "").replace("_", "")
