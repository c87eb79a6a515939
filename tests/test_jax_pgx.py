"""pgx conformance of :mod:`memtab_env.jax`: pgx's own v2 loop, its random policy, its
``auto_reset`` and the state checks of its API test run against every JAX id.

pgx's ``pgx._src.api_test.api_test`` itself cannot run on a third-party env: it asserts
that ``state.env_id`` is one of pgx's own ids (a ``Literal``), reads pgx's private
``_step_count`` and renders pgx's SVG. The loop below is that test's loop, with its
validators (``_validate_init_reward``, ``_validate_current_player``,
``_validate_legal_actions``) and the dtype checks of ``_validate_state``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pgx = pytest.importorskip("pgx", reason="pgx is tested in its own environment by .ci/run")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from pgx._src import api_test as pgx_api  # noqa: E402
from pgx.experimental import act_randomly, auto_reset  # noqa: E402

import memtab_env.jax as mj  # noqa: E402

#: every JAX id, small configurations (the rules are the differential tests' business)
CASES = [("MemTab-v0", {"num_players": 2}), ("MemTab-v0", {"num_players": 3, "memory": "decay:0.3"}),
         ("Pelmanism-v0", {"deck": "pairs:5"}), ("Pelmanism-v0", {"deck": "pairs:4", "max_turns": 3})]


def test_every_jax_id_is_covered() -> None:
    assert {env_id for env_id, _ in CASES} == set(mj.games())


def _validate_state(env: mj.Env, state: mj.State) -> None:
    """pgx's ``_validate_state`` without its own-ids and field-name checks."""
    assert state.current_player.dtype == jnp.int32
    assert state.terminated.dtype == jnp.bool_ and state.truncated.dtype == jnp.bool_
    assert state.rewards.dtype == jnp.float32 and state.rewards.shape[-1] == env.num_players
    assert state.legal_action_mask.dtype == jnp.bool_
    assert state.legal_action_mask.shape[-1] == env.num_actions
    assert state.observation.shape[-len(env.observation_shape):] == env.observation_shape


@pytest.mark.parametrize(("env_id", "options"), CASES)
def test_descriptive_properties(env_id: str, options: dict) -> None:
    env = mj.make(env_id, **options)
    state = env.init(jax.random.key(0))
    assert env.id == env_id and env.version == "v0"
    assert env.num_players == options.get("num_players", 2)
    assert env.num_actions == state.legal_action_mask.shape[0]
    assert env.observation_shape == state.observation.shape == env.observe(state, 0).shape
    assert mj.make(env_id, observe=False, **options).observation_shape == env.observation_shape


@pytest.mark.parametrize("use_key", [True, False])
@pytest.mark.parametrize(("env_id", "options"), CASES)
def test_pgx_api_test_loop(env_id: str, options: dict, use_key: bool) -> None:
    """pgx's ``api_test_single`` then ``api_test_batch``: ``step(state, action, key)``,
    pgx's random legal policy, until every game ends."""
    env = mj.make(env_id, **options)
    init, step = jax.jit(env.init), jax.jit(env.step)
    rng = jax.random.PRNGKey(849020)  # pgx's legacy keys work as well as typed keys
    for _ in range(2):
        rng, sub = jax.random.split(rng)
        state = init(sub)
        _validate_state(env, state)
        pgx_api._validate_init_reward(state)
        pgx_api._validate_current_player(state)
        assert state.legal_action_mask.sum() != 0
        steps = 0
        while not bool(state.terminated | state.truncated):
            rng, act_key, step_key = jax.random.split(rng, 3)
            action = act_randomly(act_key, state.legal_action_mask[None])[0]  # it takes a batch
            state = step(state, action, step_key if use_key else None)
            steps += 1
            assert int(state.step_count) == steps
            _validate_state(env, state)
            pgx_api._validate_current_player(state)
            pgx_api._validate_legal_actions(state)
        assert bool(state.legal_action_mask.all())  # also truncated (max_turns)
        # pgx: a step on a finished state changes nothing and pays zero, whatever the action
        after = step(state, jnp.int32(0), None)
        assert not bool(after.rewards.any()) and bool(after.terminated) == bool(state.terminated)
        np.testing.assert_array_equal(np.asarray(after.observation), np.asarray(state.observation))
    batch_init, batch_step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    state = batch_init(jax.random.split(jax.random.PRNGKey(9999), 4))
    while not bool((state.terminated | state.truncated).all()):
        rng, act_key, step_key = jax.random.split(rng, 3)
        action = act_randomly(act_key, state.legal_action_mask)
        keys = jax.random.split(step_key, 4) if use_key else None
        state = batch_step(state, action, keys)  # vmap maps a None key to None
        _validate_state(env, state)
        pgx_api._validate_legal_actions(jax.tree.map(lambda x: x[0], state))


@pytest.mark.parametrize(("env_id", "options"), CASES[1:3])
def test_pgx_auto_reset_runs_episodes(env_id: str, options: dict) -> None:
    """``pgx.experimental.auto_reset(env.step, env.init)`` under vmap and scan: every
    episode ends with its rewards kept on the next game's first state, zero-sum for ``win``."""
    env = mj.make(env_id, **options)
    step = auto_reset(env.step, env.init)

    def one(carry, _):
        state, key = carry
        key, act_key, step_key = jax.random.split(key, 3)
        action = act_randomly(act_key, state.legal_action_mask)
        state = jax.vmap(step)(state, action, jax.random.split(step_key, 8))
        return (state, key), (state.terminated | state.truncated, state.rewards, state.step_count)

    state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 8))
    _, (done, rewards, count) = jax.jit(lambda s, k: jax.lax.scan(one, (s, k), None, length=120))(
        state, jax.random.key(1))
    done, rewards, count = np.asarray(done), np.asarray(rewards), np.asarray(count)
    assert done.sum() >= 8  # every game ended at least once in 120 flips
    assert (count[done] == 0).all()  # the state after an end is the next game's start
    assert np.allclose(rewards.sum(axis=-1), 0.0, atol=1e-6)  # ``win``: zero-sum every step
    assert not rewards[~done].any()  # ``win`` pays at the end only


def test_step_key_drives_decay_forgetting() -> None:
    """pgx v2 passes the transition's randomness as ``key``: under ``decay`` the same key
    forgets the same cards, other keys others; without a key the state's key is used."""
    env = mj.make("MemTab-v0", memory="decay:0.5")
    step = jax.jit(env.step)
    state = env.init(jax.random.key(3))
    for a in (0, 1, 2, 3, 4, 5):
        state = step(state, a)
    bits = [np.asarray(step(state, 6, jax.random.key(k)).memory.bits) for k in (7, 7, 8, 9, 10)]
    np.testing.assert_array_equal(bits[0], bits[1])
    assert any((b != bits[0]).any() for b in bits[2:])
    np.testing.assert_array_equal(np.asarray(step(state, 6).memory.bits),
                                  np.asarray(step(state, 6, None).memory.bits))
