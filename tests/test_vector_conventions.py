"""Vector conventions: every vector env declares its auto-reset mode, and the masks a step
returns never crash a masked categorical (torch), through many episode ends.

The convention: the batched views and the SB3 VecEnvs reset in the same step, so the
masks they return always belong to a game in progress; the scalar Gymnasium view returns
an all-ones mask at the step that ends an episode, so a wrapper that resets on the next
step (Gymnasium's default) can evaluate a masked policy on the terminal observation.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import memtab_env  # noqa: F401 - registers the ids

torch = pytest.importorskip("torch")


def masked_categorical(masks: np.ndarray, seed: int) -> np.ndarray:
    """Actions sampled from a categorical whose illegal logits are -inf (torch validates
    its arguments: an all-zero mask row raises)."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(masks.shape, generator=gen)
    legal = torch.as_tensor(np.asarray(masks, dtype=bool))
    dist = torch.distributions.Categorical(logits=torch.where(legal, logits, -torch.inf),
                                           validate_args=True)
    return dist.sample().numpy()


def test_an_empty_mask_does_crash_a_masked_categorical() -> None:
    """Why the convention matters: the check below would catch a zero mask row."""
    with pytest.raises(ValueError):
        masked_categorical(np.zeros((1, 28), np.int8), 0)


def gym_vector_envs():
    from memtab_env.vector import MemTabVectorEnv, PelmanismVectorEnv

    yield "MemTabVectorEnv", MemTabVectorEnv(num_envs=4, opponents="greedy", learner_seat="random")
    yield "PelmanismVectorEnv", PelmanismVectorEnv(num_envs=4, opponents="random", deck="pairs:3")
    yield "MemoryBoardVectorEnv", gym.make_vec("MemoryBoard-v0", num_envs=4, max_turns=15,
                                               vectorization_mode="vector_entry_point")
    yield "make_vec entry point", gym.make_vec("MemTab-v0", num_envs=3,
                                               vectorization_mode="vector_entry_point")
    yield "make_vec sync (next-step reset)", gym.make_vec(
        "Pelmanism-v0", num_envs=3, vectorization_mode="sync", deck="pairs:3", opponents="random")
    yield "SyncVectorEnv same-step", gym.vector.SyncVectorEnv(
        [lambda: gym.make("MemTab-v0", opponents="random") for _ in range(2)],
        autoreset_mode=AutoresetMode.SAME_STEP)


@pytest.mark.parametrize("name,venv", list(gym_vector_envs()), ids=lambda v: v if isinstance(v, str) else "")
def test_gymnasium_vector_envs(name: str, venv) -> None:
    assert isinstance(venv.metadata["autoreset_mode"], AutoresetMode), name
    _, info = venv.reset(seed=0)
    ends = 0
    for step in range(400):
        masks = info["action_mask"]
        _, _, term, trunc, info = venv.step(masked_categorical(masks, step))
        ends += int(np.sum(term | trunc))
    assert ends >= 6, f"{name}: only {ends} episode ends in 400 steps"
    venv.close()


def sb3_vec_envs():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from memtab_env.train.config import config_from_dict
    from memtab_env.train.vec import ConcatVecEnv, make_env_fn
    from memtab_env.vector import MemTabSB3VecEnv, PelmanismSB3VecEnv

    yield MemTabSB3VecEnv(num_envs=4, seed=0, opponents="random")
    yield PelmanismSB3VecEnv(num_envs=4, seed=0, opponents="random", deck="pairs:3")
    cfg = config_from_dict({"opponents": {"random": 1.0}, "n_envs": 2})
    dummy = DummyVecEnv([make_env_fn(cfg) for _ in range(2)])
    yield ConcatVecEnv([MemTabSB3VecEnv(num_envs=2, seed=10, opponents="greedy"), dummy])


@pytest.mark.parametrize("venv", list(sb3_vec_envs()), ids=["MemTabSB3", "PelmanismSB3", "Concat"])
def test_sb3_vec_envs(venv) -> None:
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    venv.reset()
    ends = 0
    for step in range(300):
        masks = np.stack(venv.env_method("action_masks"))
        _, _, dones, infos = venv.step(masked_categorical(masks, step))
        ends += int(dones.sum())
        assert all("terminal_observation" in infos[i] for i in np.flatnonzero(dones))
    assert ends >= 4
    venv.close()


def test_sb3_contrib_masked_distribution_on_terminal_masks() -> None:
    """sb3-contrib's own masked distribution on the scalar view's terminal mask."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

    env = gym.make("MemTab-v0", opponents="random", illegal_action="terminate")
    env.reset(seed=0)
    env.step(0)
    _, _, term, _, info = env.step(0)  # flipped already this turn: illegal, the game ends
    assert term and info["action_mask"].all() and env.unwrapped.action_masks().all()
    dist = MaskableCategoricalDistribution(28).proba_distribution(torch.zeros(1, 28))
    dist.apply_masking(env.unwrapped.action_masks()[None])
    assert torch.isfinite(dist.entropy()).all()


@pytest.mark.parametrize("env_id", ["MemTab-v0", "Pelmanism-v0", "MemoryBoard-v0"])
def test_the_scalar_views_terminal_mask_is_all_ones(env_id: str) -> None:
    opts = {"deck": "pairs:3"} if env_id == "Pelmanism-v0" else {}
    env = gym.make(env_id, opponents="random", obs_mode="dict", **opts)
    _, info = env.reset(seed=3)
    while True:
        assert info["action_mask"].any()
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break
    assert info["action_mask"].all() and obs["action_mask"].all()
    assert env.unwrapped.action_masks().all()
