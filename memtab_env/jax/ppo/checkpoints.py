"""Files of the JAX PPO, data and never code: a policy checkpoint (one zip holding the
config as JSON and the weights as equinox's leaf serialisation, :func:`save`,
:func:`load`) and the whole training state for resuming (:func:`save_runner`,
:func:`load_runner`). No pickle: nothing in a file is executed."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from memtab_env.atomic import atomic_file, write_with
from memtab_env.errors import InvalidOptionError
from memtab_env.jax.ppo.algorithm import Runner
from memtab_env.jax.ppo.config import PPOConfig
from memtab_env.jax.ppo.networks import ActorCritic, make_policy

CHECKPOINT_FORMAT = "memtab-jax-ppo/1"


def _is_key(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def save_runner(path: str | Path, runner: Runner) -> None:
    """The whole training state (weights, optimiser, games, keys) as equinox leaves, for
    resuming; numbers only."""
    leaves = jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, runner)
    write_with(path, lambda tmp: eqx.tree_serialise_leaves(tmp, leaves))


def load_runner(path: str | Path, like: Runner) -> Runner:
    """Read :func:`save_runner`'s file into the structure of ``like`` (a fresh runner of
    the same config and seeds)."""
    raw = jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, like)
    try:
        raw = eqx.tree_deserialise_leaves(path, raw)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: not a training state of this config ({exc})") from None
    return jax.tree.map(lambda x, y: jax.random.wrap_key_data(y) if _is_key(x) else y, like, raw)


# -- checkpoints: weights and plain config, no pickle -----------------------------------
#: the members of a checkpoint zip
CONFIG_MEMBER, WEIGHTS_MEMBER = "policy.json", "policy.eqx"


def save(path: str | Path, policy: ActorCritic, config: PPOConfig,
         extra: dict[str, Any] | None = None) -> Path:
    """Write the policy as one zip file: ``policy.json`` (the format, the config and
    ``extra``, plain JSON) and ``policy.eqx`` (the weights, equinox's leaf serialisation:
    numbers only). The file is replaced atomically."""
    path = Path(path)
    weights = io.BytesIO()
    eqx.tree_serialise_leaves(weights, policy)
    meta = {"format": CHECKPOINT_FORMAT, "config": config.to_json(), **(extra or {})}
    with atomic_file(path, binary=True) as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(CONFIG_MEMBER, json.dumps(meta, indent=2, sort_keys=True))
        z.writestr(WEIGHTS_MEMBER, weights.getvalue())
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """The checkpoint's ``policy.json``, checked for the format."""
    from memtab_env.agents.model_data import members

    (text,) = members(path, CONFIG_MEMBER)
    return _parse_meta(text, path)


def _parse_meta(text: bytes, path: str | Path) -> dict[str, Any]:
    try:
        meta = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidOptionError(f"{path}: {CONFIG_MEMBER} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise InvalidOptionError(f"{path}: {CONFIG_MEMBER}: format must be {CHECKPOINT_FORMAT!r}")
    return meta


def load(path: str | Path) -> tuple[ActorCritic, PPOConfig]:
    """Rebuild a policy from :func:`save`'s zip: the network from the JSON config, then
    its weights (numbers only; nothing in the file is executed or unpickled)."""
    from memtab_env.agents.model_data import members

    text, weights = members(path, CONFIG_MEMBER, WEIGHTS_MEMBER)
    config = PPOConfig.from_json(_parse_meta(text, path).get("config"))
    like = make_policy(config)
    try:
        policy = eqx.tree_deserialise_leaves(io.BytesIO(weights), like)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: {WEIGHTS_MEMBER} does not fit the config ({exc})") from None
    return policy, config

