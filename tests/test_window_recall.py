"""An agent's own window of the latest reveals (:class:`memtab_env.observations.recall.WindowRecall`):
fed a ``none`` (or ``perfect``) env's observations and every flip's reveals, it rebuilds the
``window:k`` env's observations byte for byte, for every seat of MemTab and Pelmanism; a
game loop that does not report the reveals is refused; ``play_game`` and the audit's
replay report them; a policy trained under ``window:4`` plays with it on ``none`` as it
plays on its own env."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memtab_env.observations.recall import WindowRecall
from memtab_env.play import make_raw_env, play_game
from memtab_env.registry import make_encoder
from memtab_env.study.grid import StudyError
from memtab_env.study.scores import final_agent
from tests.test_recall import CONFIGS, paired_games

ROOT = Path(__file__).resolve().parents[1]
WINDOW_POLICY = ROOT / "results/grid/memtab-2p-none-grid/window4__GRU__s4.zip"


@pytest.mark.parametrize(("game", "options"), CONFIGS)
@pytest.mark.parametrize("memory", ["none", "perfect"])
@pytest.mark.parametrize("window", [0, 1, 4, 9])
def test_window_recall_is_the_window_observation_byte_for_byte(game, options, memory, window):
    encoder = make_encoder(game, **options)
    turns_checked = changed = 0
    for seed in range(4):
        recalls = {seat: WindowRecall(encoder, window) for seat in range(options["num_players"])}
        for seat, obs_dict, windowed_dict in paired_games(game, options, memory, seed, f"window:{window}",
                                                          recalls):
            obs, windowed = obs_dict["observation"], windowed_dict["observation"]
            rebuilt = recalls[seat].observe(obs)
            np.testing.assert_array_equal(rebuilt, windowed)
            assert rebuilt.dtype == obs.dtype
            turns_checked += 1
            changed += int((rebuilt != obs).sum())
    assert turns_checked > 40
    if not (options["num_players"] == 1 and memory == "none" and window == 1):  # the same model there
        assert changed > 0  # the window hid or restored cards: the test can tell


def test_a_loop_that_does_not_report_reveals_is_refused():
    game, options = "memtab", {"num_players": 2}
    recall = WindowRecall(make_encoder(game, **options), 4)
    with pytest.raises(ValueError, match=r"is shown but no reveal of it was watched: the game loop must "
                                         r"call watch\(revealed\)"):
        for _seat, obs, _ in paired_games(game, options, "none", 0, "window:4"):
            recall.observe(obs["observation"])


@pytest.mark.parametrize("window", [-1, True, 2.5, "4", 1_000_001])
def test_a_bad_window_is_refused_naming_what_is_allowed(window):
    with pytest.raises(ValueError, match=r"window must be an integer in \[0, 1000000\], got"):
        WindowRecall(make_encoder("memtab", num_players=2), window)


def test_reset_forgets_the_reveals_of_the_last_game():
    recall = WindowRecall(make_encoder("memtab", num_players=2), 4)
    recall.watch((3, 5))
    assert recall.memory.time == 2 and recall.memory.reveal_time[5] == 2
    recall.reset()
    assert recall.memory.time == 0 and not recall.memory.reveal_time.any() and (recall.seen == -1).all()


class _Watcher:
    """A random player that records every ``watch`` call."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, ...]] = []
        self.acted: list[int] = []
        self._rng = np.random.default_rng(0)

    def act(self, obs):
        action = int(self._rng.choice(np.flatnonzero(obs["action_mask"])))
        self.acted.append(action)
        return action

    def watch(self, revealed):
        self.seen.append(tuple(revealed))


def test_play_game_tells_every_watcher_every_flip_once():
    watcher, other = _Watcher(), _Watcher()
    env = make_raw_env("memtab", num_players=3)
    record = play_game(env, [watcher, other, watcher], seed=5)  # one watcher in two seats: told once
    flips = [(a["action"],) for a in record["actions"]]
    assert watcher.seen == other.seen == flips


@pytest.mark.parametrize(("memory", "track", "expected"), [
    ("window:4", "memtab-2p-none", {"window": 4}),
    ("window:0", "memtab-2p-none", {"window": 0}),
    ("window:4", "memtab-2p", {"window": 4}),
])
def test_a_window_cell_plays_a_track_with_its_window(memory, track, expected):
    assert final_agent(memory, track) == expected


def test_a_cell_whose_memory_cannot_be_rebuilt_is_refused():
    with pytest.raises(StudyError, match=r"memory decay:0.2 cannot be scored on track memtab-2p-none"):
        final_agent("decay:0.2", "memtab-2p-none")


def test_a_window_policy_plays_on_none_with_its_window_as_on_its_own_env():
    """A committed MemTab grid policy trained under ``window:4``, given ``window=4`` and
    played through ``play_game`` on a ``none`` env, chooses every flip as it does with no
    help on a ``window:4`` env; without the window it plays other games; the audit's replay
    of its record reproduces it."""
    pytest.importorskip("jax")
    from memtab_env.agents import make

    from memtab_env.protocol.reproduce import reproduce_game

    differs = 0
    for seed in range(3):
        seats = [make(str(WINDOW_POLICY), window=4), make("greedy")]
        record = play_game(make_raw_env("memtab", num_players=2, memory="none"), seats, seed=seed)
        own = [make(str(WINDOW_POLICY)), make("greedy")]
        assert play_game(make_raw_env("memtab", num_players=2, memory="window:4"), own,
                         seed=seed)["actions"] == record["actions"]
        blind = [make(str(WINDOW_POLICY)), make("greedy")]
        differs += play_game(make_raw_env("memtab", num_players=2, memory="none"), blind,
                             seed=seed)["actions"] != record["actions"]
        replay = [make(str(WINDOW_POLICY), window=4), make("greedy")]
        assert reproduce_game(record, replay) is None
    assert differs > 0


def test_window_and_recall_exclude_each_other():
    pytest.importorskip("jax")
    from memtab_env.agents import make

    from memtab_env.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="exclude each other: give one"):
        make(str(WINDOW_POLICY), recall=True, window=4)
    with pytest.raises(InvalidOptionError, match=r"window must be an integer in \[0, 1000000\], got -2"):
        make(str(WINDOW_POLICY), window=-2)


def test_the_gymnasium_view_tells_its_opponents_every_flip():
    import gymnasium as gym

    watcher = _Watcher()
    env = gym.make("MemTab-v0", opponents=watcher, disable_env_checker=True)
    _, info = env.reset(seed=3)
    rng, done, learner_flips = np.random.default_rng(1), False, 0
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        learner_flips += 1
        done = terminated or truncated
    record = env.unwrapped.aec.record()
    assert watcher.seen == [(a["action"],) for a in record["actions"]]
    assert len(watcher.acted) + learner_flips == len(record["actions"])
