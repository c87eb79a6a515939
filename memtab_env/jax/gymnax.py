"""The single-agent JAX view as a gymnax ``Environment`` (the ``gymnax`` extra).

For gymnax, PureJaxRL, popjym and POPGym Arcade training loops::

    import jax
    from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper
    from memtab_env.jax import gymnax as mg

    env, params = mg.make("MemTab-v0", opponents="greedy", memory="none")
    env = LogWrapper(FlattenObservationWrapper(env))
    obs, state = env.reset(jax.random.key(0), params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)
    observation, action_mask = mg.split_observation(obs, env.num_actions)

The env is a real ``gymnax.environments.environment.Environment``: gymnax's own
``step`` (auto-reset: a step that ends the episode returns the next episode's first
observation, the last one in ``info["final_observation"]``) and ``reset`` run on its
``step_env`` and ``reset_env``; ``observation_space``, ``action_space``,
``default_params`` and ``num_actions`` are gymnax's. The other seats are played inside
``step`` by the single-agent view's opponents (:mod:`memtab_env.jax.single_agent`,
``random`` or ``greedy``), which draw from gymnax's step key.

The action mask travels in the observation: one flat int8 vector, the learner's
observation (the numba encoder's layout and values) followed by ``num_actions`` 0/1
entries, 1 for a legal flip (all 1 once an episode has ended, so a masked softmax never
meets an empty mask). It thus survives gymnax's auto-reset and every wrapper that
reshapes or stacks observations; :func:`split_observation` cuts it off again. An
illegal action ends the episode with ``illegal_action_penalty`` (default -1).

``terminated`` is the game's end; ``truncated`` is the game's own length cap (Pelmanism)
or ``params.max_steps_in_episode`` learner steps (gymnax's time limit; by default the
game's longest game, which never binds first).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

try:
    from flax import struct
    from gymnax.environments import environment, spaces
except ImportError as exc:  # pragma: no cover - exercised without the extra
    from memtab_env.extras import missing_message

    raise ImportError(missing_message(exc, "memtab_env.jax.gymnax")) from exc

from memtab_env.errors import InvalidOptionError
from memtab_env.jax import make_single_agent
from memtab_env.jax.single_agent import SingleAgentEnv, SingleAgentState


@struct.dataclass
class EnvState(environment.EnvState):
    """gymnax's state (``time``: learner steps this episode) around the single-agent one."""

    view: SingleAgentState


@struct.dataclass
class EnvParams(environment.EnvParams):
    """gymnax's parameters: ``max_steps_in_episode``, the time limit in learner steps."""


def split_observation(obs: jax.Array, num_actions: int) -> tuple[jax.Array, jax.Array]:
    """``(observation, action_mask)`` of observations (any leading axes): the encoder's
    entries and the bool mask of the last ``num_actions`` entries."""
    return obs[..., :-num_actions], obs[..., -num_actions:].astype(jnp.bool_)


class MemTabGymnax(environment.Environment):
    """A single-agent MemTab or Pelmanism view as a gymnax environment (build it with
    :func:`make`)."""

    def __init__(self, view: SingleAgentEnv, env_id: str) -> None:
        super().__init__()
        if view.has_pool:
            raise InvalidOptionError("'pool' opponents take the snapshots at every step, which "
                                     "gymnax's step cannot pass: use memtab_env.jax.make_single_agent")
        self.view = view
        self.env_id = env_id
        encoder = view.env.game.encoder
        self.obs_low = np.concatenate([encoder.low, np.zeros(view.num_actions, np.int8)])
        self.obs_high = np.concatenate([encoder.high, np.ones(view.num_actions, np.int8)])

    # -- gymnax's interface ---------------------------------------------------------
    @property
    def default_params(self) -> EnvParams:
        return EnvParams(max_steps_in_episode=int(self.view.env.max_game_length))

    def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array, EnvState]:
        view = self.view.reset(key)
        return self._observation(view), EnvState(time=jnp.int32(0), view=view)

    def step_env(self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
                 ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, Any]]:
        view = self.view.step(state.view.replace(key=key), jnp.asarray(action, jnp.int32))
        state = EnvState(time=state.time + 1, view=view)
        info = {"discount": 1.0 - view.terminated.astype(jnp.float32)}
        return self._observation(view), state, view.reward, view.terminated, info

    def is_terminated(self, state: EnvState, params: EnvParams) -> jax.Array:
        return state.view.terminated

    def is_truncated(self, state: EnvState, params: EnvParams) -> jax.Array:
        return state.view.truncated | (state.time >= params.max_steps_in_episode)

    @property
    def name(self) -> str:
        return self.env_id

    @property
    def num_actions(self) -> int:
        return self.view.num_actions

    def action_space(self, params: EnvParams | None = None) -> spaces.Discrete:
        return spaces.Discrete(self.view.num_actions)

    def observation_space(self, params: EnvParams | None = None) -> spaces.Box:
        """int8 Box: the encoder's bounds, then 0/1 for the action mask."""
        return spaces.Box(jnp.asarray(self.obs_low), jnp.asarray(self.obs_high),
                          (self.obs_low.size,), jnp.int8)

    # -- helpers --------------------------------------------------------------------
    def split_observation(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """:func:`split_observation` with this env's ``num_actions``."""
        return split_observation(obs, self.view.num_actions)

    @staticmethod
    def _observation(view: SingleAgentState) -> jax.Array:
        return jnp.concatenate([view.observation, view.legal_action_mask.astype(jnp.int8)])


def make(env_id: str, **options: Any) -> tuple[MemTabGymnax, EnvParams]:
    """``(env, params)`` as ``gymnax.make`` returns them, for ``MemTab-v0`` or
    ``Pelmanism-v0``. ``options`` are :func:`memtab_env.jax.make_single_agent`'s:
    ``opponents`` (``"random"``, ``"greedy"`` or one per other seat), ``learner_seat``,
    and the game's and env's options (``num_players``, ``memory``, ``reward``, ...)."""
    env = MemTabGymnax(make_single_agent(env_id, **options), env_id)
    return env, env.default_params


__all__ = ["EnvParams", "EnvState", "MemTabGymnax", "make", "split_observation"]
