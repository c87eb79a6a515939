"""An unknown keyword option is a ``TypeError`` (and still an ``InvalidOptionError``), in
Python's own words, so that libraries that probe keywords work: TorchRL's ``GymEnv``
passes ``frameskip`` and retries without it on ``TypeError("... unexpected keyword
argument 'frameskip'")``."""

from __future__ import annotations

import gymnasium
import pytest

import memtab_env  # noqa: F401 - registers the ids
from memtab_env import memory_board_v0, memtab_v0, pelmanism_v0
from memtab_env.errors import InvalidOptionError, UnknownOptionError
from memtab_env.registry import GAMES

IDS = sorted(spec.env_id for spec in GAMES.values())


@pytest.mark.parametrize(("env_id", "aec_module"), [("MemTab-v0", memtab_v0), ("Pelmanism-v0", pelmanism_v0),
                                                   ("MemoryBoard-v0", memory_board_v0)])
def test_unknown_keyword_is_a_type_error_in_pythons_words(env_id: str, aec_module) -> None:
    for make in (lambda **kw: gymnasium.make(env_id, **kw), aec_module.env, aec_module.raw_env):
        with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'") as info:
            make(frameskip=1)
        assert isinstance(info.value, InvalidOptionError) and isinstance(info.value, ValueError)
        assert "allowed" in str(info.value)


def test_vector_env_and_jax_unknown_keywords_are_type_errors() -> None:
    with pytest.raises(UnknownOptionError, match="unexpected keyword argument 'colours'"):
        gymnasium.make_vec("Pelmanism-v0", num_envs=2, vectorization_mode="vector_entry_point", colours=3)
    pytest.importorskip("jax")
    import memtab_env.jax as jax_mod
    with pytest.raises(TypeError, match="unexpected keyword argument 'colours'"):
        jax_mod.make("Pelmanism-v0", colours=3)
    # a bad value of a known option stays a ValueError only
    with pytest.raises(InvalidOptionError) as info:
        gymnasium.make("MemTab-v0", num_players=9)
    assert not isinstance(info.value, TypeError)


def _probe_like_torchrl(env_id: str) -> tuple[gymnasium.Env, dict]:
    """TorchRL's ``GymEnv._build_env`` probing loop, as it reads: ``frameskip`` first,
    dropped on a ``TypeError`` that names it, any other error raised."""
    kwargs = {"frameskip": 1}
    while True:
        try:
            return gymnasium.make(env_id, **kwargs), kwargs
        except TypeError as err:
            if "unexpected keyword argument 'frameskip'" not in str(err):
                raise
            kwargs.pop("frameskip")


@pytest.mark.parametrize("env_id", IDS)
def test_keyword_probing_falls_back(env_id: str) -> None:
    env, kwargs = _probe_like_torchrl(env_id)
    assert kwargs == {}
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def test_torchrl_gym_env() -> None:
    pytest.importorskip("torchrl", reason="TorchRL is a test dependency (the dev extra)")
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("MemTab-v0", opponents="greedy")
    check_env_specs(env)
    rollout = env.rollout(20)
    assert rollout["observation"].shape[-1] == env.observation_spec["observation"].shape[-1]
    assert rollout["next", "reward"].shape[0] == len(rollout)
