"""Faults leave nothing broken: kill -9 during training, snapshot, checkpoint, record and
result writes, then resume (or run again) and compare with an uninterrupted run; failed
resets change nothing; records of two runs never mix; a dead worker is reported with its
job and no worker outlives its parent; an unwritable output fails before any work.

The kills run in subprocesses with tiny budgets (a run of 768 steps), so the file stays
within a couple of minutes."""

from __future__ import annotations

import glob
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from memtab_env.errors import MemTabError

ROOT = Path(__file__).resolve().parents[1]
TRAIN = [
    "--config", "configs/selfplay.yaml", "--total_timesteps", "768", "--n_envs", "2", "--n_steps", "64",
    "--batch_size", "64", "--n_epochs", "1", "--checkpoint_every", "128", "--snapshot_every", "128",
    "--keep_checkpoints", "2", "--vec_env", "dummy", "--progress_bar", "false", "--eval_games", "2",
    "--eval_opponents", "[random]", "--tensorboard", "false", "--seed", "3",
]
ENV = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")


def _train(args: list[str], runs: Path, slow_renames: bool = False) -> subprocess.Popen[str]:
    """``train.py ARGS`` in a subprocess; ``slow_renames`` pauses 50 ms before every rename
    (test only), so that a kill can land while a temporary file exists."""
    cmd = [sys.executable, str(ROOT / "train.py")] if not slow_renames else [sys.executable, "-c", (
        "import os, sys, time\nreal = os.replace\n"
        "def slow(a, b): time.sleep(0.05); real(a, b)\nos.replace = slow\n"
        "from memtab_env.train import cli\nsys.exit(cli(sys.argv[1:], prog='train.py'))\n")]
    return subprocess.Popen([*cmd, *args, "--runs_dir", str(runs)],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def _wait_for(proc: subprocess.Popen[str], folder: Path, pattern: str, deadline: float) -> bool:
    """Wait until a file matching ``pattern`` exists under ``folder``; False if ``proc``
    ended first or ``deadline`` seconds passed."""
    end = time.monotonic() + deadline
    while time.monotonic() < end and proc.poll() is None:
        if any(folder.rglob(pattern)):
            return True
        time.sleep(0.001)
    return False


def _kill_when(proc: subprocess.Popen[str], folder: Path, pattern: str, deadline: float) -> bool:
    """SIGKILL ``proc`` as soon as a file matching ``pattern`` exists under ``folder`` (a
    temporary file: the kill lands in the middle of that write); False if it ended first."""
    if not _wait_for(proc, folder, pattern, deadline):
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def _state(run: Path) -> dict:
    """What a finished run leaves, for comparison with another run of the same seed."""
    from memtab_env.agents.model_data import load_policy

    from memtab_env.train.manifest import OWNED, Manifest

    manifest = Manifest.load(run)
    owned = sorted(p.relative_to(run).as_posix() for p in run.rglob("*")
                   if p.is_file() and OWNED.fullmatch(p.relative_to(run).as_posix()))
    assert owned == sorted(manifest.files), "the manifest lists exactly the run's files"
    assert all(manifest.verified(run / rel) for rel in owned)
    leftovers = [p.name for p in run.rglob("*") if p.name.startswith(".tmp.") or p.name.endswith(".tmp")]
    assert not leftovers, leftovers
    load_policy(run / "model.zip")  # loads as data
    latest = json.loads((run / "checkpoints" / "latest.json").read_text())
    json.loads((run / "eval.json").read_text())
    return {"files": owned, "step": latest["step"], "pool": latest["pool"]}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    runs = tmp_path_factory.mktemp("plain") / "runs"
    _finish(_train(TRAIN, runs))
    (run,) = runs.iterdir()
    return _state(run)


# a kill inside a checkpoint's write and at a random moment by default; inside each other
# file's write with -m slow
@pytest.mark.parametrize("target", [
    *(pytest.param(t, marks=pytest.mark.slow)
      for t in ("pool/.tmp.*", "checkpoints/.tmp.*.latest.json", ".tmp.*.manifest.json", ".tmp.*.model.zip")),
    "checkpoints/.tmp.*", "random"])
def test_training_killed_at_a_write_resumes(tmp_path, uninterrupted, target):
    runs = tmp_path / "runs"
    proc = _train(TRAIN, runs, slow_renames=target != "random")
    if target == "random":  # a moment after the run starts writing, however slow its start
        assert _wait_for(proc, runs, "config.yaml", 300), "the run ended before it wrote config.yaml"
        time.sleep(random.uniform(0.0, 3.0))  # unloaded: checkpoints 1.2 to 2 s after it, the end 4.4 s
        proc.send_signal(signal.SIGKILL)  # nothing if it has already finished: the resume says so
        proc.wait()
        killed = True
    else:
        killed = _kill_when(proc, runs, Path(target).name if "/" not in target else target, 120)
    assert killed, f"the run ended before a write matching {target} was seen"
    (run,) = runs.iterdir()
    command = (run / "config.yaml").read_text().splitlines()[0]
    if killed:
        out = _finish(_train(["--resume", str(run), "--progress_bar", "false"], runs))
        assert "resuming" in out or "starting it again" in out or "already finished" in out
    assert _state(run) == uninterrupted
    assert (run / "config.yaml").read_text().splitlines()[0] == command  # the original command is kept


def test_resume_loads_only_files_the_run_wrote(tmp_path):
    runs = tmp_path / "runs"
    proc = _train([*TRAIN, "--total_timesteps", "256"], runs)
    _finish(proc)
    (run,) = runs.iterdir()
    stranger = run / "pool" / "snapshot_000000000999.zip"
    stranger.write_bytes((run / "model.zip").read_bytes())  # a file the run did not write
    latest = run / "checkpoints" / json.loads((run / "checkpoints" / "latest.json").read_text())["model"]
    latest.write_bytes(latest.read_bytes() + b"tampered")
    proc = _train(["--resume", str(run), "--total_timesteps", "512", "--progress_bar", "false"], runs)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "not a file this run wrote" in out, out
    assert not stranger.exists()  # removed as not written by the run


#: the evaluation command, with every rename slowed down (test only) so that a kill can
#: land while a temporary file exists
_SLOW_RENAMES = (
    "import os, sys, time\n"
    "real = os.replace\n"
    "def slow(a, b): time.sleep(0.3); real(a, b)\n"
    "os.replace = slow\n"
    "from memtab_env.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _evaluate(out: Path, records: Path) -> subprocess.Popen[str]:
    args = ["evaluate", "--agent", "greedy", "--track", "memtab-2p", "--games", "3", "--no-progress",
            "--out", str(out), "--records", str(records)]
    return subprocess.Popen([sys.executable, "-c", _SLOW_RENAMES, *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.parametrize("target", ["tmp.*.jsonl.gz", "tmp.*.json"])
def test_result_and_record_writes_killed_leave_whole_files_or_none(tmp_path, target):
    from memtab_env.protocol.results import load_result
    from memtab_env.record import read_records

    ref = tmp_path / "ref"
    _finish(_evaluate(ref / "r.json", ref / "r.records.jsonl.gz"))
    work = tmp_path / "work"
    work.mkdir()
    proc = _evaluate(work / "r.json", work / "r.records.jsonl.gz")
    assert _kill_when(proc, work, "." + target, 120), "the write was not seen"
    readers = ((work / "r.json", load_result), (work / "r.records.jsonl.gz", lambda p: list(read_records(p))))
    for path, read in readers:
        if path.exists():
            read(path)  # whole, never half-written
    _finish(_evaluate(work / "r.json", work / "r.records.jsonl.gz"))
    assert (work / "r.json").read_bytes() == (ref / "r.json").read_bytes()
    assert gzip.decompress((work / "r.records.jsonl.gz").read_bytes()) == \
        gzip.decompress((ref / "r.records.jsonl.gz").read_bytes())


# --- in process ----------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["memtab_v0", "pelmanism_v0", "memory_board_v0"])
def test_a_failed_reset_leaves_the_env_as_it_was(module):
    import importlib

    import numpy as np

    m = importlib.import_module(f"memtab_env.{module}")
    env = m.raw_env()
    env.reset(seed=5)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    before, seed = env.record(), env.game_seed
    for options, s in (({"layout": ["nope"]}, 1), ({"layout": []}, None), (None, -3), (None, 2.5)):
        with pytest.raises(MemTabError):
            env.reset(seed=s, options=options)
        assert env.record() == before and env.game_seed == seed


def test_a_failed_reset_of_the_gym_view_leaves_it_as_it_was():
    import gymnasium as gym
    import numpy as np

    env = gym.make("MemTab-v0").unwrapped
    _, info = env.reset(seed=5)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    before, rng = env.record(), env.np_random.bit_generator.state
    with pytest.raises(MemTabError):
        env.reset(seed=9, options={"layout": ["R2"]})
    assert env.record() == before and env.np_random.bit_generator.state == rng


def test_records_of_two_runs_never_mix(tmp_path):
    from memtab_env.errors import RecordError
    from memtab_env.protocol.cli import evaluate_main
    from memtab_env.record import write_records

    folder = tmp_path / "recs"
    assert evaluate_main(["--agent", "random", "--track", "memtab-2p", "--games", "2", "--no-progress",
                          "--records", str(folder)]) == 0
    first = sorted(p.name for p in folder.iterdir())
    with pytest.raises(RecordError, match="never mix"):
        evaluate_main(["--agent", "greedy", "--track", "memtab-2p", "--games", "1", "--no-progress",
                       "--records", str(folder)])
    with pytest.raises(RecordError, match="never mix"):
        write_records([{}], folder)
    assert sorted(p.name for p in folder.iterdir()) == first
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("out", ["--out", "--records"])
def test_an_unwritable_output_fails_before_any_work(tmp_path, out, monkeypatch):
    from memtab_env.protocol import evaluate as ev
    from memtab_env.protocol.cli import evaluate_main

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(ev, "evaluate", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(MemTabError, match="cannot be written"):
        evaluate_main(["--agent", "random", "--track", "memtab-2p", "--no-progress", out,
                       str(blocker / "x.jsonl.gz")])


def test_an_unwritable_runs_dir_fails_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = _train([*TRAIN], blocker / "runs")
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "cannot be written" in out, out


def test_a_dead_worker_is_reported_with_its_job():
    import threading

    from memtab_env.protocol.backends import AgentSpec, BenchmarkError, MultiprocessingBackend
    from memtab_env.protocol.evaluate import evaluation_jobs
    from memtab_env.protocol.tracks import TRACKS

    backend = MultiprocessingBackend(2)
    # far more work than the test waits for: the kill lands while jobs run
    jobs = evaluation_jobs(TRACKS["memtab-2p"], [AgentSpec("search", kwargs=(("simulations", 64),))], 60, 1)
    import multiprocessing as mp

    killed: list[int] = []

    def stopped(pid: int) -> bool:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"

    def killer() -> None:
        # kill a worker once it has marked the job it plays (however slow its start-up)
        pattern = os.path.join(tempfile.gettempdir(), "memtab-jobs-*", "[0-9]*")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ours = {child.pid for child in mp.active_children()}
            marks = {int(os.path.basename(m)): m for m in glob.glob(pattern) if os.path.basename(m).isdigit()}
            playing = [pid for pid in marks if pid in ours]  # only this backend's workers
            if playing:
                # stopped, it cannot finish its job and drop its mark before the kill
                pid = playing[0]
                os.kill(pid, signal.SIGSTOP)
                while not stopped(pid):
                    time.sleep(0.001)
                if os.path.exists(marks[pid]):
                    killed.append(pid)
                    os.kill(pid, signal.SIGKILL)
                    return
                os.kill(pid, signal.SIGCONT)
            time.sleep(0.05)

    threading.Thread(target=killer, daemon=True).start()
    with pytest.raises(BenchmarkError, match=r"worker process died .*job \d+ \(track memtab-2p, deal") as err:
        backend.run(jobs)
    # the other worker, stopped by the pool, is not blamed: one job, the killed worker's
    assert str(err.value).count("(track memtab-2p") == 1, err.value
    assert f"in worker {killed[0]};" in str(err.value), err.value


def test_no_worker_outlives_its_parent(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys, time, threading
        sys.path.insert(0, {str(ROOT)!r})
        from memtab_env.protocol.backends import AgentSpec, MultiprocessingBackend
        from memtab_env.protocol.evaluate import evaluation_jobs
        from memtab_env.protocol.tracks import TRACKS
        import multiprocessing as mp
        def report():
            time.sleep(5.0)
            print(" ".join(str(c.pid) for c in mp.active_children()), flush=True)
        threading.Thread(target=report, daemon=True).start()
        jobs = evaluation_jobs(TRACKS["memtab-2p"], [AgentSpec("search")], 50, 1)
        MultiprocessingBackend(2).run(jobs)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=ENV, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    pids = [int(x) for x in line.split()]
    assert pids, "no workers seen"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(2.0)
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] != "Z":
                    alive.append(pid)
        except (ProcessLookupError, FileNotFoundError):
            pass
    assert not alive, f"workers {alive} outlived their parent"


def test_a_layout_that_ends_before_the_learner_plays_leaves_the_view_as_it_was():
    """Only playing the layout finds this out: the view, its AEC env and its opponents are
    restored from a copy."""
    import gymnasium as gym
    import numpy as np

    from memtab_env.errors import InvalidOptionError

    env = gym.make("Pelmanism-v0", deck="pairs:2", learner_seat=1, opponents="greedy").unwrapped
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    before, rng = env.record(), env.np_random.bit_generator.state
    with pytest.raises(InvalidOptionError, match="ends before the learner"):
        env.reset(seed=0, options={"layout": [1, 1, 0, 0]})
    assert env.record() == before and env.np_random.bit_generator.state == rng
    _, _, _, _, after = env.step(int(np.flatnonzero(mask)[0]))  # the old game goes on
    assert not after["illegal_action"]
