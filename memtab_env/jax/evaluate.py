"""Play a JAX PPO policy on given deals, many games in one jitted call.

The deals are dealt by the numpy engine from seeds (:func:`deal_layouts`, so the games are
those the AEC env deals for the same seeds, the benchmark's evaluation deals included) and
played through the single-agent JAX view, which the differential tests hold equal to the
AEC env flip for flip. Used for learning curves, where the AEC protocol would cost too
much at every checkpoint, and for the solo tracks of :mod:`memtab_env.study`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import memtab_env.jax as mj
from memtab_env.registry import game_spec


def deal_layouts(env_id: str, options: dict[str, Any], seeds: Sequence[int]) -> np.ndarray:
    """The deals of ``seeds`` as the AEC env deals them (``reset(seed=s)``), as card ids
    by position (int8[len(seeds), positions]), ready for ``init_from_layout`` under vmap."""
    spec = game_spec(env_id)
    aec = importlib.import_module(spec.aec_module).raw_env(**options)
    game = mj.make(env_id, **options).game
    rows = []
    for seed in seeds:
        aec.reset(seed=int(seed))
        rows.append(np.asarray(game.parse_layout(aec.record()["layout"]), np.int8))
    return np.stack(rows)


def make_play(view: mj.SingleAgentEnv, policy: Any, deterministic: bool = True
              ) -> Callable[[Any, jax.Array, jax.Array, jax.Array], dict[str, jax.Array]]:
    """``play(params, layouts, seats, key) -> {"return", "won", "steps"}``, one entry per
    game: the policy (``params``: its inexact arrays, so one compiled function serves every
    checkpoint) plays seat ``seats[i]`` of deal ``layouts[i]`` to the end, against the
    view's opponents. ``won``: the final step rewarded the learner (``win`` reward)."""
    _, static = eqx.partition(policy, eqx.is_inexact_array)

    def one(params: Any, layout: jax.Array, seat: jax.Array, key: jax.Array) -> dict:
        model = eqx.combine(params, static)
        reset_key, key = jax.random.split(key)
        state = view.reset_from_layout(layout, key=reset_key, learner=seat)

        def running(carry: tuple) -> jax.Array:
            return ~(carry[0].terminated | carry[0].truncated)

        def body(carry: tuple) -> tuple:
            state, h, start, total, steps, key = carry
            h, logits, _ = model.step(h, state.observation, start, state.legal_action_mask)
            key, sub = jax.random.split(key)
            action = jnp.argmax(logits) if deterministic else jax.random.categorical(sub, logits)
            state = view.step(state, action.astype(jnp.int32))
            return state, h, jnp.bool_(False), total + state.reward, steps + 1, key

        carry = (state, model.initial_state(), jnp.bool_(True), state.reward, jnp.int32(0), key)
        state, _, _, total, steps, _ = jax.lax.while_loop(running, body, carry)
        return {"return": total, "won": state.reward > 0, "steps": steps}

    return jax.jit(jax.vmap(one, in_axes=(None, 0, 0, 0)))


def play_deals(view: mj.SingleAgentEnv, policy: Any, layouts: np.ndarray, seats: Sequence[int],
               seed: int = 0, deterministic: bool = True) -> dict[str, np.ndarray]:
    """:func:`make_play` once: every deal of ``layouts`` with the learner in ``seats[i]``."""
    params, _ = eqx.partition(policy, eqx.is_inexact_array)
    keys = jax.random.split(jax.random.key(seed), len(layouts))
    out = make_play(view, policy, deterministic)(params, jnp.asarray(layouts),
                                                 jnp.asarray(seats, jnp.int32), keys)
    return {k: np.asarray(v) for k, v in out.items()}
