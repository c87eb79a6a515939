"""Every game's batched engine is its AEC env, step for step.

``BatchedGames.reset(seed=s)`` against B ``raw_env`` AEC envs, game ``i`` reset with
``seed=s + i`` (and plain ``reset()`` after each end, as the engine's auto-reset), both
sent the engine's ``random_actions`` (now and then the ``greedy`` ones where the engine
has them): the observation of the seat on turn, the action mask, every seat's reward,
termination, truncation and final scores and winners must be equal after every step,
under every memory model and reward scheme, 1 to 3 players. The engine's loops are the
shared ones of :mod:`memtab_env.vector.row_loops`; :func:`compare_engine` is what
``tests/test_fourth_game.py`` runs for the test-only game too.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from memtab_env.errors import IllegalActionError
from memtab_env.registry import GAMES, load
from tests.test_batched_equals_scalar import GAME_OPTIONS, MEMORIES, REWARDS


def compare_engine(name: str, num_envs: int, steps: int, seed: int, memory: str, reward: str,
                   **options: Any) -> int:
    """Step the engine and the AEC envs side by side; returns the games that ended."""
    spec = GAMES[name]
    eng = load(spec.batched_engine)(num_envs, memory=memory, reward=reward, **options)
    aec_module = importlib.import_module(spec.aec_module)
    envs = [aec_module.raw_env(memory=memory, reward=reward, **options) for _ in range(num_envs)]
    eng.reset(seed=seed)
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    agents = envs[0].possible_agents
    rng = np.random.default_rng(seed)
    greedy = getattr(eng, "greedy_actions", None)
    ended = 0
    for t in range(steps):
        obs, masks = eng.observations(), eng.action_masks()
        for i, env in enumerate(envs):
            where = f"step {t}, game {i}"
            o = env.observe(env.agent_selection)
            np.testing.assert_array_equal(obs[i], o["observation"], err_msg=where)
            np.testing.assert_array_equal(masks[i], env.game.legal_mask(env.game_state),
                                          err_msg=where)
        actions = (greedy if greedy is not None and rng.random() < 0.3 else eng.random_actions)()
        out = eng.step(actions)
        rewards, terminated = out[0], out[1]
        truncated = out[2] if len(out) > 2 else np.zeros(num_envs, bool)
        for i, env in enumerate(envs):
            where = f"step {t}, game {i}"
            env.step(int(actions[i]))
            np.testing.assert_array_equal(rewards[i], [env.rewards[a] for a in agents],
                                          err_msg=where)
            assert terminated[i] == env.terminations[agents[0]], where
            assert truncated[i] == env.truncations[agents[0]], where
            if terminated[i] or truncated[i]:
                ended += 1
                scores = env.game.scores(env.game_state)
                assert eng.final_scores[i].tolist() == scores.tolist(), where
                if terminated[i]:
                    winners = env.game.winners(env.game_state)
                    assert np.flatnonzero(eng.final_winners[i]).tolist() == winners, where
                env.reset()
    return ended


def _cases() -> list[Any]:
    cases = []
    for name in GAMES:
        for k, memory in enumerate(MEMORIES):
            for n in (1, 2, 3):
                cases.append(pytest.param(name, memory, REWARDS[(k + n) % len(REWARDS)], n,
                                          id=f"{name}-{memory}-{n}p"))
    return cases


@pytest.mark.parametrize(("name", "memory", "reward", "num_players"), _cases())
def test_batched_engine_equals_aec(name: str, memory: str, reward: str, num_players: int) -> None:
    if GAMES[name].batched_engine is None:
        pytest.skip(f"{name} has no batched engine")
    options = dict(GAME_OPTIONS[name], num_players=num_players)
    assert compare_engine(name, 3, 250, 11, memory, reward, **options) > 0


@pytest.mark.parametrize("name", sorted(GAMES))
def test_an_illegal_action_changes_no_game(name: str) -> None:
    eng = load(GAMES[name].batched_engine)(3, **GAME_OPTIONS[name])
    eng.reset(seed=5)
    actions = eng.random_actions()  # draws from the games' own streams
    before = eng.state.copy(), eng.rng.copy()
    bad = np.flatnonzero(eng.action_masks()[1] == 0)
    actions[1] = bad[0] if bad.size else eng.action_masks().shape[1]
    with pytest.raises(IllegalActionError, match=r"game 1: cannot .* No game was changed"):
        eng.step(actions)
    np.testing.assert_array_equal(eng.state, before[0])
    np.testing.assert_array_equal(eng.rng, before[1])
