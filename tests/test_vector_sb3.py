"""``MemTabSB3VecEnv``: an SB3 ``VecEnv`` that sb3-contrib's ``MaskablePPO`` trains on."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from memtab_env.vector import MemTabSB3VecEnv  # noqa: E402


def test_vecenv_contract() -> None:
    venv = MemTabSB3VecEnv(num_envs=5, seed=3, opponents="greedy", max_episode_steps=12)
    obs = venv.reset()
    assert obs.shape == (5, 539) and obs.dtype == np.float32
    assert [d["learner_seat"] for d in venv.reset_infos] == [0] * 5
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (5, 28) and masks.dtype == bool and masks.all()
    assert venv.get_attr("render_mode") == [None] * 5
    assert venv.env_is_wrapped(object) == [False] * 5  # type: ignore[arg-type]
    dones_seen = 0
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        venv.step_async(actions)
        obs, rewards, dones, infos = venv.step_wait()
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 5
        for i in np.flatnonzero(dones):
            dones_seen += 1
            assert infos[i]["terminal_observation"].shape == (539,)
            assert "TimeLimit.truncated" in infos[i]
    assert dones_seen > 0
    # seeding: the same seed replays the same episodes
    venv.seed(3)
    np.testing.assert_array_equal(venv.reset(), MemTabSB3VecEnv(5, seed=3).reset())
    venv.close()


def test_illegal_actions_are_flagged() -> None:
    venv = MemTabSB3VecEnv(num_envs=2, seed=0)
    venv.reset()
    venv.step_async(np.array([28, 0]))
    _, rewards, _, infos = venv.step_wait()
    assert infos[0] == {"illegal_action": True} and "illegal_action" not in infos[1]
    assert rewards[0] == pytest.approx(-0.1)


def test_maskable_ppo_trains_on_it() -> None:
    """A tiny budget: MaskablePPO collects and optimises through the adapter, and masking
    means it never sends an illegal flip."""
    venv = VecMonitor(MemTabSB3VecEnv(num_envs=16, seed=1, opponents="greedy"))
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [32]},
    )  # fmt: skip
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw whole episodes
    obs = venv.reset()
    illegal = 0
    for _ in range(20):
        actions, _ = model.predict(obs, action_masks=get_action_masks(venv))
        obs, _, _, infos = venv.step(actions)
        illegal += sum("illegal_action" in info for info in infos)
    assert illegal == 0


def test_board_game_adapter_and_maskable_ppo() -> None:
    """The board game's adapter: (B, 2 P + 2) masks, and MaskablePPO never sends an
    illegal action through it."""
    from memtab_env.vector import MemoryBoardSB3VecEnv

    venv = VecMonitor(MemoryBoardSB3VecEnv(num_envs=4, seed=2, opponents="greedy", max_turns=20))
    obs = venv.reset()
    assert obs.shape == (4, 2458) and get_action_masks(venv).shape == (4, 122)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [16]},
    )  # fmt: skip
    model.learn(total_timesteps=256)
    assert len(model.ep_info_buffer) > 0
    illegal = 0
    for _ in range(20):
        actions, _ = model.predict(obs, action_masks=get_action_masks(venv))
        obs, _, _, infos = venv.step(actions)
        illegal += sum("illegal_action" in info for info in infos)
    assert illegal == 0
