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
import numpy as np

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


#: largest training-state file read by :func:`load_runner`
MAX_STATE_BYTES = 4 << 30


def load_runner(path: str | Path, like: Runner) -> Runner:
    """Read :func:`save_runner`'s file into the structure of ``like`` (a fresh runner of
    the same config and seeds). Only a regular file is read (a pipe, a device or a folder
    is refused at once), and only when its arrays are exactly ``like``'s, in number,
    shape and dtype, with nothing after them."""
    from memtab_env import untrusted

    data = untrusted.read_bytes(path, InvalidOptionError, MAX_STATE_BYTES)
    raw = jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, like)
    check_leaves(data, raw, f"{path}: not a training state of this config")
    try:
        raw = eqx.tree_deserialise_leaves(io.BytesIO(data), raw)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: not a training state of this config ({exc})") from None
    return jax.tree.map(lambda x, y: jax.random.wrap_key_data(y) if _is_key(x) else y, like, raw)


def _expected(like: Any) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Shape and dtype of every leaf equinox serialises, in order (abstract leaves too)."""
    out = []
    for leaf in jax.tree.leaves(like):
        if isinstance(leaf, (jax.Array, jax.ShapeDtypeStruct, np.ndarray)):
            out.append((tuple(leaf.shape), np.dtype(leaf.dtype)))
        elif eqx.is_array_like(leaf):
            arr = np.asarray(leaf)
            out.append((arr.shape, arr.dtype))
    return out


def check_leaves(data: bytes, like: Any, what: str) -> None:
    """Refuse (:class:`InvalidOptionError` starting ``what``) serialised leaves ``data``
    that are not exactly ``like``'s: one ``.npy`` array per leaf, each of its shape and
    dtype, no object arrays, no bytes after the last. Reads only the arrays' headers."""
    expected = _expected(like)
    f = io.BytesIO(data)
    for k, (shape, dtype) in enumerate(expected):
        try:
            version = np.lib.format.read_magic(f)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)
            got_shape, _, got_dtype = header(f)
        except Exception as exc:  # numpy raises ValueError or others for a bad header
            raise InvalidOptionError(f"{what}: array {k} of {len(expected)} cannot be read ({exc})") from None
        if got_dtype.hasobject or tuple(got_shape) != shape or got_dtype != dtype:
            raise InvalidOptionError(f"{what}: array {k} is {got_dtype} {tuple(got_shape)}, the network "
                                     f"needs {dtype} {shape}")
        f.seek(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, io.SEEK_CUR)
        if f.tell() > len(data):
            raise InvalidOptionError(f"{what}: array {k} is cut short")
    if f.tell() != len(data):
        raise InvalidOptionError(f"{what}: {len(data) - f.tell()} bytes after the {len(expected)} arrays of "
                                 "the network")


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
    """``policy.json`` as strict JSON (:func:`memtab_env.untrusted.loads_json`: no
    duplicate keys, no NaN, nothing after the value), an object of the format."""
    from memtab_env import untrusted

    source = f"{path}: {CONFIG_MEMBER}"
    error = InvalidOptionError
    meta = untrusted.loads_json(untrusted.decode(text, source, error), source, error)
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise InvalidOptionError(f"{source}: field format: the format must be {CHECKPOINT_FORMAT!r}")
    return meta


def load(path: str | Path) -> tuple[ActorCritic, PPOConfig]:
    """Rebuild a policy from :func:`save`'s zip: the config (strict JSON, every field of
    its type and within :data:`memtab_env.jax.ppo.config.LIMITS`), then the weights'
    shapes checked against the network the config names (computed abstractly, nothing
    allocated), then the network and its weights (numbers only; nothing in the file is
    executed or unpickled). A non-regular file is refused before it is read."""
    from memtab_env.agents.model_data import members

    text, weights = members(path, CONFIG_MEMBER, WEIGHTS_MEMBER)
    try:
        config = PPOConfig.from_json(_parse_meta(text, path).get("config"))
    except InvalidOptionError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise InvalidOptionError(f"{path}: {CONFIG_MEMBER}: field config: {exc}") from None
    check_leaves(weights, eqx.filter_eval_shape(make_policy, config),
                 f"{path}: {WEIGHTS_MEMBER} does not fit the config")
    like = make_policy(config)
    try:
        policy = eqx.tree_deserialise_leaves(io.BytesIO(weights), like)
    except Exception as exc:  # equinox raises several types for a bad file
        raise InvalidOptionError(f"{path}: {WEIGHTS_MEMBER} does not fit the config ({exc})") from None
    return policy, config
