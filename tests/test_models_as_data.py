"""Models are data: a model file is rebuilt from its weights and plain settings, never
unpickled, unless the caller opts in with ``trust_pickle``; hostile model files are refused
and run nothing."""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import pytest
from memtab_env.agents.model_data import ModelFileError, detect_algo, load_policy
from memtab_env.agents.sb3_policy import SB3Agent
from memtab_env.agents.shipped import SHIPPED, shipped_path

from memtab_env import agents
from memtab_env.play import make_raw_env, play_game

SHIPPED_ZIP = shipped_path("ppo-memtab")


class _Boom:
    """Unpickling this runs ``os.system`` (what a hostile model file does)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _rewrite(src: Path, dst: Path, data_edit=None, members: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            raw = zin.read(item)
            if item.filename == "data" and data_edit is not None:
                obj = json.loads(raw)
                data_edit(obj)
                raw = json.dumps(obj).encode()
            if members and item.filename in members:
                raw = members[item.filename]
            zout.writestr(item, raw)
    return dst


def _serialized(obj) -> dict:
    return {":type:": "<class 'x'>", ":serialized:": base64.b64encode(pickle.dumps(obj)).decode()}


@pytest.mark.parametrize("name", sorted(n for n, (_, algo) in SHIPPED.items() if algo != "jax_ppo"))
def test_shipped_policies_load_as_data(name):
    policy, algo = load_policy(shipped_path(name))
    assert algo == SHIPPED[name][1]
    assert detect_algo(shipped_path(name)) == algo


@pytest.mark.parametrize("name", sorted(n for n, (_, algo) in SHIPPED.items() if algo == "jax_ppo"))
def test_shipped_jax_policies_are_checkpoints_of_data(name):
    """A JAX policy is a zip of a JSON config and equinox weights, which the
    Stable-Baselines3 loader refuses and the JAX loader rebuilds."""
    from memtab_env.agents.model_data import is_jax_checkpoint

    with zipfile.ZipFile(shipped_path(name)) as z:
        assert sorted(z.namelist()) == ["policy.eqx", "policy.json"]
    assert is_jax_checkpoint(shipped_path(name))
    with pytest.raises(ModelFileError, match="not a model of this kind"):
        load_policy(shipped_path(name))
    pytest.importorskip("memax")
    from memtab_env.jax.ppo import load

    _, config = load(shipped_path(name))
    assert config.env_options["memory"] == "none"


def test_data_and_pickle_loading_play_alike():
    data, pickled = SB3Agent(SHIPPED_ZIP), SB3Agent(SHIPPED_ZIP, trust_pickle=True)
    env = make_raw_env("memtab", num_players=2)
    for seed in range(2):
        a = play_game(env, [data, agents.make("greedy")], seed=seed)
        b = play_game(env, [pickled, agents.make("greedy")], seed=seed)
        assert a["actions"] == b["actions"]


@pytest.mark.parametrize("field", ["policy_class", "policy_kwargs", "observation_space"])
def test_a_model_whose_settings_run_code_is_refused_and_runs_nothing(tmp_path, field):
    marker = tmp_path / "pwned"
    hostile = _rewrite(SHIPPED_ZIP, tmp_path / "hostile.zip",
                       lambda d: d.update({field: _serialized(_Boom(marker))}))
    with pytest.raises(ModelFileError, match=field):
        SB3Agent(hostile)
    with pytest.raises(ModelFileError):
        agents.make(str(hostile))
    assert not marker.exists()


def test_hostile_weights_are_refused_and_run_nothing(tmp_path):
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    import torch

    torch.save({"x": _Boom(marker)}, buf)
    hostile = _rewrite(SHIPPED_ZIP, tmp_path / "hostile.zip", members={"policy.pth": buf.getvalue()})
    with pytest.raises(ModelFileError, match="policy.pth"):
        SB3Agent(hostile)
    assert not marker.exists()


def test_a_class_outside_the_list_is_refused_even_as_a_bare_reference(tmp_path):
    hostile = _rewrite(SHIPPED_ZIP, tmp_path / "m.zip",
                       lambda d: d.update(policy_class=_serialized(os.system)))
    with pytest.raises(ModelFileError, match="not a policy class"):
        detect_algo(hostile)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not really", b"\x00" * 100])
def test_broken_model_files_are_refused(tmp_path, content):
    path = tmp_path / "m.zip"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=str(path)):
        SB3Agent(path)


def test_unpickling_is_an_explicit_opt_in_from_the_command_line(tmp_path):
    from memtab_env.protocol.cli import evaluate_main

    marker = tmp_path / "pwned"
    hostile = _rewrite(SHIPPED_ZIP, tmp_path / "hostile.zip",
                       lambda d: d.update(policy_class=_serialized(_Boom(marker))))
    with pytest.raises(ModelFileError):
        evaluate_main(["--agent", str(hostile), "--track", "memtab-2p", "--games", "1", "--no-progress"])
    assert not marker.exists()


def test_from_records_loads_no_model(tmp_path, monkeypatch):
    """Recomputing from records plays nothing, so no model is loaded (only hashed)."""
    from memtab_env.protocol import evaluate as ev

    calls = []
    monkeypatch.setattr(ev.AgentSpec, "build", lambda self, game: calls.append(self))
    ev.resolve_agent(str(SHIPPED_ZIP), "memtab", build=False)
    assert not calls
