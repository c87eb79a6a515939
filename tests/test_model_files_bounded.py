"""Model files bounded before any work: a JAX checkpoint's config has an upper bound on
every size and a type for every field, its weights must be exactly the arrays of the
network the config names (checked from their headers before a network is built), and
every entry point that opens a model or a training state refuses a pipe, a device or a
folder at once. Each refusal is an ``InvalidOptionError`` / ``ModelFileError`` naming the
file and the field, within seconds."""

from __future__ import annotations

import io
import json
import os
import signal
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("jax")

from memtab_env.agents.model_data import ModelFileError  # noqa: E402

from memtab_env.errors import InvalidOptionError, MemTabError  # noqa: E402
from memtab_env.jax import ppo  # noqa: E402
from memtab_env.jax.ppo.config import LIMITS  # noqa: E402

CONFIG = ppo.PPOConfig(recurrent_size=8, num_envs=4, num_steps=4, total_timesteps=64, num_minibatches=1,
                       update_epochs=1, set_layers=1)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ckpt") / "good.zip"
    ppo.save(path, ppo.make_policy(CONFIG), CONFIG)
    return path


def _members(path: Path) -> tuple[dict, bytes]:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("policy.json")), z.read("policy.eqx")


def _write(path: Path, meta: dict | bytes, weights: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("policy.json", meta if isinstance(meta, bytes) else json.dumps(meta))
        z.writestr("policy.eqx", weights)
    return path


def _refused(path: Path, match: str, seconds: float = 10.0) -> str:
    start = time.monotonic()
    with pytest.raises((InvalidOptionError, ModelFileError), match=match) as info:
        ppo.load(path)
    assert time.monotonic() - start < seconds
    assert str(path) in str(info.value)
    return str(info.value)


def test_the_good_checkpoint_loads(good):
    policy, config = ppo.load(good)
    assert config == CONFIG


@pytest.mark.parametrize("field", sorted(LIMITS))
def test_every_size_field_has_an_upper_bound(good, tmp_path, field):
    meta, weights = _members(good)
    meta["config"][field] = LIMITS[field] + 1
    _refused(_write(tmp_path / "big.zip", meta, weights), rf"policy.json: field config: .*{field} must be "
                                                          rf"an integer in \[\d, {LIMITS[field]}\]")


def test_a_million_layers_is_refused_in_a_moment(good, tmp_path):
    """The reported file: 10 kB with a layer count of a million."""
    meta, weights = _members(good)
    meta["config"]["num_layers"] = 10**6
    _refused(_write(tmp_path / "deep.zip", meta, weights), "num_layers", seconds=2.0)


@pytest.mark.parametrize(("field", "value"), [
    ("recurrent_size", "8"), ("recurrent_size", 8.0), ("recurrent_size", True), ("num_layers", None),
    ("learning_rate", "0.1"), ("learning_rate", True), ("env_options", []), ("env_options", {"a": [1]}),
    ("memory_kwargs", "window"), ("memory_kwargs", {"window_size": 10**9}), ("anneal_lr", "yes"),
    ("latch_init", 1), ("env_id", 7), ("encoder", ["set"]), ("memory_model", None), ("learner_seat", 1.5),
    ("seed", -1), ("seed", 2**64), ("num_devices", "all"),
])
def test_wrong_field_types_are_refused_naming_the_field(good, tmp_path, field, value):
    meta, weights = _members(good)
    meta["config"][field] = value
    _refused(_write(tmp_path / "typed.zip", meta, weights), field)


@pytest.mark.parametrize(("text", "match"), [
    (b'{"format": "memtab-jax-ppo/1", "format": "memtab-jax-ppo/1", "config": {}}', "duplicate key 'format'"),
    (b'{"format": "memtab-jax-ppo/1", "config": {"seed": 1, "seed": 2}}', "duplicate key 'seed'"),
    (b'{"format": "memtab-jax-ppo/1", "config": {"learning_rate": NaN}}', "NaN"),
    (b'{"format": "memtab-jax-ppo/1", "config": {}} {}', "extra data"),
    (b'{"format": "memtab-jax-ppo/1", "config": []}', "a PPO config is a JSON object"),
    (b'{"format": "memtab-jax-ppo/1", "config": {"layers": 2}}', "unknown PPO config field"),
    (b"\xff\xfe", "not UTF-8"),
    (b"[" * 10_000 + b"]" * 10_000, "nested deeper"),
])
def test_the_config_is_strict_json(good, tmp_path, text, match):
    _, weights = _members(good)
    _refused(_write(tmp_path / "json.zip", text, weights), match)


def test_bytes_after_the_weights_are_refused(good, tmp_path):
    meta, weights = _members(good)
    message = _refused(_write(tmp_path / "tail.zip", meta, weights + b"\x00" * 7), "7 bytes after the")
    assert "policy.eqx" in message


def test_weights_of_another_network_are_refused_before_it_is_built(good, tmp_path, monkeypatch):
    meta, weights = _members(good)
    meta["config"]["recurrent_size"] = 1024
    meta["config"]["num_layers"] = 8
    built = []
    real = ppo.checkpoints.make_policy
    monkeypatch.setattr(ppo.checkpoints, "make_policy", lambda *a, **k: (built.append(1), real(*a, **k))[1])
    _refused(_write(tmp_path / "other.zip", meta, weights),
             r"policy.eqx does not fit the config: array \d+ is")
    # make_policy ran only abstractly (under eval_shape): no network of that size exists
    assert len(built) <= 1


def test_cut_and_object_arrays_are_refused(good, tmp_path):
    meta, weights = _members(good)
    _refused(_write(tmp_path / "cut.zip", meta, weights[: len(weights) // 2]), "cut short|cannot be read")
    f = io.BytesIO()
    np.save(f, np.array([1, None], dtype=object), allow_pickle=True)
    _refused(_write(tmp_path / "obj.zip", meta, f.getvalue() + weights), "array 0 is object")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096), position=st.integers(0, 10**6))
def test_fuzz_damaged_weights_are_refused_cleanly(good, tmp_path, data, position):
    meta, weights = _members(good)
    k = position % (len(weights) + 1)
    damaged = weights[:k] + data + weights[k + len(data):]
    path = _write(tmp_path / "fuzz.zip", meta, damaged)
    try:
        ppo.load(path)
    except MemTabError:
        return
    assert len(damaged) == len(weights)  # accepted only with the same headers (changed numbers)


# --- non-regular files at every entry point -------------------------------------------------

@pytest.fixture(params=["fifo", "dev-zero", "folder"])
def hostile(request, tmp_path) -> Path:
    path = tmp_path / "model.zip"
    if request.param == "fifo":
        os.mkfifo(path)
    elif request.param == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    return path


@pytest.fixture()
def alarm():
    """Fail instead of hanging: every open must return at once."""
    def raise_(signum, frame):
        raise TimeoutError("blocked on a non-regular file")
    old = signal.signal(signal.SIGALRM, raise_)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_agents_make_refuses_a_non_regular_file_at_once(hostile, alarm):
    from memtab_env import agents

    with pytest.raises(ModelFileError, match=f"{hostile}: (is a folder|not a regular file)"):
        agents.make(str(hostile))


def test_sb3_agent_refuses_a_non_regular_file_at_once(hostile, alarm):
    from memtab_env.agents.sb3_policy import SB3Agent

    with pytest.raises(ModelFileError, match="is a folder|not a regular file"):
        SB3Agent(hostile)


def test_ppo_load_refuses_a_non_regular_file_at_once(hostile, alarm):
    with pytest.raises(ModelFileError, match="is a folder|not a regular file"):
        ppo.load(hostile)


@pytest.fixture(scope="module")
def runner():
    """A training state's structure (load_runner reads any pytree of arrays and keys)."""
    import jax

    return {"weights": jax.numpy.ones((3, 2)), "step": jax.numpy.int32(5), "key": jax.random.key(1)}


def test_load_runner_refuses_a_non_regular_file_at_once(runner, hostile, alarm):
    with pytest.raises(InvalidOptionError, match="is a folder|not a regular file"):
        ppo.load_runner(hostile, runner)


def test_load_runner_refuses_trailing_bytes_and_other_shapes(runner, tmp_path):
    ppo.save_runner(tmp_path / "state.eqx", runner)
    data = (tmp_path / "state.eqx").read_bytes()
    (tmp_path / "tail.eqx").write_bytes(data + b"x")
    with pytest.raises(InvalidOptionError, match="1 bytes after the"):
        ppo.load_runner(tmp_path / "tail.eqx", runner)
    other = {**runner, "weights": runner["weights"].T}
    with pytest.raises(InvalidOptionError, match=r"of this config: array \d is float32 \(3, 2\)"):
        ppo.load_runner(tmp_path / "state.eqx", other)
    assert ppo.load_runner(tmp_path / "state.eqx", runner) is not None
