"""PettingZoo ``state()`` / ``state_space`` of every game (PettingZoo's state checks),
copies and pickles of running envs, and the Gymnasium view's ``illegal_action="terminate"``."""

from __future__ import annotations

import copy
import importlib
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test.state_test import test_state as pz_state_check
from pettingzoo.test.state_test import test_state_space as pz_state_space_check

import memtab_env  # noqa: F401 - registers the ids

GAMES = ["memtab", "pelmanism", "memory_board"]
IDS = {"memtab": "MemTab-v0", "pelmanism": "Pelmanism-v0", "memory_board": "MemoryBoard-v0"}


def module(game: str):
    return importlib.import_module(f"memtab_env.{game}_v0")


def play_first_legal(env, flips: int) -> None:
    for _ in range(flips):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_pettingzoo_state_checks(game: str, num_players: int) -> None:
    env = module(game).env(num_players=num_players)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning of the checks is a failure
        warnings.filterwarnings("ignore", message=".*Illegal move.*")
        pz_state_space_check(env)
        pz_state_check(env, num_cycles=100)
    assert env.state().dtype == np.int8 and env.state().shape == env.state_space.shape


@pytest.mark.parametrize("game", GAMES)
def test_state_is_the_full_information(game: str) -> None:
    """The deal block is the deal; the state is the same whoever is on turn and whatever
    the memory model, shows every face-down card, and changes with every flip."""
    envs = [module(game).raw_env(memory=m) for m in ("perfect", "none")]
    for e in envs:
        e.reset(seed=7)
    info = envs[0].game.info
    p, k = info.num_positions, info.num_kinds
    state = envs[0].state()
    deal = state[: p * k].reshape(p, k)
    assert (deal.sum(axis=1) == 1).all()
    np.testing.assert_array_equal(deal.argmax(axis=1), envs[0].game.dealt_kinds(envs[0].game_state))
    for _ in range(6):
        before = [e.state() for e in envs]
        np.testing.assert_array_equal(before[0], before[1])  # memory model: irrelevant
        obs = envs[0].observe(envs[0].agent_selection)
        action = int(np.flatnonzero(obs["action_mask"])[0])
        for e in envs:
            e.step(action)
        assert not np.array_equal(envs[0].state(), before[0])
    # every face-down card's kind is in the table block (seat 0's view, everything shown)
    enc, st = envs[0].encoder, envs[0].game_state
    views = enc.views(envs[0].state()[p * k:])
    shown = views["card"] if "card" in views else views["picture"]
    down = envs[0].game.face_down(st)
    np.testing.assert_array_equal(shown[down].argmax(axis=1), envs[0].game.dealt_kinds(st)[down])
    assert shown[down].sum() == down.sum()


def test_state_before_reset_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="call reset"):
        module("memtab").raw_env().state()


def test_state_through_the_wrapper_and_the_renamed_engine_state() -> None:
    env = module("memtab").env()
    env.reset(seed=0)
    assert callable(env.state) and env.state().shape == env.state_space.shape
    assert env.unwrapped.game_state is not None  # the engine's state, no longer `state`


# ---------------------------------------------------------------------------------------
# copies
# ---------------------------------------------------------------------------------------
def finish(env) -> tuple[list[int], dict]:
    """Play ``env`` to the end (last legal flip each time): the observation sums and result."""
    sums = []
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        sums.append(int(obs["observation"].astype(np.int64).sum()))
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    return sums, env.unwrapped.record()


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("wrapped", [True, False])
def test_copies_of_a_running_aec_env_keep_the_game(game: str, wrapped: bool) -> None:
    make = module(game).env if wrapped else module(game).raw_env
    env = make(num_players=3, memory="decay:0.3")
    env.reset(seed=5)
    play_first_legal(env, 7)
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    assert all(c.unwrapped.record() == env.unwrapped.record() for c in copies)
    reference = finish(env)
    for c in copies:
        assert finish(c) == reference


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_copies_of_a_running_gymnasium_env_keep_the_game(game: str, opponent: str) -> None:
    env = gym.make(IDS[game], opponents=opponent, learner_seat="random", memory="decay:0.2")
    _, info = env.reset(seed=2)
    for _ in range(3):
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    runs = []
    for e in (env, copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        i, seq = info, []
        while True:
            obs, reward, term, trunc, i = e.step(int(np.flatnonzero(i["action_mask"])[0]))
            seq.append((float(obs.sum()), reward))
            if term or trunc:
                break
        runs.append((seq, e.unwrapped.record()["actions"]))
    assert runs[0] == runs[1] == runs[2]


def test_a_copy_is_independent_of_its_original() -> None:
    env = module("memtab").raw_env()
    env.reset(seed=1)
    twin = copy.deepcopy(env)
    play_first_legal(env, 3)
    assert twin.unwrapped.record()["actions"] == []
    assert len(env.unwrapped.record()["actions"]) == 3


# ---------------------------------------------------------------------------------------
# illegal_action="terminate"
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_terminate_ends_the_episode_with_a_loss(game: str) -> None:
    env = gym.make(IDS[game], opponents="random", illegal_action="terminate", num_players=3)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0]) if (info["action_mask"] == 0).any() \
        else env.action_space.n  # out of range is illegal too
    obs, reward, term, trunc, info = env.step(illegal)
    assert (reward, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    seat = info["learner_seat"]
    assert info["winners"] == [p for p in range(3) if p != seat]
    record = env.unwrapped.record()
    assert record["result"]["over"] and record["result"]["illegal_action"]["player"] == seat
    assert record["result"]["winners"] == info["winners"]
    assert env.observation_space.contains(obs)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=1)  # and the next episode starts normally


def test_terminate_stops_an_unmasked_deterministic_policy_at_once() -> None:
    """SB3's evaluate_policy with a policy that always sends the same flip: each episode
    ends at its first illegal flip with -1 (with "penalty" it would loop to the step cap)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    class Constant:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.zeros(len(obs), dtype=np.int64), None

    env = Monitor(gym.make("MemTab-v0", opponents="random", illegal_action="terminate"))
    rewards, lengths = evaluate_policy(Constant(), env, n_eval_episodes=5, return_episode_rewards=True)
    assert all(r == -1.0 for r in rewards) and max(lengths) <= 2  # flip 0, then flip 0 again


def test_unknown_illegal_action_mode_lists_the_modes() -> None:
    modes = r"illegal_action must be one of \['penalty', 'raise', 'terminate'\]"
    with pytest.raises(ValueError, match=modes):
        gym.make("MemTab-v0", illegal_action="end")


# ---------------------------------------------------------------------------------------
# pictures
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_rgb_array_can_draw_position_numbers(game: str) -> None:
    plain = module(game).raw_env(render_mode="rgb_array")
    labelled = module(game).raw_env(render_mode="rgb_array", render_positions=True)
    for e in (plain, labelled):
        e.reset(seed=0)
    a, b = plain.render(), labelled.render()
    assert a.shape == b.shape and a.dtype == b.dtype == np.uint8
    boxes = labelled.renderer.position_boxes()
    assert len(boxes) == labelled.game.info.num_positions
    for x0, y0, _, _ in boxes[:3] + boxes[-2:]:  # a tag in every box's corner, nothing else moved
        tag = (slice(y0 + 2, y0 + 14), slice(x0 + 2, x0 + 16))
        assert not np.array_equal(a[tag], b[tag])
    mask = np.ones(a.shape[:2], bool)
    for x0, y0, _, _ in boxes:
        mask[y0 + 2 : y0 + 15, x0 + 2 : x0 + 30] = False
    np.testing.assert_array_equal(a[mask], b[mask])


@pytest.mark.parametrize("game", GAMES)
def test_human_render_prints_each_frame_once(game: str, capsys) -> None:
    env = gym.make(IDS[game], opponents="random", render_mode="human")
    _, info = env.reset(seed=0)
    capsys.readouterr()
    aec = env.unwrapped.aec
    for _ in range(5):
        before = len(aec._transitions)
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        flips = len(aec._transitions) - before  # the learner's and the opponents'
        frames = capsys.readouterr().out.count(aec.renderer.status_line(aec.game_state).split(":")[0][:4])
        assert frames == flips, (frames, flips)
        if term or trunc:
            break


def test_the_gymnasium_frame_shows_the_opponents_flips() -> None:
    env = gym.make("MemTab-v0", opponents="greedy", render_mode="rgb_array", num_players=3)
    _, info = env.reset(seed=4)
    sizes, noted = set(), 0
    for _ in range(12):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        frame = env.render()
        sizes.add(frame.shape)
        notes = env.unwrapped._notes
        assert notes[0].startswith(f"player_{info['learner_seat']} flips")
        noted += sum(1 for n in notes[1:] if not n.startswith(f"player_{info['learner_seat']} "))
        if term or trunc:
            break
    assert len(sizes) == 1 and noted > 0  # one frame size (a video needs it); opponents drawn


def test_record_video_of_the_gymnasium_view(tmp_path) -> None:
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gym.make("MemTab-v0", opponents="random", render_mode="rgb_array"),
                      str(tmp_path), episode_trigger=lambda e: True, disable_logger=True)
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    env.close()
    (video,) = tmp_path.glob("*.mp4")
    assert video.stat().st_size > 1000
