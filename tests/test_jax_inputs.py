"""Hostile inputs to the functional JAX env: every action outside the action space is
illegal (never wrapped onto a legal position), whatever its dtype; non-integers and
containers are errors outside jit; players and options are range- and type-checked
wherever a concrete value is given (:mod:`memtab_env.jax.checks`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")
jnp = jax.numpy

import memtab_env.jax as mj  # noqa: E402
from memtab_env.errors import InvalidOptionError  # noqa: E402


@pytest.fixture(scope="module")
def env():
    return mj.make("MemTab-v0")


@pytest.fixture(scope="module")
def start(env):
    state = env.init(jax.random.key(0))
    return state, int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])


@pytest.fixture(scope="module")
def jit_step(env):
    return jax.jit(env.step)


def _illegal(state) -> bool:
    return bool(state.terminated) and float(state.rewards[0]) == -1.0 and int(state.step_count) == 0


def _wrapping(legal: int) -> list:
    """Values that JAX's int32 conversion would wrap onto ``legal``."""
    return [np.int64(2**32 + legal), np.array(2**32 + legal, dtype=np.int64), np.uint64(2**32 + legal),
            np.array(-(2**32) + legal, dtype=np.int64), 2**32 + legal, 2**64 + legal, -(2**32) + legal,
            np.array(2**63 - 2**32 + legal, dtype=np.int64)]


def test_out_of_range_actions_of_any_width_are_illegal_never_wrapped(env, start):
    state, legal = start
    assert int(env.step(state, legal).step_count) == 1
    for value in _wrapping(legal) + [-1, env.num_actions, np.uint32(2**32 - 1), jnp.uint32(2**31 + legal),
                                     np.uint8(255), np.int16(-1)]:
        assert _illegal(env.step(state, value)), repr(value)


@pytest.mark.parametrize("bad", [3.0, np.float32(1), jnp.float32(1), True, np.bool_(False), "3", b"3", None,
                                 [0], (0,), np.array([0]), jnp.array([0, 1]), {"action": 0}, 1 + 0j,
                                 np.array([[0]], dtype=object)])
def test_non_integer_actions_and_containers_are_errors(env, start, bad):
    state, _ = start
    with pytest.raises(InvalidOptionError, match="an action is"):
        env.step(state, bad)


def test_inside_jit_every_integer_dtype_out_of_range_is_illegal(env, start, jit_step):
    """Traced actions keep their dtype: uint32 and int8 values outside the range are
    illegal in the jitted step too."""
    state, legal = start
    for value in (jnp.uint32(2**32 - 1), jnp.uint32(env.num_actions), jnp.int8(-1), jnp.int16(1000),
                  jnp.int32(-(2**31))):
        assert _illegal(jit_step(state, value)), repr(value)
    assert int(jit_step(state, jnp.uint8(legal)).step_count) == 1
    with pytest.raises(InvalidOptionError, match="traced value of dtype float32"):
        jit_step(state, jnp.float32(legal))
    with pytest.raises(InvalidOptionError, match="traced value of dtype bool"):
        jit_step(state, jnp.bool_(True))


def test_a_batch_of_wide_actions_is_checked_before_the_jit_boundary(env):
    """JAX casts an int64 array to int32 at a jit boundary (before step sees it); the
    env's ``actions`` turns out-of-range values into -1 first."""
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(1), 4))
    legal = [int(x) for x in np.asarray(jnp.argmax(states.legal_action_mask, axis=1))]
    wide = np.array([2**32 + legal[0], legal[1], -1, 2**40 + legal[3]], dtype=np.int64)
    checked = env.actions(wide)
    assert checked.dtype == jnp.int32 and checked.tolist() == [-1, legal[1], -1, -1]
    out = jax.jit(jax.vmap(env.step))(states, checked)
    assert out.terminated.tolist() == [True, False, True, True]
    assert env.actions(np.array([2**64, 1], dtype=object)).tolist() == [-1, 1]
    with pytest.raises(InvalidOptionError):
        env.actions(np.array([0.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.integers(-(2**70), 2**70),
                       st.integers(0, 2**64 - 1).map(np.uint64),
                       st.integers(-(2**63), 2**63 - 1).map(np.int64),
                       st.integers(-(2**31), 2**31 - 1).map(np.int32)))
def test_fuzz_an_action_is_played_only_when_it_is_that_legal_position(env, start, value):
    state, _ = start
    out = env.step(state, value)
    v = int(value)
    legal = 0 <= v < env.num_actions and bool(state.legal_action_mask[v])
    assert (int(out.step_count) == 1) == legal
    if not legal:
        assert _illegal(out)


@pytest.mark.parametrize("player", [2, -1, 2**32, np.int64(2**32), jnp.int32(5), np.array([0]), 1.0, True,
                                    "0"])
def test_observe_checks_a_concrete_player(env, start, player):
    state, _ = start
    with pytest.raises(InvalidOptionError, match="player"):
        env.observe(state, player)
    with pytest.raises(InvalidOptionError, match="player"):
        env.remembered_mask(state, player)


def test_observe_of_a_traced_player_is_not_checked_but_jits(env, start):
    state, _ = start
    obs = jax.jit(env.observe)(state, jnp.int32(1))
    assert obs.shape == (env.obs_size,)
    assert np.array_equal(np.asarray(obs), np.asarray(env.observe(state, 1)))
    assert np.array_equal(np.asarray(env.observe_all(state)[1]), np.asarray(obs))


@pytest.mark.parametrize("first", [2, -1, np.array(3), jnp.array(2), jnp.array([0, 1]), np.int64(2**32), 0.0,
                                   False])
def test_first_player_is_checked_as_an_array_too(env, first):
    layout = np.asarray(env.init(jax.random.key(0)).game.layout)
    with pytest.raises(InvalidOptionError, match="first_player"):
        env.init_from_layout(layout, first_player=first)
    assert int(env.init_from_layout(layout, first_player=np.array(1)).current_player) == 1
    assert int(env.init_from_layout(layout, first_player=jnp.int32(1)).current_player) == 1


@pytest.mark.parametrize(("option", "value"), [("observe", "no"), ("observe", 1), ("observe", None),
                                               ("observe", "False"), ("illegal_action_penalty", "1"),
                                               ("illegal_action_penalty", True),
                                               ("illegal_action_penalty", float("nan")),
                                               ("illegal_action_penalty", [1])])
def test_options_are_type_checked_not_truthy(option, value):
    with pytest.raises(InvalidOptionError, match=option):
        mj.make("MemTab-v0", **{option: value})


def test_the_single_agent_view_checks_its_learner_and_actions():
    view = mj.make_single_agent("MemTab-v0")
    layout = np.asarray(mj.make("MemTab-v0").init(jax.random.key(0)).game.layout)
    with pytest.raises(InvalidOptionError, match="learner"):
        view.reset_from_layout(layout, learner=2)
    state = view.reset(jax.random.key(0))
    legal = int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])
    out = view.step(state, np.int64(2**32 + legal))
    assert bool(out.terminated) and float(out.reward) == -1.0
    with pytest.raises(InvalidOptionError, match="an action is"):
        view.step(state, float(legal))
