"""``MemTabVectorEnv``: the single-agent view batched, checked against the scalar view.

With ``greedy`` opponents and a fixed learner seat every episode of the vector env is the
scalar ``gymnasium.make("MemTab-v0")`` episode with the same seed, flip for flip: same
observations, masks, rewards, terminations, truncations (``TimeLimit``), illegal-action
penalties and final observations, across auto-resets. (Every memory model, opponent and
seat: ``tests/test_batched_equals_scalar.py``.)
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import memtab_env  # noqa: F401 - registers MemTab-v0
from memtab_env.errors import IllegalActionError, InvalidOptionError, MemTabError
from memtab_env.games.memtab.rules import NUM_POSITIONS
from memtab_env.vector import VECTOR_ENTRY_POINT, MemTabVectorEnv


def _actions(masks: np.ndarray, rng: np.random.Generator, illegal_rate: float) -> np.ndarray:
    """A random legal flip per env, now and then an illegal one."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        if rng.random() < illegal_rate:
            out[i] = rng.choice(np.flatnonzero(m == 0)) if (m == 0).any() else 28
        else:
            out[i] = rng.choice(np.flatnonzero(m))
    return out


@pytest.mark.parametrize(
    ("num_players", "seat", "memory", "reward"),
    [
        (2, 0, "perfect", "win"),
        (2, 1, "none", "score"),
        (3, 2, "none", "win"),
        (4, 1, "perfect", "turns"),
        (1, 0, "perfect", "score"),
    ],
)
def test_matches_scalar_view(num_players: int, seat: int, memory: str, reward: str) -> None:
    b, seed, limit = 6, 31, 20
    opts = dict(
        opponents="greedy", learner_seat=seat, memory=memory, reward=reward,
        num_players=num_players,
    )  # fmt: skip
    venv = MemTabVectorEnv(b, max_episode_steps=limit, **opts)
    envs = [gymnasium.make("MemTab-v0", max_episode_steps=limit, **opts) for _ in range(b)]
    obs, info = venv.reset(seed=seed)
    for i, env in enumerate(envs):
        o, inf = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
        assert info["learner_seat"][i] == seat
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(120):
        actions = _actions(venv.action_masks(), rng, 0.08)
        obs, rew, term, trunc, info = venv.step(actions)
        for i, env in enumerate(envs):
            o, r, te, tr, inf = env.step(int(actions[i]))
            assert (r, te, tr) == (rew[i], term[i], trunc[i]), f"env {i}"
            assert inf["illegal_action"] == info["illegal_action"][i]
            if te or tr:
                episodes += 1
                np.testing.assert_array_equal(info["final_obs"][i], o)
                assert info["_final_obs"][i] and info["final_info"]["_scores"][i]
                flips = len(env.unwrapped.aec._transitions)
                assert info["final_info"]["flips"][i] == flips
                if te:
                    assert info["final_info"]["scores"][i].tolist() == inf["scores"]
                    winners = np.flatnonzero(info["final_info"]["winners"][i]).tolist()
                    assert winners == inf["winners"]
                o, inf = env.reset()
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
            np.testing.assert_array_equal(venv.action_masks()[i], env.unwrapped.action_masks())
        np.testing.assert_array_equal(venv.game_seeds, [e.unwrapped.aec.game_seed for e in envs])
    assert episodes >= b


def test_autoreset_info_layout() -> None:
    venv = MemTabVectorEnv(8, opponents="random", max_episode_steps=5)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=0)
    assert obs.shape == (8, 539) and obs.dtype == np.float32
    assert venv.single_observation_space.contains(obs[0])
    assert venv.observation_space.shape == (8, 539)
    assert venv.action_space.shape == (8,) and venv.single_action_space.n == NUM_POSITIONS
    for step in range(5):
        obs, rew, term, trunc, info = venv.step(_actions(venv.action_masks(), np.random.default_rng(step), 0))
        assert rew.dtype == np.float64 and term.dtype == bool and trunc.dtype == bool
    assert trunc.all()  # the fifth learner step truncates every episode still running
    done = term | trunc
    assert info["_final_obs"].tolist() == done.tolist()
    assert info["final_obs"].dtype == object
    assert all(info["final_obs"][i].shape == (539,) for i in np.flatnonzero(done))
    fi = info["final_info"]
    assert set(fi) >= {"scores", "winners", "instant_win", "learner_seat", "game_seed"}
    assert fi["scores"].shape == (8, 2) and fi["winners"].shape == (8, 2)
    # the returned observation is the next episode's first one
    assert (obs[:, :112].reshape(8, 28, 4)[:, :, 0].sum(axis=1) >= 26).all()


def test_illegal_actions_penalty_and_raise() -> None:
    venv = MemTabVectorEnv(3, illegal_penalty=-0.5)
    obs, _ = venv.reset(seed=4)
    state = venv.engine.state.copy()
    bad = np.array([-1, 28, 0])
    obs2, rew, term, trunc, info = venv.step(bad)
    assert info["illegal_action"].tolist() == [True, True, False]
    assert rew[:2].tolist() == [-0.5, -0.5]
    np.testing.assert_array_equal(obs2[:2], obs[:2])
    np.testing.assert_array_equal(venv.engine.state[:2], state[:2])
    strict = MemTabVectorEnv(3, illegal_action="raise")
    strict.reset(seed=4)
    state = strict.engine.state.copy()
    with pytest.raises(IllegalActionError, match="env 1"):
        strict.step(np.array([0, 28, 0]))
    np.testing.assert_array_equal(strict.engine.state, state)
    with pytest.raises(IllegalActionError):
        strict.step(np.zeros(3))  # floats are not actions


def test_random_seats_and_opponents_are_seeded() -> None:
    def run(seed: int) -> tuple[np.ndarray, np.ndarray]:
        venv = MemTabVectorEnv(
            64, num_players=3, learner_seat="random", opponents=["random", "greedy"]
        )
        obs, info = venv.reset(seed=seed)
        seats = [info["learner_seat"]]
        rng = np.random.default_rng(1)
        total = np.zeros(64)
        for _ in range(60):
            obs, rew, term, trunc, info = venv.step(_actions(venv.action_masks(), rng, 0))
            total += rew
            seats.append(info["learner_seat"])
        return np.stack(seats), total

    seats, total = run(5)
    seats2, total2 = run(5)
    np.testing.assert_array_equal(seats, seats2)
    np.testing.assert_array_equal(total, total2)
    assert set(np.unique(seats)) == {0, 1, 2}
    assert not np.array_equal(run(6)[0], seats)


def test_parallel_equals_serial() -> None:
    a = MemTabVectorEnv(300, opponents="greedy", memory="decay:0.2", parallel=True)
    b = MemTabVectorEnv(300, opponents="greedy", memory="decay:0.2", parallel=False)
    oa, _ = a.reset(seed=9)
    ob, _ = b.reset(seed=9)
    rng = np.random.default_rng(2)
    for _ in range(40):
        np.testing.assert_array_equal(oa, ob)
        acts = _actions(a.action_masks(), rng, 0.05)
        oa, ra, ta, tra, _ = a.step(acts)
        ob, rb, tb, trb, _ = b.step(acts)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta | tra, tb | trb)


def test_copy_flag() -> None:
    fresh = MemTabVectorEnv(2)
    o1, _ = fresh.reset(seed=0)
    o2, *_ = fresh.step(np.array([0, 0]))
    assert o1 is not o2 and not np.shares_memory(o1, o2)
    shared = MemTabVectorEnv(2, copy=False)
    p1, _ = shared.reset(seed=0)
    p2, *_ = shared.step(np.array([0, 0]))
    assert p1 is p2
    np.testing.assert_array_equal(p2, o2)


def test_make_vec_through_a_vector_entry_point() -> None:
    """What ``memtab_env`` registers: ``vector_entry_point`` = VECTOR_ENTRY_POINT."""
    env_id = "MemTabVectorTest-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(
            id=env_id,
            entry_point="memtab_env.gym_env:SingleAgentEnv",
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"game": "memtab"},
            max_episode_steps=250,
        )
    venv = gymnasium.make_vec(
        env_id, num_envs=4, vectorization_mode="vector_entry_point", opponents="greedy"
    )
    assert isinstance(venv, MemTabVectorEnv)
    assert venv.num_envs == 4 and venv.max_episode_steps == 250
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (4, 539)
    venv.close()


def test_option_errors() -> None:
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, opponents="expert")
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, num_players=3, opponents=["greedy"])
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, learner_seat=2)
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, obs_mode="dict")
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, illegal_action="ignore")
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, game="pelmanism")
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, colours=3)
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, max_episode_steps=0)
    with pytest.raises(InvalidOptionError):
        MemTabVectorEnv(2, render_mode="human")
    venv = MemTabVectorEnv(2)
    with pytest.raises(MemTabError, match="reset"):
        venv.step(np.array([0, 0]))
    with pytest.raises(InvalidOptionError):
        venv.reset(options={"layout": []})
