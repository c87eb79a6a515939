"""The Gymnasium single-agent view of MemTab."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import memtab_env  # noqa: F401
from memtab_env.errors import IllegalActionError, InvalidOptionError
from memtab_env.record import replay


class FirstLegal:
    """A scripted opponent: the lowest legal position."""

    name = "first-legal"

    def __init__(self):
        self.seen = 0

    def act(self, observation):
        self.seen += 1
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_illegal_action_penalty_leaves_the_game_unchanged():
    env = gym.make("MemTab-v0", opponents="random", illegal_penalty=-0.5)
    obs, info = env.reset(seed=0)
    obs, r, term, trunc, info = env.step(3)
    before = env.unwrapped.aec.game_state.copy()
    for bad in (3, 28, -1):
        obs2, r, term, trunc, info = env.step(bad)
        assert r == -0.5 and info["illegal_action"] and not term and not trunc
        assert env.unwrapped.aec.game_state == before
        assert np.array_equal(obs2, obs)
    obs, r, term, trunc, info = env.step(4)
    assert not info["illegal_action"]


def test_illegal_action_can_raise():
    env = gym.make("MemTab-v0", illegal_action="raise")
    env.reset(seed=0)
    env.step(3)
    with pytest.raises(IllegalActionError, match="already flipped this turn"):
        env.step(3)
    with pytest.raises(IllegalActionError, match=r"\[0, 27\]"):
        env.step(99)


def test_step_limit_truncates():
    env = gym.make("MemTab-v0", max_episode_steps=10)
    env.reset(seed=0)
    env.step(0)
    for _ in range(9):
        obs, r, term, trunc, info = env.step(0)  # always illegal now
    assert trunc and not term


def test_opponents_play_between_learner_steps_and_rewards_reach_the_learner():
    opp = FirstLegal()
    env = gym.make("MemTab-v0", opponents=opp, learner_seat=1)
    obs, info = env.reset(seed=5)
    assert opp.seen >= 3  # seat 0 moved first
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        total += r
        done = term or trunc
    rec = env.unwrapped.record()
    assert rec["learner_seat"] == 1 and rec["opponents"] == ["first-legal"]
    winners = rec["result"]["winners"]
    assert total == pytest.approx(rec["result"]["rewards"][1])
    assert (total > 0) == (winners == [1])
    replay(rec)


def test_learner_seat_random_covers_every_seat():
    env = gym.make("MemTab-v0", learner_seat="random", num_players=3)
    seats = {env.reset(seed=s)[1]["learner_seat"] for s in range(30)}
    assert seats == {0, 1, 2}


def test_one_opponent_per_seat_in_seat_order():
    a, b = FirstLegal(), FirstLegal()
    env = gym.make("MemTab-v0", num_players=3, opponents=[a, b], learner_seat=0)
    env.reset(seed=1)
    env.step(0)
    env.step(1)
    env.step(2)
    assert a.seen + b.seen > 0
    with pytest.raises(InvalidOptionError, match="2 other seat"):
        gym.make("MemTab-v0", num_players=3, opponents=[a])


@pytest.mark.parametrize("kwargs,msg", [
    ({"learner_seat": 2}, r"learner_seat must be 'random' or an integer in \[0, 1\]"),
    ({"obs_mode": "image"}, "obs_mode must be one of"),
    ({"illegal_action": "ignore"}, "illegal_action must be one of"),
    ({"opponents": 3}, "opponents must be an agent name"),
    ({"opponents": "nobody"}, "nobody"),
])
def test_bad_options(kwargs, msg):
    with pytest.raises((InvalidOptionError, ValueError, KeyError), match=msg):
        gym.make("MemTab-v0", **kwargs)


def test_action_masks_and_dict_observations():
    env = gym.make("MemTab-v0", obs_mode="dict", memory="none")
    obs, info = env.reset(seed=2)
    assert set(obs) == {"observation", "action_mask", "remembered_mask"}
    assert np.array_equal(env.unwrapped.action_masks(), obs["action_mask"].astype(bool))
    assert env.observation_space.contains(obs)


def test_same_seed_same_episode():
    def run(seed):
        env = gym.make("MemTab-v0", opponents="random", learner_seat="random")
        obs, info = env.reset(seed=seed)
        out = [obs]
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            out.append(obs)
            done = term or trunc
        return np.stack(out), env.unwrapped.record()["actions"]

    a, b = run(9), run(9)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]


def test_rgb_rendering_for_record_video():
    env = gym.make("MemTab-v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3


def test_reset_refuses_options_where_the_learner_never_plays():
    """A one-kind deck: the first player takes the only pair, so the learner in seat 1
    never gets a flip; reset says so instead of dealing forever."""
    env = gym.make("Pelmanism-v0", deck="pairs:1", learner_seat=1, opponents="greedy")
    with pytest.raises(InvalidOptionError, match="before the learner's first action"):
        env.reset(seed=0)
    _, info = gym.make("Pelmanism-v0", deck="pairs:1", learner_seat=0).reset(seed=0)
    assert info["redeals"] == 0


class _Stall:
    """Flips the two lowest legal positions: never a pair on the layout below."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_the_game_length_cap_truncates():
    """Pelmanism has no rule bound on its length: the AEC env truncates at the engine's
    maximum (800 flips for 4 cards) and the view returns truncated, not terminated."""
    env = gym.make("Pelmanism-v0", deck="pairs:2", opponents=[_Stall()])
    _, info = env.reset(seed=1, options={"layout": ["K00", "K01", "K00", "K01"]})
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        legal = np.flatnonzero(info["action_mask"])
        _, _, terminated, truncated, info = env.step(int(legal[0]))  # 0 then 1: no pair
        steps += 1
    assert truncated and not terminated
    assert steps == 400 < env.spec.max_episode_steps  # the AEC cap, not the TimeLimit
    assert len(env.unwrapped.record()["actions"]) == 800


@pytest.mark.parametrize("env_id,options", [("MemTab-v0", {"num_players": 3}),
                                            ("Pelmanism-v0", {"deck": "pairs:6"})])
def test_mask_only_opponents_play_as_through_observations(env_id, options):
    """The built-in random opponent is handed the legal mask instead of an observation
    (``mask_only``); it must make the same moves as through ``act(observation)``."""
    from memtab_env.agents.memtab_agents import RandomAgent

    class ThroughObservations(RandomAgent):
        mask_only = False
        calls = 0

        def act(self, observation):
            assert set(observation) == {"observation", "action_mask", "remembered_mask"}
            ThroughObservations.calls += 1
            return super().act(observation)

    assert RandomAgent.mask_only

    def run(opponents):
        env = gym.make(env_id, opponents=opponents, learner_seat="random", **options)
        records = []
        for episode in range(6):
            _, info = env.reset(seed=40 + episode)
            done = False
            while not done:
                _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
                done = term or trunc
            records.append(env.unwrapped.record()["actions"])
        return records

    n = options.get("num_players", 2)
    fast = run("random")
    slow = run([ThroughObservations() for _ in range(n - 1)])
    assert ThroughObservations.calls > 0 and fast == slow
