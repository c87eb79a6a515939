"""Golden trajectories: a short seeded rollout of every registered id, backend, memory model
and built-in player, hashed, with the hashes committed in ``trajectories.json``.

A rollout hashes everything a user of the env can see: observations, action masks,
rewards, terminations, truncations and, where the backend keeps one, the game record
(without ``package_version`` and ``env_id``: the case key names the id). The hashes are
the streams' fingerprint: a change of rules, observations, memory models, rewards,
opponents' choices or of any seed derivation changes them, and ``tests/test_golden.py``
fails. Such a change bumps the env's version (``docs/versioning.md``); the new id's
hashes are then written by ``python -m tests.golden.regenerate --accept``.

Backends (each case key is ``ENV_ID/BACKEND/MEMORY/PLAYERS``):

``aec``
    the PettingZoo AEC env; ``random``: every seat plays uniformly random legal flips from
    one seeded generator; ``agents``: the game's built-in agents take the seats in turn.
``gym``
    ``gymnasium.make(env_id)``: the learner plays random legal flips against the named
    built-in opponent, learner seat drawn per episode, 150 learner steps (the episodes
    after the first reset without a seed).
``vector``
    ``gymnasium.make_vec(env_id, vectorization_mode="vector_entry_point")`` (the batched
    numba engine that ``vec_env: batched`` trains on), three games, auto-resets included.
``jax``
    the functional JAX env, two games under ``vmap`` with :func:`memtab_env.jax.auto_reset`.
``jax-single``
    the single-agent JAX view with the named opponent, two games, perfect memory only (a
    JAX program compiles for seconds; the memory models' JAX streams are the ``jax``
    cases').
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memtab_env.registry import GAMES, game_spec

GOLDEN_FILE = Path(__file__).with_name("trajectories.json")
SCHEMA = "memtab-golden-trajectories/1"
#: the memory models every backend is rolled out under (every kind of memtab_env.memory)
MEMORIES = ("perfect", "none", "decay:0.3", "window:3")
#: the built-in agents of the ``agents`` AEC case and the gym view's opponents, where the
#: game has them (shipped policies and search are models, not streams of the env)
BUILT_IN = ("random", "greedy", "expert", "nomemory")
BACKENDS = ("aec", "gym", "vector", "jax", "jax-single")
JAX_BACKENDS = ("jax", "jax-single")
SEED = 20_261_204
#: flips of an ``aec`` rollout at most (a MemTab game ends before; the longer games stop
#: mid-game under random play and end under the agents)
AEC_FLIPS = 300
#: learner steps of a ``gym`` rollout (episodes reset without a seed: the seed stream)
GYM_STEPS = 150
VECTOR_ENVS, VECTOR_STEPS = 3, 200
JAX_GAMES, JAX_STEPS = 2, 100
#: the record fields that name the package rather than the game
_RECORD_SKIP = ("package_version", "env_id")


@dataclass(frozen=True)
class Case:
    """One golden rollout."""

    env_id: str
    backend: str
    memory: str
    players: str

    @property
    def key(self) -> str:
        return f"{self.env_id}/{self.backend}/{self.memory}/{self.players}"

    @property
    def game(self) -> str:
        return game_spec(self.env_id).name


def built_in_agents(game: str) -> list[str]:
    """The built-in agents of ``game`` that take part (in :data:`BUILT_IN` order)."""
    from memtab_env import agents

    names = set(agents.available(game))
    return [a for a in BUILT_IN if a in names]


def cases() -> list[Case]:
    """Every golden case: each registered id under each backend it has, each memory model
    and each built-in player of that backend."""
    from memtab_env.jax.single_agent import OPPONENTS as JAX_OPPONENTS
    from memtab_env.vector.batch_kernels import OPPONENT_CODES

    out = []
    for spec in GAMES.values():
        agents = built_in_agents(spec.name)
        for memory in MEMORIES:
            players: dict[str, list[str]] = {"aec": ["random", "agents"], "gym": agents}
            if spec.vector_entry_point:
                players["vector"] = [a for a in agents if a in OPPONENT_CODES]
            if spec.jax_rules:
                # every JAX program compiles for seconds: the memory models' JAX streams
                # under the functional env, the opponents' under perfect memory only
                players["jax"] = ["random"]
                if memory == MEMORIES[0]:
                    players["jax-single"] = [a for a in agents if a in JAX_OPPONENTS]
            for backend, names in players.items():
                out += [Case(spec.env_id, backend, memory, p) for p in names]
    return out


class Digest:
    """SHA-256 over named arrays (dtype, shape and bytes) and JSON values."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def array(self, name: str, value: Any) -> None:
        a = np.ascontiguousarray(np.asarray(value))
        self._h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        self._h.update(a.tobytes())

    def json(self, name: str, value: Any) -> None:
        self._h.update(f"{name}:{json.dumps(value, sort_keys=True)};".encode())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _record(d: Digest, record: dict[str, Any]) -> None:
    d.json("record", {k: v for k, v in record.items() if k not in _RECORD_SKIP})


def _aec(case: Case, d: Digest) -> None:
    from memtab_env import agents
    from memtab_env.registry import load

    spec = game_spec(case.env_id)
    env = load(f"{spec.aec_module}:raw_env")(memory=case.memory)
    env.reset(seed=SEED)
    rng = np.random.default_rng(SEED)
    seats: list[Any] = []
    if case.players == "agents":
        names = built_in_agents(spec.name)
        seats = [agents.make(names[i % len(names)], game=spec.name) for i in range(env.num_agents)]
        for i, a in enumerate(seats):
            a.reset(seed=SEED + i)
    for agent in env.agent_iter(AEC_FLIPS):
        obs, rew, term, trunc, _ = env.last()
        d.array("obs", obs["observation"])
        d.array("mask", obs["action_mask"])
        d.array("remembered", obs["remembered_mask"])
        d.array("end", [rew, term, trunc])
        if term or trunc:
            env.step(None)
            continue
        if seats:
            action = seats[env.agent_name_mapping[agent]].act(obs)
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        d.array("action", action)
        env.step(action)
    _record(d, env.record())


def _legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``masks``."""
    masks = np.atleast_2d(masks).astype(bool)
    u = rng.random(masks.shape) * masks
    return u.argmax(axis=1)


def _gym(case: Case, d: Digest) -> None:
    import gymnasium

    env = gymnasium.make(case.env_id, memory=case.memory, opponents=case.players,
                         learner_seat="random")
    rng = np.random.default_rng(SEED)
    obs, info = env.reset(seed=SEED)
    for _ in range(GYM_STEPS):
        d.array("obs", obs)
        d.array("mask", info["action_mask"])
        d.array("seat", info["learner_seat"])
        obs, rew, term, trunc, info = env.step(int(_legal(rng, info["action_mask"])[0]))
        d.array("end", [rew, term, trunc])
        if term or trunc:
            d.array("final_obs", obs)
            _record(d, env.unwrapped.aec.record())
            obs, info = env.reset()
    _record(d, env.unwrapped.aec.record())
    env.close()


def _vector(case: Case, d: Digest) -> None:
    import gymnasium

    venv = gymnasium.make_vec(case.env_id, num_envs=VECTOR_ENVS, vectorization_mode="vector_entry_point",
                              memory=case.memory, opponents=case.players, learner_seat="random")
    rng = np.random.default_rng(SEED)
    obs, info = venv.reset(seed=SEED)
    d.array("obs", obs)
    d.array("seat", info["learner_seat"])
    for _ in range(VECTOR_STEPS):
        masks = venv.unwrapped.action_masks()
        d.array("mask", masks)
        obs, rew, term, trunc, info = venv.step(_legal(rng, masks))
        d.array("obs", obs)
        d.array("end", np.stack([rew, term, trunc]).astype(np.float64))
        d.array("seat", info["learner_seat"])
    venv.close()


def _jax(case: Case, d: Digest) -> None:
    import jax
    import jax.numpy as jnp

    import memtab_env.jax as mj

    def legal_action(key: jax.Array, mask: jax.Array) -> jax.Array:
        return mj.uniform_legal(key, mask)

    if case.backend == "jax":
        env = mj.make(case.env_id, memory=case.memory)
        init, step_fn = env.init, env.step
    else:
        view = mj.make_single_agent(case.env_id, opponents=case.players, learner_seat="random",
                                    memory=case.memory)
        init, step_fn = view.reset, view.step
    step = mj.auto_reset(step_fn, init)

    def body(states: Any, key: jax.Array) -> tuple[Any, Any]:
        k_act, k_new = jax.random.split(key)
        actions = jax.vmap(legal_action)(jax.random.split(k_act, JAX_GAMES), states.legal_action_mask)
        states = jax.vmap(step)(states, actions, jax.random.split(k_new, JAX_GAMES))
        rew = states.rewards if case.backend == "jax" else states.reward
        seen = (states.observation, states.legal_action_mask, rew, states.terminated, states.truncated)
        return states, seen

    @jax.jit
    def run(key: jax.Array) -> Any:
        k0, k1 = jax.random.split(key)
        states = jax.vmap(init)(jax.random.split(k0, JAX_GAMES))
        first = (states.observation, states.legal_action_mask)
        return first, jax.lax.scan(body, states, jax.random.split(k1, JAX_STEPS))[1]

    first, seen = run(jax.random.key(SEED))
    for name, value in zip(("obs", "mask"), first, strict=True):
        d.array(name, value)
    for name, value in zip(("obs", "mask", "reward", "terminated", "truncated"), seen, strict=True):
        d.array(name, jnp.asarray(value))


_ROLLOUTS: dict[str, Callable[[Case, Digest], None]] = {
    "aec": _aec, "gym": _gym, "vector": _vector, "jax": _jax, "jax-single": _jax}


def rollout_hash(case: Case) -> str:
    """The SHA-256 of ``case``'s rollout."""
    d = Digest()
    _ROLLOUTS[case.backend](case, d)
    return d.hexdigest()


def jax_available() -> bool:
    try:
        import memtab_env.jax  # noqa: F401
    except ImportError:
        return False
    return True


def compute(selected: Iterable[Case]) -> dict[str, str]:
    """Key -> hash of the ``selected`` cases."""
    return {c.key: rollout_hash(c) for c in selected}


def load_golden(path: Path = GOLDEN_FILE) -> dict[str, str]:
    """The committed hashes (key -> hash), checked to be what this module writes."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a {SCHEMA} file")
    hashes = data.get("trajectories")
    if not isinstance(hashes, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in hashes.items()):
        raise ValueError(f"{path}: 'trajectories' must map case keys to SHA-256 hex digests")
    return hashes


def write_golden(hashes: dict[str, str], path: Path = GOLDEN_FILE) -> None:
    from memtab_env.platform_info import platform_info

    data = {"schema": SCHEMA, "platform": platform_info(), "trajectories": dict(sorted(hashes.items()))}
    path.write_text(json.dumps(data, indent=1) + "\n")


@dataclass
class Comparison:
    """What differs between computed and committed hashes."""

    changed: list[str]
    new: list[str]
    missing: list[str]

    @property
    def ok(self) -> bool:
        return not (self.changed or self.new or self.missing)

    def message(self) -> str:
        lines = []
        for title, keys in (("changed", self.changed), ("not in the golden file", self.new),
                            ("in the golden file but no longer a case", self.missing)):
            if keys:
                lines.append(f"{len(keys)} trajectory hash(es) {title}:")
                lines += [f"  {k}" for k in keys[:20]] + (["  ..."] if len(keys) > 20 else [])
        if self.changed:
            ids = sorted({k.split("/")[0] for k in self.changed})
            lines += [
                f"The streams of {', '.join(ids)} changed: what users of these ids see is no longer",
                "what it was. If the change is deliberate, bump the env's version in",
                "memtab_env/registry.py (e.g. MemTab-v0 -> MemTab-v1; the old id is retired there",
                "with a clear error, docs/versioning.md), write a CHANGELOG.md line saying what",
                "changed, then run `python -m tests.golden.regenerate --accept`. If it is not",
                "deliberate, it is a bug.",
            ]
        elif self.new or self.missing:
            lines.append("Run `python -m tests.golden.regenerate --accept` to record the cases.")
        return "\n".join(lines)


def compare(computed: dict[str, str], golden: dict[str, str], scope: Iterable[str] | None = None
            ) -> Comparison:
    """Compare ``computed`` hashes with ``golden`` over the keys in ``scope`` (default:
    every key of either)."""
    keys = set(computed) | set(golden) if scope is None else set(scope)
    return Comparison(
        changed=sorted(k for k in keys if k in computed and k in golden and computed[k] != golden[k]),
        new=sorted(k for k in keys if k in computed and k not in golden),
        missing=sorted(k for k in keys if k in golden and k not in computed),
    )
