"""Golden files: results that stay put (``docs/versioning.md``).

- Playthroughs: seeded games dumped to text and compared line by line; a change in rules,
  observations, memory models, rewards or rendering shows up as a diff. Regenerate only
  on purpose: ``MEMTAB_REGEN_GOLDEN=1 pytest tests/test_golden.py -k playthrough``.
- Trajectories: hashed rollouts of every id, backend, memory model and built-in player
  (``tests/golden/trajectories.py``); a change bumps the env's version.
- Evaluation: the benchmark protocol's figures for the built-in agents on the first deals
  of ``memtab-2p/v1``, equal to the leaderboard's committed records.
- Recurrent evaluation: a shipped recurrent policy (``rppo-memtab-none``) on the first
  deals of ``memtab-2p-none``, compared exactly on the platform that wrote it (its games
  follow float rounding), and equal to the leaderboard's committed records there.
- Quick: the README's quick config at a short budget, retrained and compared exactly on
  the platform that wrote the golden file.
- And the golden checks fail when a stream changes (the greedy agent's tie-break, the
  deal's seed derivation), shown by changing one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from memtab_env import memtab_v0
from memtab_env.errors import DeprecatedEnvError, VersionNotFoundError
from memtab_env.registry import GAMES, GameSpec, game_spec
from tests.golden import figures, regenerate
from tests.golden import trajectories as tj

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "memtab_2p_perfect_seed7": dict(num_players=2, memory="perfect", seed=7),
    "memtab_3p_none_seed11": dict(num_players=3, memory="none", seed=11),
    "memtab_2p_decay_seed5": dict(num_players=2, memory="decay:0.3", seed=5),
}


def playthrough(num_players: int, memory: str, seed: int) -> str:
    env = memtab_v0.raw_env(num_players=num_players, memory=memory, render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [f"# MemTab-v0 num_players={num_players} memory={memory} seed={seed}",
             f"layout {' '.join(env.record()['layout'])}"]
    for agent in env.agent_iter():
        obs, rew, term, trunc, _ = env.last()
        if term or trunc:
            lines.append(f"{agent} final reward {rew:+.3f}")
            env.step(None)
            continue
        for a in env.possible_agents:
            o = env.observe(a)
            digest = hashlib.sha1(o["observation"].tobytes()).hexdigest()[:12]
            lines.append(f"  obs {a} {digest} remembered {np.flatnonzero(o['remembered_mask']).tolist()}")
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        last = env.record()["actions"][-1]
        lines.append(f"{agent} flips {action} -> {last['card']}")
        lines.extend(env.render().splitlines())
    res = env.record()["result"]
    lines.append(f"result scores={res['scores']} winners={res['winners']} "
                 f"instant_win={res['instant_win']} rewards={res['rewards']}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name):
    path = GOLDEN / f"{name}.txt"
    text = playthrough(**CASES[name])
    if os.environ.get("MEMTAB_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing {path}; regenerate with MEMTAB_REGEN_GOLDEN=1"
    expected = path.read_text().splitlines()
    got = text.splitlines()
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        assert e == g, f"{path.name} line {i + 1} differs:\n  golden: {e}\n  now:    {g}"
    assert len(expected) == len(got)


# -- trajectories ----------------------------------------------------------------------
def _cases(jax: bool) -> list[tj.Case]:
    return [c for c in tj.cases() if (c.backend in tj.JAX_BACKENDS) == jax]


def _check_trajectories(selected: list[tj.Case]) -> None:
    result = tj.compare(tj.compute(selected), tj.load_golden(), scope=[c.key for c in selected])
    assert result.ok, result.message()


def test_golden_trajectories_numpy_backends():
    """AEC, Gymnasium and the batched vector envs of every id, memory model and player."""
    _check_trajectories(_cases(jax=False))


def _jax_core(case: tj.Case) -> bool:
    """The JAX cases of the default run: each game's env and single-agent view with
    perfect memory (the memory models' JAX encoders are held equal to numba's flip for flip
    by tests/test_jax_backend.py; their golden cases run with -m slow)."""
    return case.key.endswith(("/jax/perfect/random", "/jax-single/perfect/greedy"))


@pytest.mark.parametrize("core", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["core", "memory-models"])
def test_golden_trajectories_jax(core: bool):
    if not tj.jax_available():
        pytest.skip("JAX is not installed (memtab-env[jax]): the JAX cases are not checked")
    selected = [c for c in _cases(jax=True) if _jax_core(c) == core]
    assert len(selected) == (4 if core else 8)
    _check_trajectories(selected)


def test_every_id_backend_and_memory_model_has_golden_hashes():
    """The committed file covers exactly the cases: every registered id, each backend it
    has, every memory model (a new id or backend without hashes fails here)."""
    golden = tj.load_golden()
    assert sorted(golden) == sorted(c.key for c in tj.cases())
    for spec in GAMES.values():
        backends = {k.split("/")[1] for k in golden if k.startswith(spec.env_id + "/")}
        expected = {"aec", "gym"} | ({"vector"} if spec.vector_entry_point else set()) \
            | ({"jax", "jax-single"} if spec.jax_rules else set())
        assert backends == expected, spec.env_id
        for memory in tj.MEMORIES:
            assert any(f"/{memory}/" in k for k in golden if k.startswith(spec.env_id + "/aec/"))


def _greedy_last_of_ties(monkeypatch) -> None:
    """MemTab's greedy rule with another tie-break: among face-down cards it has not seen,
    the last instead of the first."""
    from memtab_env.agents import memtab_agents

    rule = memtab_agents.greedy_flip

    def last_of_ties(belief, legal):
        pick = rule(belief, legal)
        unknown = np.flatnonzero(legal & (belief.seen < 0))
        return int(unknown[-1]) if pick in unknown else pick

    monkeypatch.setattr(memtab_agents, "greedy_flip", last_of_ties)


def test_trajectory_check_fails_when_the_greedy_tie_break_changes(monkeypatch):
    """A stream changed in one place (MemTab's greedy agent picks the last unknown card
    instead of the first): exactly the cases where that agent plays report a change, and
    the message says to bump the version and write a changelog line."""
    _greedy_last_of_ties(monkeypatch)
    selected = [c for c in tj.cases() if c.env_id == "MemTab-v0" and c.backend in ("aec", "gym")]
    result = tj.compare(tj.compute(selected), tj.load_golden(), scope=[c.key for c in selected])
    assert not result.ok
    greedy_cases = {c.key for c in selected if c.players in ("agents", "greedy", "expert")}
    assert set(result.changed) and set(result.changed) <= greedy_cases
    assert "MemTab-v0/gym/perfect/greedy" in result.changed
    assert not {c.key for c in selected if c.players == "random"} & set(result.changed)
    msg = result.message()
    assert "bump the env's version" in msg and "CHANGELOG.md" in msg and "MemTab-v1" in msg


def test_trajectory_check_fails_when_the_deal_seed_derivation_changes(monkeypatch):
    """Every AEC-based case deals from ``reset(seed)``: a derivation ``seed -> seed + 1``
    changes every one of them."""
    from memtab_env.aec import MemoryGameEnv

    reset = MemoryGameEnv.reset
    monkeypatch.setattr(MemoryGameEnv, "reset", lambda self, seed=None, options=None: reset(
        self, None if seed is None else seed + 1, options))
    selected = [c for c in tj.cases() if c.backend in ("aec", "gym") and c.memory == "perfect"]
    result = tj.compare(tj.compute(selected), tj.load_golden(), scope=[c.key for c in selected])
    assert sorted(result.changed) == sorted(c.key for c in selected)


def test_regenerate_refuses_to_overwrite_a_changed_hash(tmp_path, monkeypatch, capsys):
    path = tmp_path / "trajectories.json"
    some = [c for c in tj.cases() if c.backend == "aec" and c.memory == "perfect"]
    monkeypatch.setattr(regenerate, "cases", lambda: some)
    monkeypatch.setattr(regenerate, "jax_available", lambda: False)
    hashes = {k: v for k, v in tj.load_golden().items() if k in {c.key for c in some}}
    key = some[0].key
    tj.write_golden({**hashes, key: "0" * 64}, path)
    before = path.read_text()
    assert regenerate.main([], path) == 1  # compare only
    assert regenerate.main(["--accept"], path) == 2  # refused
    assert path.read_text() == before
    out = capsys.readouterr()
    assert key in out.out and "refused" in out.err
    assert regenerate.main(["--accept", "--rehash"], path) == 0
    assert tj.load_golden(path)[key] == hashes[key]
    assert regenerate.main([], path) == 0


def test_regenerate_records_new_cases_and_drops_retired_ids(tmp_path, monkeypatch):
    path = tmp_path / "trajectories.json"
    some = [c for c in tj.cases() if c.backend == "aec" and c.memory == "none"]
    monkeypatch.setattr(regenerate, "cases", lambda: some)
    monkeypatch.setattr(regenerate, "jax_available", lambda: False)
    tj.write_golden({"MemTab-v-retired/aec/none/random": "1" * 64}, path)
    assert regenerate.main(["--accept"], path) == 0
    assert sorted(tj.load_golden(path)) == sorted(c.key for c in some)


# -- versions --------------------------------------------------------------------------
def test_a_retired_version_raises_as_gymnasium_does(monkeypatch):
    """A bumped id (``MemTab-v1`` with v0 retired): the package's lookups of ``MemTab-v0``
    raise DeprecatedEnvError naming the new id and what changed; Gymnasium's own registry
    raises DeprecatedEnv for an unregistered older version of a registered id."""
    from memtab_env import registry

    bumped = GameSpec(**{**GAMES["memtab"].__dict__, "env_id": "MemTab-v1",
                         "retired": {0: "the greedy agent breaks ties differently"}})
    monkeypatch.setitem(registry.GAMES, "memtab", bumped)
    assert game_spec("MemTab-v1") is bumped and game_spec("memtab/MemTab-v1") is bumped
    with pytest.raises(DeprecatedEnvError, match=r"v0 for `MemTab` is deprecated\. Please use "
                                                  r"`MemTab-v1` instead\. What changed: the greedy"):
        game_spec("MemTab-v0")
    with pytest.raises(DeprecatedEnvError):
        game_spec("memtab/MemTab-v0")
    with pytest.raises(VersionNotFoundError, match=r"`v2` for environment `MemTab` doesn't exist"):
        game_spec("MemTab-v2")
    gymnasium.register(id="GoldenVersionTest-v1", entry_point="memtab_env.gym_env:SingleAgentEnv")
    try:
        with pytest.raises(gymnasium.error.DeprecatedEnv, match="Please use `GoldenVersionTest-v1`"):
            gymnasium.make("GoldenVersionTest-v0")
    finally:
        del gymnasium.registry["GoldenVersionTest-v1"]


def test_current_ids_resolve_and_unknown_versions_are_named():
    for spec in GAMES.values():
        assert game_spec(spec.env_id) is spec and spec.version == 0 and not spec.retired
    with pytest.raises(VersionNotFoundError, match="provides versioned environments: \\[ `v0` \\]"):
        game_spec("Pelmanism-v7")


# -- evaluation ------------------------------------------------------------------------
def _bare(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "package_version"} for r in records]


def test_golden_evaluation_reproduces():
    """The protocol's figures for the built-in agents on the golden track's first deals
    equal the committed ones, and their games are the leaderboard's committed records."""
    committed = json.loads(figures.EVALUATION_FILE.read_text())
    from memtab_env.protocol.tracks import get_track

    assert committed["track"] == get_track(figures.TRACK).key, (
        "the track's version changed: regenerate with python -m tests.golden.figures evaluation --accept")
    for agent in figures.AGENTS:
        result, records = figures.evaluation_records(agent)
        assert _bare(records) == _bare(figures.committed_records(agent)), (
            f"{agent}'s games on {committed['track']} differ from results/{figures.TRACK}: the evaluation's "
            "streams changed, which bumps the track's version (docs/versioning.md)")
        want = committed["agents"][agent]
        assert result["runs"] == want["runs"] and result["summary"] == want["summary"], agent
        assert figures._records_sha256(records) == want["records_sha256"]


def test_golden_evaluation_fails_when_the_greedy_tie_break_changes(monkeypatch):
    _greedy_last_of_ties(monkeypatch)
    _, records = figures.evaluation_records("greedy")
    assert figures._records_sha256(records) != json.loads(
        figures.EVALUATION_FILE.read_text())["agents"]["greedy"]["records_sha256"]


# -- a shipped recurrent policy's evaluation --------------------------------------------
def _skip_unless_same_platform(path: Path) -> tuple[Path, dict]:
    found = figures.committed_here(path)
    if found is None:
        recorded = [json.loads(p.read_text())["platform"] for p in figures.platform_files(path)]
        pytest.skip(f"{path.relative_to(figures.ROOT)} has figures of other platforms only "
                    f"({', '.join(str((r['cpu'], r['versions'])) for r in recorded)}): float arithmetic, and "
                    "so these games, are bit-identical only on the same CPU and library versions; "
                    "python -m tests.golden.figures NAME --accept adds this one")
    return found


def test_golden_recurrent_evaluation_reproduces():
    """``rppo-memtab-none`` on the first deals of ``memtab-2p-none`` plays the committed
    games of this platform; on the platform that played the leaderboard's records of
    that track they are those records, and on any other they reproduce them (ties
    broken the other way by rounding only)."""
    path, committed = _skip_unless_same_platform(figures.RECURRENT_FILE)
    now = figures.recurrent_figures()
    assert now == {k: v for k, v in committed.items() if k != "platform"}, (
        "rppo-memtab-none plays other games on memtab-2p-none: the evaluation's streams or the policy's "
        "arithmetic changed. If deliberate, regenerate its eval file and leaderboard result "
        "(docs/versioning.md) and python -m tests.golden.figures recurrent --accept")
    agent, track = figures.RECURRENT_AGENT, figures.RECURRENT_TRACK
    _, records = figures.evaluation_records(agent, track)
    if path == figures.RECURRENT_FILE:
        assert _bare(records) == _bare(figures.committed_records(agent, track))
    else:
        from memtab_env.protocol.reproduce import reproduce_result
        from memtab_env.protocol.results import load_result

        result_path = figures.ROOT / "results" / track / f"{agent}.json"
        played = [(f"deal {r['benchmark']['deal']}", r) for r in figures.committed_records(agent, track)]
        assert reproduce_result(result_path, load_result(result_path), played, len(played),
                                figures.ROOT / "results", seed=0) == len(played)


def test_golden_recurrent_evaluation_fails_when_the_policys_tie_break_changes(monkeypatch):
    """The policy with exact ties between its most probable flips broken towards the last
    position instead of the first plays other games: the check above sees a change in
    how a recurrent policy is played (16% of this policy's decisions are exact ties)."""
    _, committed = _skip_unless_same_platform(figures.RECURRENT_FILE)
    from memtab_env.agents import sb3_policy

    scores = sb3_policy.SB3Agent._scores

    def last_of_ties(self, observation):
        probs = scores(self, observation)  # float32 values: 1e-12 steps reorder exact ties only
        return probs + 1e-12 * np.arange(probs.size)

    monkeypatch.setattr(sb3_policy.SB3Agent, "_scores", last_of_ties)
    assert figures.recurrent_figures()["records_sha256"] != committed["records_sha256"]


# -- the README's quick command at a short budget ---------------------------------------
def test_golden_quick_short_training():
    """The quick config trained for a short budget and evaluated as the README's command
    does: the figures equal the committed ones of this platform exactly (elsewhere
    floating point differs and the comparison is skipped, saying why)."""
    with tempfile.TemporaryDirectory() as tmp:
        now = figures.quick_short_figures(Path(tmp))
    assert now["timesteps"] >= figures.QUICK_STEPS
    _, committed = _skip_unless_same_platform(figures.QUICK_FILE)
    assert now == {k: v for k, v in committed.items() if k != "platform"}, (
        "the quick config's training changed: the env's or the trainer's streams moved. If deliberate, "
        "regenerate docs/evals/quick.json (a full run of the README's command), the README table "
        "(python docs/build_readme_table.py) and python -m tests.golden.figures quick --accept (on every "
        "platform with a file), and write a CHANGELOG line (docs/versioning.md)")


def test_golden_platform_files_are_found_by_cpu(tmp_path, monkeypatch):
    """``--accept`` on a new CPU writes ``<stem>.<cpu>.json`` beside the first platform's
    file, and the comparison picks the file of the platform it runs on."""
    here = figures.platform_info()
    other = {**here, "cpu": "Some Other CPU"}
    main = tmp_path / "case.json"
    main.write_text(json.dumps({"x": 1, "platform": other}))
    assert figures.committed_here(main) is None
    target = figures.file_for_here(main)
    assert target.parent == tmp_path and target.name.startswith("case.") and target != main
    target.write_text(json.dumps({"x": 2, "platform": here}))
    assert figures.platform_files(main) == [main, target]
    assert figures.committed_here(main) == (target, {"x": 2, "platform": here})
    assert figures.file_for_here(main) == target


def test_golden_platform_files_tell_instruction_sets_apart(tmp_path):
    """Two CPUs of one model name with other vector instruction sets round differently:
    a file that records this CPU's instruction set is preferred to one written before the
    field existed, one that records another is never taken, and ``--accept`` writes a new
    file rather than rewrite the older one."""
    here = figures.platform_info()
    legacy = {k: v for k, v in here.items() if k != "cpu_isa"}
    other_isa = {**here, "cpu_isa": "not-" + str(here["cpu_isa"])}
    main = tmp_path / "case.json"
    main.write_text(json.dumps({"x": 1, "platform": legacy}))
    assert figures.committed_here(main) == (main, {"x": 1, "platform": legacy})
    target = figures.file_for_here(main)
    assert target != main and (not here["cpu_isa"] or here["cpu_isa"].replace("_", "-") in target.name)
    target.write_text(json.dumps({"x": 2, "platform": here}))
    assert figures.committed_here(main) == (target, {"x": 2, "platform": here})
    target.write_text(json.dumps({"x": 3, "platform": other_isa}))
    assert figures.committed_here(main) == (main, {"x": 1, "platform": legacy})
    main.write_text(json.dumps({"x": 1, "platform": other_isa}))
    assert figures.committed_here(main) is None


@pytest.mark.parametrize(("flags", "expected"), [
    ("fpu sse sse2 sse4_2 avx avx2 fma avx512f avx512bw", "avx512f"),
    ("fpu sse sse2 sse4_2 avx avx2 fma", "avx2"),
    ("fpu sse sse2", None),
])
def test_the_platform_names_the_widest_vector_instruction_set(tmp_path, flags, expected):
    from memtab_env.platform_info import cpu_isa

    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: {flags}\n\nprocessor\t: 1\n")
    assert cpu_isa(str(info)) == expected
    assert cpu_isa(str(tmp_path / "missing")) is None
    assert figures.platform_info()["cpu_isa"] == cpu_isa()
