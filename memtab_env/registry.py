"""The table of games: one row per game, nothing else to edit when a game is added.

Each row names (as ``"module:attr"`` strings, imported lazily) the parts of a game that
shared code asks for: the engine class, the observation encoder class, the renderer, the
batched engine, the vector env, the SB3 VecEnv and the JAX rules (each game's parts live
in its folder under :mod:`memtab_env.games`), and the ids it is registered under with
Gymnasium (``MemTab-v0``) and PettingZoo (``memtab/MemTab-v0``). Shared code reads a
game's row; it never branches on a game's name.

Versions (``docs/versioning.md``): an env id ends in its version (``-v0``). Any change that
alters what the env produces for the same seeds and actions (rules, observations, masks,
rewards, memory models, built-in opponents, seed derivations; the golden trajectories of
``tests/golden/`` catch it) bumps the version. The old id is retired, not kept: its
version goes into the row's ``retired`` with what changed, and asking for it raises
:class:`~memtab_env.errors.DeprecatedEnvError` naming the current id, as Gymnasium's
registry raises ``DeprecatedEnv`` (which ``gymnasium.make`` of the old id raises by
itself once the new one is registered); a version above the current one raises
:class:`~memtab_env.errors.VersionNotFoundError`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memtab_env.errors import DeprecatedEnvError, InvalidOptionError, VersionNotFoundError


@dataclass(frozen=True)
class GameSpec:
    """Where the parts of one game live.

    Attributes:
        name: short name used in records (``"memtab"``).
        env_id: Gymnasium id; the PettingZoo id is ``"memtab/" + env_id``.
        engine: ``"module:Class"`` of the :class:`memtab_env.games.base.Game` subclass.
        encoder: ``"module:Class"`` of the observation encoder (takes the engine).
        renderer: ``"module:Class"`` of the renderer (takes the engine; ``ansi(state)``,
            ``rgb(state)``).
        aec_module: the classic-style module exposing ``env()`` and ``raw_env``.
        max_episode_steps: Gymnasium step limit of the single-agent view (truncation).
        vector_entry_point: batched Gymnasium vector env for ``gymnasium.make_vec``
            (``vectorization_mode="vector_entry_point"``), or None.
        batched_engine: ``"module:Class"`` of the batched engine (B games stepped by
            compiled kernels, :class:`memtab_env.vector.engine_base.BatchedGames`), or None.
        sb3_vec_env: ``"module:Class"`` of the batched Stable-Baselines3 ``VecEnv``
            (:class:`memtab_env.vector.sb3.BatchedSB3VecEnv`; what ``vec_env: batched``
            trains on), or None.
        jax_rules: ``"module:Class"`` of the game's JAX rules (:mod:`memtab_env.jax`), or
            None when the game has no JAX backend.
        retired: earlier versions of ``env_id`` -> what changed in the version after it
            (the module docstring; ``docs/versioning.md``).
    """

    name: str
    env_id: str
    engine: str
    encoder: str
    renderer: str
    aec_module: str
    max_episode_steps: int
    vector_entry_point: str | None = None
    batched_engine: str | None = None
    sb3_vec_env: str | None = None
    jax_rules: str | None = None
    retired: Mapping[int, str] = field(default_factory=dict)

    @property
    def pettingzoo_id(self) -> str:
        return f"memtab/{self.env_id}"

    @property
    def base_name(self) -> str:
        """The id without its version (``MemTab``)."""
        return split_env_id(self.env_id)[0]

    @property
    def version(self) -> int:
        return int(split_env_id(self.env_id)[1])


def load(path: str) -> Any:
    """Import ``"module:attr"``."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _game_row(name: str, env_id: str, prefix: str, max_episode_steps: int, *, jax: bool) -> GameSpec:
    """The row of a game whose parts follow the folder convention of
    ``memtab_env/games/<name>/``: the engine ``<Prefix>`` (exported by the package), the
    modules ``observation`` (``<Prefix>Encoder``), ``render`` (``<Prefix>Renderer``),
    ``vector_env`` (``<Prefix>VectorEnv``), ``batched`` (``Batched<Prefix>``),
    ``sb3_vec_env`` (``<Prefix>SB3VecEnv``) and, with ``jax``, ``jax_env``
    (``<Prefix>Jax``); the AEC module ``memtab_env.<name>_v<version>``. A game laid out
    otherwise writes its :class:`GameSpec` in full."""
    package = f"memtab_env.games.{name}"
    return GameSpec(
        name=name,
        env_id=env_id,
        engine=f"{package}:{prefix}",
        encoder=f"{package}.observation:{prefix}Encoder",
        renderer=f"{package}.render:{prefix}Renderer",
        aec_module=f"memtab_env.{name}_v{env_id.rsplit('-v', 1)[1]}",
        max_episode_steps=max_episode_steps,
        vector_entry_point=f"{package}.vector_env:{prefix}VectorEnv",
        batched_engine=f"{package}.batched:Batched{prefix}",
        sb3_vec_env=f"{package}.sb3_vec_env:{prefix}SB3VecEnv",
        jax_rules=f"{package}.jax_env:{prefix}Jax" if jax else None,
    )


GAMES: dict[str, GameSpec] = {
    "memtab": _game_row("memtab", "MemTab-v0", "MemTab", 250, jax=True),
    "memory_board": _game_row("memory_board", "MemoryBoard-v0", "MemoryBoard", 2500, jax=False),
    # learner flips; uniformly random solo play on a 52-card pairs deck averages 1350
    "pelmanism": _game_row("pelmanism", "Pelmanism-v0", "Pelmanism", 3000, jax=True),
}


def make_encoder(name_or_id: str, **options: Any) -> Any:
    """The observation encoder of a configuration of a game: its engine built from the
    ``options`` that the engine's constructor takes (others are ignored: env options such
    as ``memory``), then its encoder."""
    import inspect

    spec = game_spec(name_or_id)
    engine_cls = load(spec.engine)
    params = inspect.signature(engine_cls).parameters
    engine = engine_cls(**{k: v for k, v in options.items() if k in params})
    return load(spec.encoder)(engine)


_VERSIONED = re.compile(r"^(?:memtab/)?(?P<name>[A-Za-z][A-Za-z0-9_]*)-v(?P<version>\d+)$")


def split_env_id(env_id: str) -> tuple[str, int | None]:
    """``"MemTab-v0"`` -> ``("MemTab", 0)`` (a PettingZoo id's ``memtab/`` dropped);
    ``(env_id, None)`` when it carries no version."""
    m = _VERSIONED.match(str(env_id))
    return (m["name"], int(m["version"])) if m else (str(env_id), None)


def check_version(env_id: str, spec: GameSpec) -> None:
    """Raise for ``env_id`` naming ``spec``'s game at a version other than the current
    one: a retired or older version (:class:`DeprecatedEnvError`) or one that does not
    exist (:class:`VersionNotFoundError`); messages as Gymnasium's registry words them."""
    _, version = split_env_id(env_id)
    if version is None or version == spec.version:
        return
    if version > spec.version:
        raise VersionNotFoundError(
            f"Environment version `v{version}` for environment `{spec.base_name}` doesn't exist. "
            f"It provides versioned environments: [ `v{spec.version}` ].")
    why = spec.retired.get(version)
    raise DeprecatedEnvError(
        f"Environment version v{version} for `{spec.base_name}` is deprecated. "
        f"Please use `{spec.env_id}` instead." + (f" What changed: {why}" if why else "")
        + " (docs/versioning.md)")


def game_spec(name_or_id: str) -> GameSpec:
    """Look a game up by short name (``"memtab"``), Gymnasium or PettingZoo id. Another
    version of a registered id raises :class:`DeprecatedEnvError` (older, retired) or
    :class:`VersionNotFoundError` (newer); see the module docstring."""
    for spec in GAMES.values():
        if name_or_id in (spec.name, spec.env_id, spec.pettingzoo_id):
            return spec
    base, _ = split_env_id(name_or_id)
    for spec in GAMES.values():
        if base == spec.base_name:
            check_version(name_or_id, spec)
    allowed = sorted([s.name for s in GAMES.values()] + [s.env_id for s in GAMES.values()])
    raise InvalidOptionError(f"unknown game {name_or_id!r}; known: {allowed}")
