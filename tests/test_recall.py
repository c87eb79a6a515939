"""An agent's own perfect record (:class:`memtab_env.observations.recall.PerfectRecall`):
under memory ``none`` the observations it rebuilds are the ``perfect`` env's, byte for
byte, for every seat of MemTab and Pelmanism; under other models they keep every card that
was shown and add none that was not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memtab_env.observations.recall import PerfectRecall
from memtab_env.play import make_raw_env, turns
from memtab_env.registry import make_encoder

CONFIGS = [
    ("memtab", {"num_players": 2}),
    ("memtab", {"num_players": 3}),
    ("pelmanism", {"num_players": 1, "deck": "pairs:6"}),
    ("pelmanism", {"num_players": 2, "deck": "standard"}),
    ("pelmanism", {"num_players": 3, "deck": "quartets:4"}),
]


def paired_games(game: str, options: dict, memory: str, seed: int, twin_memory: str = "perfect",
                 watchers: dict | None = None):
    """Yield ``(seat, observation dict under memory, observation dict under twin_memory)``
    at every turn of one uniformly random game played in both envs from the same deal;
    after every step each of ``watchers`` (a dict, which the caller may fill as the game
    goes) watches the step's reveals."""
    env = make_raw_env(game, **options, memory=memory)
    twin = make_raw_env(game, **options, memory=twin_memory)
    env.reset(seed=seed)
    twin.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for (_, seat, obs), (_, twin_seat, twin_obs) in zip(turns(env), turns(twin), strict=True):
        assert seat == twin_seat
        np.testing.assert_array_equal(obs["action_mask"], twin_obs["action_mask"])
        yield seat, obs, twin_obs
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        twin.step(action)
        assert env.last_revealed() == twin.last_revealed() == (action,)
        for watcher in (watchers or {}).values():
            watcher.watch(env.last_revealed())


@pytest.mark.parametrize(("game", "options"), CONFIGS)
def test_recall_under_none_is_the_perfect_observation_byte_for_byte(game, options):
    encoder = make_encoder(game, **options)
    turns_checked = 0
    filled = 0
    for seed in range(6):
        recalls = {}
        for seat, obs_dict, perfect_dict in paired_games(game, options, "none", seed):
            obs, perfect = obs_dict["observation"], perfect_dict["observation"]
            recall = recalls.setdefault(seat, PerfectRecall(encoder))
            rebuilt = recall.observe(obs)
            np.testing.assert_array_equal(rebuilt, perfect)
            assert rebuilt.dtype == obs.dtype
            turns_checked += 1
            filled += int((rebuilt != obs).sum())
    assert turns_checked > 50
    assert filled > 0  # the none observations did forget cards that recall restored


@pytest.mark.parametrize("memory", ["window:2", "decay:0.5"])
def test_recall_keeps_what_was_shown_and_invents_nothing(memory):
    game, options = "memtab", {"num_players": 2}
    encoder = make_encoder(game, **options)
    lo, hi = encoder.offsets["card"]
    added = 0
    for seed in range(4):
        recalls = {}
        for seat, obs_dict, perfect_dict in paired_games(game, options, memory, seed):
            obs, perfect = obs_dict["observation"], perfect_dict["observation"]
            rebuilt = recalls.setdefault(seat, PerfectRecall(encoder)).observe(obs)
            assert np.all(rebuilt >= obs)  # nothing shown is dropped
            assert np.all(rebuilt <= perfect)  # nothing is shown that perfect would not show
            np.testing.assert_array_equal(np.delete(rebuilt, np.s_[lo:hi]), np.delete(obs, np.s_[lo:hi]))
            added += int((rebuilt != obs).sum())
    assert added > 0


def test_reset_forgets_the_last_game():
    encoder = make_encoder("pelmanism", num_players=1, deck="pairs:6")
    recall = PerfectRecall(encoder)
    for _, obs, _ in paired_games("pelmanism", {"num_players": 1, "deck": "pairs:6"}, "none", 0):
        recall.observe(obs["observation"])
    assert (recall.seen >= 0).any()
    recall.reset()
    assert (recall.seen == -1).all()


def test_bad_input_is_refused_with_what_was_expected():
    recall = PerfectRecall(make_encoder("memtab", num_players=2))
    with pytest.raises(ValueError, match=r"an observation of shape \(539,\) was expected, got \(538,\)"):
        recall.observe(np.zeros(538, np.int8))
    with pytest.raises(ValueError, match="needs an observation with 'status' and 'card' fields; Memory"):
        PerfectRecall(make_encoder("memory_board"))


REFERENCE = Path(__file__).resolve().parents[1] / "results/study/memtab-2p-none/perfect__MLP__s0.zip"


def test_a_perfect_memory_policy_with_recall_plays_under_none_as_it_plays_under_perfect():
    """The committed study's perfect-memory reference (a JAX checkpoint) with ``recall``
    in a ``none`` env chooses every flip as it does without recall in the ``perfect`` env,
    and without recall it plays other flips there (it is blind)."""
    pytest.importorskip("jax")
    from memtab_env.agents import make

    games, blind_differs = 0, False
    for seed in range(3):
        with_recall = make(str(REFERENCE), recall=True)
        plain = make(str(REFERENCE))
        blind = make(str(REFERENCE))
        for agent in (with_recall, plain, blind):
            agent.reset(seed=seed)
        for seat, obs, perfect in paired_games("memtab", {"num_players": 2}, "none", seed):
            if seat != 0:
                continue
            action = with_recall.act(obs)
            assert action == plain.act(perfect)
            if blind.act(obs) != action:
                blind_differs = True
        games += 1
    assert games == 3 and blind_differs

