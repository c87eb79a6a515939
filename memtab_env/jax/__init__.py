"""JAX backend: MemTab and Pelmanism as pure functions for ``jit`` and ``vmap``, on CPU
and accelerators (optional extra ``memtab-env[jax]``).

pgx's v2 functional API (:mod:`memtab_env.jax.env`), the same rules, observations and
rewards as the numba engine (held equal flip for flip by ``tests/test_jax_backend.py``);
:mod:`memtab_env.jax.gymnax` is the gymnax interface (the ``gymnax`` extra)::

    import jax, memtab_env.jax as mj

    env = mj.make("MemTab-v0", num_players=2, memory="none")
    state = jax.jit(env.init)(jax.random.key(0))     # or env.init_from_layout(record["layout"])
    state = env.step(state, action)                  # or step(state, action, key); State:
                                                     # current_player, observation, legal_action_mask,
                                                     # rewards, terminated, truncated
    keys = jax.random.split(jax.random.key(1), 4096)
    batch = jax.jit(jax.vmap(env.init))(keys)        # 4096 games
    batch = jax.jit(jax.vmap(env.step))(batch, actions)

    view = mj.make_single_agent("MemTab-v0", opponents="greedy")  # opponents inside step

Ids: ``MemTab-v0`` (options ``num_players`` 1-6, ``first_player``) and ``Pelmanism-v0``
(``deck``, ``num_players``, ``first_player``, ``max_turns``); every id takes ``memory``
(``perfect``, ``none``, ``decay:p``, ``window:k``), ``reward`` (``win``, ``score``,
``turns``), ``illegal_action_penalty`` and ``observe`` (:class:`memtab_env.jax.env.Env`).
Memory: The Board Game has no JAX backend.

Conventions that differ from the numba APIs: illegal actions end the game with a loss for
the offender (pgx), and ``decay`` forgets from JAX keys (the same law, other streams).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    import jax  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    from memtab_env.extras import missing_message

    raise ImportError(missing_message(exc, "memtab_env.jax")) from exc

from memtab_env.errors import InvalidOptionError, unknown_option_error
from memtab_env.jax.env import Env, State, auto_reset, auto_reset_batch, shuffle, uniform_legal
from memtab_env.jax.single_agent import SingleAgentEnv, SingleAgentState
from memtab_env.registry import GAMES as _REGISTRY
from memtab_env.registry import load

#: env id -> ``"module:Class"`` of the game's JAX rules (the ``jax_rules`` of its registry row)
_JAX_RULES = {spec.env_id: spec.jax_rules for spec in _REGISTRY.values() if spec.jax_rules}
_ENV_OPTIONS = ("memory", "reward", "illegal_action_penalty", "observe")


def games() -> dict[str, type]:
    """Env id -> the game's JAX rules class, for every game with a JAX backend (the game
    modules are imported here, not with this package: they import it)."""
    return {env_id: load(path) for env_id, path in _JAX_RULES.items()}


def __getattr__(name: str) -> Any:
    if name == "GAMES":
        return games()
    for path in _JAX_RULES.values():
        if path.rpartition(":")[2] == name:
            return load(path)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _game(env_id: str, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    if env_id not in _JAX_RULES:
        raise InvalidOptionError(f"no JAX backend for {env_id!r}; JAX ids: {sorted(_JAX_RULES)}")
    cls = load(_JAX_RULES[env_id])
    import inspect

    game_params = [p for p in inspect.signature(cls).parameters]
    env_opts = {k: v for k, v in options.items() if k in _ENV_OPTIONS}
    game_opts = {k: v for k, v in options.items() if k not in _ENV_OPTIONS}
    unknown = sorted(set(game_opts) - set(game_params))
    if unknown:
        raise unknown_option_error(unknown, f"the JAX {env_id}", sorted([*_ENV_OPTIONS, *game_params]))
    return cls(**game_opts), env_opts


def make(env_id: str, **options: Any) -> Env:
    """The functional env of ``env_id`` (see the module docstring for the options)."""
    game, env_opts = _game(env_id, options)
    return Env(game, **env_opts)


def make_single_agent(env_id: str, opponents: str | Sequence[str] = "random",
                      learner_seat: int | str = 0, pool_policy: Any = None,
                      **options: Any) -> SingleAgentEnv:
    """The single-agent view of ``env_id``: built-in opponents (``"random"``,
    ``"greedy"``, ``"pool"``: frozen snapshots of ``pool_policy``'s network; on MemTab
    ``"expert"`` too, played on the host) play the other seats inside ``step``."""
    game, env_opts = _game(env_id, options)
    if "observe" in env_opts:
        raise InvalidOptionError("the single-agent view builds the learner's observation itself; "
                                 "drop the 'observe' option")
    return SingleAgentEnv(Env(game, observe=False, **env_opts), opponents, learner_seat, pool_policy)


__all__ = [
    "GAMES",
    "Env",
    "MemTabJax",
    "PelmanismJax",
    "SingleAgentEnv",
    "SingleAgentState",
    "State",
    "auto_reset",
    "auto_reset_batch",
    "make",
    "make_single_agent",
    "shuffle",
    "uniform_legal",
]
