"""The MemTab AEC env: bookkeeping, bad input, seeding, records, rendering."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from memtab_env import memtab_v0
from memtab_env.errors import IllegalActionError, InvalidOptionError, RecordError
from memtab_env.record import read_records, replay, write_records
from tests.helpers import layout_with


def play_random(env, rng, stop_after=None):
    steps = 0
    for _agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
        if stop_after is not None and steps >= stop_after:
            return


def env_fingerprint(env):
    u = env.unwrapped
    st = u.game_state
    return (st.status.tobytes(), st.owner.tobytes(), st.current, st.flip,
            u.agent_selection, dict(u._cumulative_rewards), len(u._transitions),
            u.memory.reveal_time.tobytes())


@pytest.mark.parametrize("kwargs,msg", [
    ({"num_players": 7}, r"num_players must be in \[1, 6\]"),
    ({"memory": "photographic"}, "unknown memory model"),
    ({"reward": "points"}, r"reward must be one of \['win', 'score', 'turns'\]"),
    ({"render_mode": "video"}, "render_mode must be None or one of"),
    ({"numplayers": 2}, r"unknown option\(s\) \['numplayers'\]"),
    ({"first_player": -1}, r"first_player must be in \[0, 1\]"),
])
def test_bad_options_are_rejected_clearly(kwargs, msg):
    with pytest.raises(InvalidOptionError, match=msg):
        memtab_v0.env(**kwargs)


@pytest.mark.parametrize("action", [5, 28, -1, None, 2.0, "5"])
def test_raw_env_raises_on_illegal_actions_and_changes_nothing(action):
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=1)
    env.step(5)
    before = env_fingerprint(env)
    with pytest.raises(IllegalActionError):
        env.step(action)
    assert env_fingerprint(env) == before
    env.step(6)  # the game goes on


def test_same_agent_acts_again_and_rewards_accumulate_correctly():
    env = memtab_v0.raw_env(num_players=2, reward="score")
    env.reset(options={"layout": layout_with(p0="R4", p1="R4", p2="R7", p3="B2", p4="B5",
                                             p5="R3")})
    assert env.agent_selection == "player_0"
    env.step(0)
    env.step(1)  # pair: both leave
    env.step(2)  # R7 to the tableau: +7, extra turn
    assert env.agent_selection == "player_0"
    assert env.rewards == {"player_0": 7.0, "player_1": 0.0}
    assert env._cumulative_rewards["player_0"] == 7.0
    env.step(3)  # the same agent acts again: its cumulative reward restarts
    assert env._cumulative_rewards["player_0"] == 0.0
    env.step(4)
    env.step(5)
    assert env.agent_selection == "player_1"
    assert env._cumulative_rewards["player_0"] == 3.0


def test_win_rewards_are_terminal_and_zero_sum():
    env = memtab_v0.env(num_players=3)
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        finals = {}
        for agent in env.agent_iter():
            obs, rew, term, trunc, _ = env.last()
            if term or trunc:
                finals[agent] = rew
                env.step(None)
            else:
                assert rew == 0.0
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(finals.values()) == pytest.approx(0.0)
        winners = env.unwrapped.record()["result"]["winners"]
        for p in range(3):
            want = 0.0 if len(winners) == 3 else (1 / len(winners) if p in winners
                                                   else -1 / (3 - len(winners)))
            assert finals[f"player_{p}"] == pytest.approx(want)


def test_seeding_reproduces_deals_and_seedless_resets_follow_the_stream():
    a, b = memtab_v0.raw_env(), memtab_v0.raw_env()
    a.reset(seed=11)
    b.reset(seed=11)
    assert a.record()["layout"] == b.record()["layout"]
    a.reset()
    b.reset()
    assert a.record()["layout"] == b.record()["layout"]
    # every record's seed reproduces its own deal
    c = memtab_v0.raw_env()
    c.reset(seed=a.record()["seed"])
    assert c.record()["layout"] == a.record()["layout"]


def test_action_mask_is_zero_for_agents_not_on_turn_and_fresh_each_call():
    env = memtab_v0.raw_env(num_players=3)
    env.reset(seed=0)
    o1 = env.observe("player_0")
    o2 = env.observe("player_0")
    assert o1["action_mask"].sum() == 28 and o1["observation"] is not o2["observation"]
    assert env.observe("player_1")["action_mask"].sum() == 0


def test_observation_shows_remembered_cards_by_memory_model():
    for memory, expect in [("perfect", True), ("none", True), ("window:1", False)]:
        env = memtab_v0.raw_env(num_players=2, memory=memory)
        env.reset(options={"layout": layout_with(p0="R2", p1="B3", p2="R5", p3="R6")})
        env.step(0)
        env.step(1)
        env.step(2)  # player_0's turn ends; 0 and 1 back face down
        obs = env.observe("player_1")
        assert bool(obs["remembered_mask"][0]) == expect, memory
        card = env.encoder.views(obs["observation"])["card"]
        assert bool(card[0, 0]) == expect  # R2 is kind 0
    env = memtab_v0.raw_env(num_players=2, memory="none")
    env.reset(options={"layout": layout_with(p0="R2", p1="B3", p2="R5", p3="R6")})
    for a in (0, 1, 2):
        env.step(a)
    # under "none" player_0 forgets its own flips once they are face down again
    assert env.observe("player_0")["remembered_mask"].sum() == 0


@pytest.mark.parametrize("num_players", [1, 2, 3, 6])
@pytest.mark.parametrize("memory", ["perfect", "decay:0.5"])
def test_records_replay_and_roundtrip(tmp_path, num_players, memory):
    env = memtab_v0.env(num_players=num_players, memory=memory)
    rng = np.random.default_rng(num_players)
    recs = []
    for seed in range(15):
        env.reset(seed=seed)
        play_random(env, rng)
        rec = env.unwrapped.record()
        assert rec["result"]["over"]
        replay(rec)
        recs.append(rec)
    write_records(recs, tmp_path / "games.jsonl")
    write_records(recs, tmp_path / "folder")
    assert list(read_records(tmp_path / "games.jsonl")) == recs
    assert list(read_records(tmp_path / "folder")) == recs
    assert json.loads(json.dumps(recs[0])) == recs[0]


def test_record_of_a_game_in_progress_replays():
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=4)
    play_random(env, np.random.default_rng(0), stop_after=10)
    rec = env.record()
    assert not rec["result"]["over"] and len(rec["actions"]) == 10
    game, state = replay(rec)
    assert np.array_equal(state.status, env.game_state.status)


def _finished_record():
    env = memtab_v0.env(num_players=2)
    env.reset(seed=21)
    play_random(env, np.random.default_rng(21))
    return env.unwrapped.record()


@pytest.mark.parametrize("tamper,msg", [
    (lambda r: r["actions"][3].update(card="R9" if r["actions"][3]["card"] != "R9" else "R8"),
     "action 3.*recorded card"),
    (lambda r: r["actions"][4].update(player=1 - r["actions"][4]["player"]), "action 4.*on turn"),
    (lambda r: r["actions"].__setitem__(1, dict(r["actions"][1], action=r["actions"][0]["action"])),
     "action 1.*not legal"),
    (lambda r: r["result"].update(winners=[0, 1] if r["result"]["winners"] != [0, 1] else [0]),
     "result.winners"),
    (lambda r: r["result"].update(scores=[99, 0]), "result.scores"),
    (lambda r: r["result"].update(rewards=[]), r"result.rewards: expected one entry per seat \(2\), got 0"),
    (lambda r: r["result"].update(scores=[0, 0, 0]), r"result.scores: expected one entry per seat"),
    (lambda r: r.update(layout=r["layout"][::-1]), "layout does not match the deal of seed"),
    (lambda r: r.update(env_id="MemTab-v1"), "records of other versions do not replay"),
    (lambda r: r.update(format="memtab-record/0"), "unknown record format"),
    (lambda r: r.pop("actions"), "missing field"),
    (lambda r: r["actions"].pop(), "result.over"),
    (lambda r: r.update(layout=["R2"] * 28, deal="layout"), "exactly twice"),
])
def test_tampered_records_are_rejected_saying_where(tamper, msg):
    rec = _finished_record()
    replay(copy.deepcopy(rec))
    bad = copy.deepcopy(rec)
    tamper(bad)
    with pytest.raises(RecordError, match=msg):
        replay(bad)


def test_render_modes():
    env = memtab_v0.raw_env(num_players=2, render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    text = env.render()
    assert isinstance(text, str) and "player_0" in text and "flip 2 of 3" in text
    assert text.count("##") == 27
    env = memtab_v0.raw_env(num_players=3, render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    env.step(0)
    assert not np.array_equal(img, env.render())  # the flipped card is drawn


def test_turns_reward_counts_turns():
    env = memtab_v0.raw_env(num_players=1, reward="turns")
    env.reset(seed=0)
    total, turns = 0.0, 0
    while not env.terminations["player_0"]:
        flip = env.game_state.flip
        env.step(env.legal_actions()[0])
        total += env.rewards["player_0"]
        turns += flip == 2
    assert total == -turns and turns == env.game_state.turn - 1
