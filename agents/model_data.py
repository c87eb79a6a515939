"""Stable-Baselines3 zips as data: rebuild a policy from its weights and plain settings,
without unpickling anything from the file.

A zip written by ``model.save`` holds ``data`` (JSON, in which SB3 stores objects it
cannot write as JSON, the policy class and the spaces among them, as base64 pickles),
``policy.pth`` (the weights, a ``torch.save`` of a state dict) and files only training
needs. Unpickling ``data`` runs whatever code the file names, so :func:`load_policy`
never does. It reads:

- the **policy class** from its pickle *without running it*: the pickle's opcodes are
  read with :mod:`pickletools` and must be a single reference to a class (no call, no
  object built), and that class must be one of :data:`POLICY_CLASSES` (SB3's and
  sb3-contrib's policies and this package's), imported by this module;
- the **spaces** from the plain fields SB3 writes beside each pickle (``_shape``,
  ``dtype``, ``n``): a flat ``Box`` and a ``Discrete`` are all the package's models use;
- ``policy_kwargs``, plain JSON or a pickle of plain values (numbers, strings, lists,
  dicts) and activation classes of :data:`SETTING_CLASSES`, checked opcode by opcode
  (nothing is called, no object is built) and read by an unpickler that resolves only
  those classes;
- the **weights** with ``torch.load(weights_only=True)``, which refuses anything but
  tensors and plain containers.

A file that needs more (another policy class, a ``Dict`` observation space, settings
that are pickled objects) is refused with :class:`ModelFileError`, naming the field;
only the explicit opt-in ``trust_pickle=True`` of :class:`memtab_env.agents.sb3_policy.SB3Agent`
(``--trust-pickle`` on the command line) loads it with SB3's own loader, which unpickles.
Size limits guard against zip bombs.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import io
import json
import pickle
import pickletools
import zipfile
from pathlib import Path
from typing import Any

from memtab_env.errors import MemTabError

#: largest zip and largest member read (after decompression)
MAX_ZIP_BYTES = 1 << 30
MAX_MEMBER_BYTES = 512 << 20

#: policy classes a model file may name -> the algorithm that plays it
POLICY_CLASSES: dict[tuple[str, str], str] = {
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): "MaskablePPO",
    ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"): "MaskablePPO",
    ("sb3_contrib.common.recurrent.policies", "RecurrentActorCriticPolicy"): "RecurrentPPO",
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): "PPO",
    ("stable_baselines3.dqn.policies", "DQNPolicy"): "DQN",
    ("memtab_env.agents.set_policy", "MemTabSetPolicy"): "PPO",
    ("memtab_env.agents.set_policy", "MaskableMemTabSetPolicy"): "MaskablePPO",
    ("memtab_env.agents.recurrent_policy", "ObsMaskedLstmPolicy"): "RecurrentPPO",
    ("memtab_env.agents.recurrent_policy", "SlotMemoryPolicy"): "RecurrentPPO",
}
#: classes a pickled ``policy_kwargs`` may name (referenced, never called here)
SETTING_CLASSES = {("torch.nn.modules.activation", n) for n in
                   ("ReLU", "Tanh", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Mish")} | {
    ("stable_baselines3.common.torch_layers", "FlattenExtractor"),
    ("memtab_env.agents.set_policy", "SetFeatures"),
}
#: opcodes of a pickle of plain values and class references: no call, no object built
_DATA_OPS = {"PROTO", "FRAME", "STOP", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET",
             "LONG_BINGET", "MARK", "EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2",
             "TUPLE3", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "BININT", "BININT1", "BININT2", "LONG1",
             "INT", "LONG", "BINFLOAT", "FLOAT", "NEWTRUE", "NEWFALSE", "NONE", "SHORT_BINUNICODE",
             "BINUNICODE", "BINUNICODE8", "UNICODE", "STACK_GLOBAL", "GLOBAL"}
#: modules that moved: zips saved before the baselines moved under memtab_env name these
_MOVED = {"agents": "memtab_env.agents"}
#: opcodes of a pickle that only names a global (no call, no object construction)
_REFERENCE_OPS = {"PROTO", "FRAME", "SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "MEMOIZE", "BINPUT",
                  "LONG_BINPUT", "PUT", "STACK_GLOBAL", "GLOBAL", "STOP"}


class ModelFileError(MemTabError, ValueError):
    """A model file that cannot be loaded as data (malformed, or needing unpickling)."""


def _moved(module: str) -> str:
    head, dot, rest = module.partition(".")
    return _MOVED[head] + dot + rest if head in _MOVED else module


def class_reference(entry: Any, source: str, field: str) -> tuple[str, str]:
    """``(module, name)`` of the class that the pickled ``entry`` of SB3's ``data`` names,
    read from its opcodes without unpickling; :class:`ModelFileError` if the pickle does
    anything but name one global."""
    if not isinstance(entry, dict) or not isinstance(entry.get(":serialized:"), str):
        raise ModelFileError(f"{source}: field {field}: expected a serialized class reference")
    try:
        raw = base64.b64decode(entry[":serialized:"].encode(), validate=True)
        ops = list(pickletools.genops(raw))
    except Exception as exc:  # malformed base64 or pickle: whatever the decoder says
        raise ModelFileError(f"{source}: field {field}: not a readable pickle ({exc})") from None
    names = [op.name for op, _, _ in ops]
    bad = sorted(set(names) - _REFERENCE_OPS)
    if bad:
        raise ModelFileError(f"{source}: field {field}: the pickle does more than name a class "
                             f"(opcodes {bad}); it is not loaded without --trust-pickle")
    strings = [arg for op, arg, _ in ops if op.name.endswith("UNICODE")]
    if names.count("STACK_GLOBAL") == 1 and len(strings) == 2:
        module, name = strings
    elif names.count("GLOBAL") == 1 and not strings:
        module, _, name = next(arg for op, arg, _ in ops if op.name == "GLOBAL").partition(" ")
    else:
        raise ModelFileError(f"{source}: field {field}: not a single class reference")
    return _moved(str(module)), str(name)


class _SettingsUnpickler(pickle.Unpickler):
    """Resolves only the classes of :data:`SETTING_CLASSES` (the opcodes were checked
    first: nothing is called)."""

    def find_class(self, module: str, name: str) -> Any:
        module = _moved(module)
        if (module, name) not in SETTING_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not an allowed setting")
        return super().find_class(module, name)


def plain_settings(entry: Any, source: str, field: str) -> dict[str, Any]:
    """The pickled settings ``entry`` (a dict of plain values and allowed classes), read
    without running anything: opcodes checked, then unpickled with only
    :data:`SETTING_CLASSES` resolvable; :class:`ModelFileError` otherwise."""
    try:
        raw = base64.b64decode(entry[":serialized:"].encode(), validate=True)
        names = {op.name for op, _, _ in pickletools.genops(raw)}
    except Exception as exc:  # malformed base64 or pickle
        raise ModelFileError(f"{source}: field {field}: not a readable pickle ({exc})") from None
    bad = sorted(names - _DATA_OPS)
    if bad:
        raise ModelFileError(f"{source}: field {field}: the pickle does more than hold values (opcodes "
                             f"{bad}); it is not loaded without --trust-pickle")
    try:
        value = _SettingsUnpickler(io.BytesIO(raw)).load()
    except Exception as exc:  # an unknown class, a truncated pickle
        raise ModelFileError(f"{source}: field {field}: {exc}; it is not loaded without "
                             "--trust-pickle") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ModelFileError(f"{source}: field {field}: expected a dict of settings")
    return value


def policy_class(data: dict[str, Any], source: str) -> tuple[type, str]:
    """The allowed policy class named by ``data`` and its algorithm."""
    key = class_reference(data.get("policy_class"), source, "policy_class")
    if key not in POLICY_CLASSES:
        allowed = ", ".join(f"{m}.{n}" for m, n in POLICY_CLASSES)
        raise ModelFileError(f"{source}: field policy_class: {key[0]}.{key[1]} is not a policy class this "
                             f"package loads as data (allowed: {allowed}); only with --trust-pickle")
    return getattr(importlib.import_module(key[0]), key[1]), POLICY_CLASSES[key]


def _space(entry: Any, source: str, field: str) -> Any:
    """The space of ``entry``, from the plain fields SB3 writes beside its pickle (the
    pickle itself is never read)."""
    from gymnasium import spaces

    if not isinstance(entry, dict):
        raise ModelFileError(f"{source}: field {field}: expected an object")
    kind = entry.get(":type:", "")
    try:
        if kind == "<class 'gymnasium.spaces.discrete.Discrete'>":
            n, start = int(entry["n"]), int(entry.get("start", 0))
            if not 1 <= n <= 1_000_000 or start != 0:
                raise ValueError(f"n={n}, start={start}")
            return spaces.Discrete(n)
        if kind == "<class 'gymnasium.spaces.box.Box'>":
            shape = entry["_shape"]
            shape = json.loads(shape) if isinstance(shape, str) else shape
            dtype = entry["dtype"]
            if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int)
                    and 1 <= shape[0] <= 1_000_000 and dtype in ("float32", "float64")):
                raise ValueError(f"shape {shape!r:.40}, dtype {dtype!r:.20}")
            return spaces.Box(-float("inf"), float("inf"), shape=(shape[0],), dtype=dtype)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{source}: field {field}: not a space this package reads ({exc})") from None
    raise ModelFileError(f"{source}: field {field}: a {kind[:80]} is not read as data (a flat Box or a "
                         "Discrete is); only with --trust-pickle")


def _read(z: zipfile.ZipFile, name: str, source: str) -> bytes:
    try:
        info = z.getinfo(name)
    except KeyError:
        raise ModelFileError(f"{source}: no {name!r} in the zip (not a model of this kind)") from None
    if info.file_size > MAX_MEMBER_BYTES:
        raise ModelFileError(f"{source}: {name} is {info.file_size} bytes, more than {MAX_MEMBER_BYTES}")
    with z.open(info) as f:
        out = f.read(MAX_MEMBER_BYTES + 1)
    if len(out) > MAX_MEMBER_BYTES:
        raise ModelFileError(f"{source}: {name} decompresses to more than {MAX_MEMBER_BYTES} bytes")
    return out


def members(path: str | Path, *names: str) -> list[bytes]:
    """The members ``names`` of the model zip ``path`` (SB3 or JAX PPO), read within the
    size limits; :class:`ModelFileError` naming the file otherwise."""
    from memtab_env import untrusted

    source = str(path)
    f = untrusted.open_regular(path, ModelFileError, MAX_ZIP_BYTES)
    try:
        with zipfile.ZipFile(f) as z:
            return [_read(z, name, source) for name in names]
    except zipfile.BadZipFile as exc:
        raise ModelFileError(f"{source}: not a zip file ({exc})") from None
    finally:
        f.close()


def is_jax_checkpoint(path: str | Path) -> bool:
    """Whether the zip ``path`` is a JAX PPO checkpoint (it has a ``policy.json``
    member; :mod:`memtab_env.jax.ppo`) rather than a Stable-Baselines3 model; reads only
    the zip's directory. :class:`ModelFileError` at once for a missing or non-regular file
    (a pipe, a device, a folder)."""
    from memtab_env import untrusted

    f = untrusted.open_regular(path, ModelFileError, MAX_ZIP_BYTES)  # never a pipe or a device
    try:
        with zipfile.ZipFile(f) as z:
            return "policy.json" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    finally:
        f.close()


def _parse_data(text: Any, source: str) -> dict[str, Any]:
    """The zip's ``data`` member as a JSON object."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"{source}: data: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{source}: data: expected a JSON object")
    return data


def read_data(path: str | Path) -> dict[str, Any]:
    """The ``data`` JSON of the SB3 zip ``path`` (nothing unpickled)."""
    (text,) = members(path, "data")
    return _parse_data(text, str(path))


def detect_algo(path: str | Path) -> str:
    """The algorithm that plays the zip ``path`` (from its policy class, read as data)."""
    return policy_class(read_data(path), str(path))[1]


def load_policy(path: str | Path, device: str = "cpu") -> tuple[Any, str]:
    """``(policy, algorithm)`` of the SB3 zip ``path``, rebuilt from its weights and plain
    settings without unpickling (module docstring); :class:`ModelFileError` otherwise."""
    import torch as th
    from stable_baselines3.common.policies import ActorCriticPolicy

    source = str(path)
    text, weights = members(path, "data", "policy.pth")
    data = _parse_data(text, source)
    cls, algo = policy_class(data, source)
    obs_space = _space(data.get("observation_space"), source, "observation_space")
    act_space = _space(data.get("action_space"), source, "action_space")
    kwargs = data.get("policy_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ModelFileError(f"{source}: field policy_kwargs: expected an object")
    kwargs = plain_settings(kwargs, source, "policy_kwargs") if ":serialized:" in kwargs else dict(kwargs)
    if issubclass(cls, ActorCriticPolicy) and "use_sde" in inspect.signature(ActorCriticPolicy).parameters \
            and algo in ("PPO", "RecurrentPPO"):
        kwargs.setdefault("use_sde", bool(data.get("use_sde", False)))
    try:
        policy = cls(obs_space, act_space, lambda _progress: 0.0, **kwargs)
    except (TypeError, ValueError, KeyError, RuntimeError) as exc:
        raise ModelFileError(f"{source}: field policy_kwargs: the policy cannot be built from them "
                             f"({type(exc).__name__}: {exc})") from None
    try:
        state = th.load(io.BytesIO(weights), map_location=device, weights_only=True)
        policy.load_state_dict(state)
    except Exception as exc:  # torch's weights-only unpickler and load_state_dict raise many types
        raise ModelFileError(f"{source}: policy.pth: not weights of this policy "
                             f"({type(exc).__name__}: {str(exc)[:300]})") from None
    policy.to(device)
    policy.set_training_mode(False)
    return policy, algo
