"""``env()``'s one-layer StandardWrapper behaves exactly like PettingZoo's standard chain
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw, -1)))``."""

from __future__ import annotations

import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.utils import wrappers

from memtab_env import memtab_v0


def pettingzoo_chain(**kwargs):
    env = memtab_v0.raw_env(**kwargs)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def outcome(env, action):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.step(action)
        return "ok"
    except AssertionError:
        return "AssertionError"
    except ValueError:
        return "ValueError"


def snapshot(env):
    if not env.agents:
        return ("no agents",)
    agent = env.agent_selection
    obs, reward, term, trunc, info = env.last()
    return (agent, tuple(env.agents), reward, term, trunc, dict(env.rewards),
            dict(env._cumulative_rewards), obs["observation"].tobytes(), obs["action_mask"].tobytes())


@pytest.mark.skipif(
    tuple(int(x) for x in pettingzoo.__version__.split(".")[:2]) < (1, 25),
    reason="PettingZoo's TerminateIllegalWrapper before 1.25 hands the turn on differently after an "
           "illegal move; env() follows 1.25 and later")
@pytest.mark.parametrize("num_players", [1, 2, 3])
def test_same_behaviour_as_the_pettingzoo_chain(num_players):
    rng = np.random.default_rng(num_players)
    for game in range(150):
        a, b = memtab_v0.env(num_players=num_players), pettingzoo_chain(num_players=num_players)
        a.reset(seed=game)
        b.reset(seed=game)
        for _ in range(120):
            assert snapshot(a) == snapshot(b)
            if not a.agents:
                break
            mask = a.last()[0]["action_mask"]
            u = rng.random()
            if u < 0.03:
                action = int(rng.integers(-3, 40))  # maybe out of bounds
            elif u < 0.06:
                action = int(rng.integers(28))  # maybe illegal
            elif u < 0.07:
                action = None
            elif mask.any():
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = None
            assert outcome(a, action) == outcome(b, action)
        assert snapshot(a) == snapshot(b)


def test_order_enforcing_before_reset():
    env = memtab_v0.env()
    with pytest.raises(AttributeError):
        _ = env.agent_selection
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)


def test_illegal_action_ends_the_game_with_a_loss_and_is_recorded():
    env = memtab_v0.env(num_players=2)
    env.reset(seed=3)
    env.step(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(5)  # flipped already this turn: illegal
    assert all(env.terminations.values())
    assert env._cumulative_rewards == {"player_0": -1.0, "player_1": 0.0}
    rec = env.unwrapped.record()
    assert rec["result"]["over"] and rec["result"]["illegal_action"] == {"player": 0, "action": 5}
    assert rec["result"]["winners"] == [1]
    from memtab_env.record import replay

    replay(rec)


def test_out_of_bounds_error_names_the_allowed_range():
    env = memtab_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError, match=r"\[0, 27\]"):
        env.step(28)
    assert env.agents and not any(env.terminations.values())
