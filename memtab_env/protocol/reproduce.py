"""Who played: re-play recorded games with the agents they name and compare every action.

An audit that only replays records proves that the games were legal and give the
figures; it cannot tell who chose the moves. :func:`reproduce_game` plays a recorded game
again, from the same deal, with the agents reset from the same seeds as the protocol
resets them (:func:`memtab_env.play.play_game`), and reports the first action where the
agents chose differently from the record. An agent that reproduces its records is the
agent that played them, up to what these games exercise; one that reads hidden state
still plays legal games, and nothing here can see that (``BENCHMARK.md``).

Agents are named by results (``agent.runs[i]``: a built-in name with the package version,
or a model file with its SHA-256) or, for ``memtab replay``, by the ``agents`` field of a
record (built-in names, or labels mapped to agents on the command line). A model file is
looked for next to the result and must lie inside the results tree and have the
recorded hash.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memtab_env import __version__, untrusted
from memtab_env.errors import MemTabError, RecordError
from memtab_env.protocol.backends import AgentSpec
from memtab_env.protocol.results import ResultError
from memtab_env.protocol.tracks import Track


def choose(count: int, n: int, seed: int | None) -> list[int]:
    """``n`` record indices out of ``count`` (all when ``n >= count``), drawn with
    ``seed`` (fresh entropy when None), in increasing order."""
    if n >= count:
        return list(range(count))
    return sorted(random.Random(seed).sample(range(count), n))


def sha256_of(path: Path) -> str:
    """SHA-256 (hex) of the regular file ``path``."""
    return untrusted.sha256(path, ResultError)


def shipped_sha256(name: str) -> str | None:
    """SHA-256 of the model file of the built-in agent ``name``, if it has one."""
    try:
        from memtab_env.agents.shipped import SHIPPED, shipped_path
    except ImportError:
        return None
    return sha256_of(shipped_path(name)) if name in SHIPPED else None


def result_agent(result: dict[str, Any], run: int, path: Path, root: Path) -> AgentSpec:
    """The agent of run ``run`` of ``result`` (read from ``path`` in the results tree
    ``root``), checked against what the result says of it; :class:`ResultError` when it
    cannot be the agent that played."""
    desc = result["agent"]["runs"][run]
    where = f"{path}: field agent.runs[{run}]"
    kwargs = tuple(sorted(desc["kwargs"].items()))
    label = result["agent"]["label"]
    if desc["kind"] == "builtin":
        from memtab_env import agents

        game = result["game"]
        if desc["spec"] not in agents.available(game) or desc["spec"] in ("sb3", "human"):
            raise ResultError(f"{where}.spec: {desc['spec']!r:.60} is not a built-in agent of {game} that "
                              "can be re-played")
        if result["package_version"] != __version__:
            raise ResultError(f"{where}: built-in agent {desc['spec']!r} of memtab-env "
                              f"{result['package_version']!r:.40}, this is {__version__}: its play may "
                              "differ; reproduce with that version")
        mine = shipped_sha256(desc["spec"])
        if desc["sha256"] is not None and desc["sha256"] != mine:
            raise ResultError(f"{where}.sha256: {desc['sha256']} is not the model file of the installed "
                              f"{desc['spec']!r} ({mine})")
        return AgentSpec(desc["spec"], label, kwargs)
    spec = Path(desc["spec"])
    candidates = [spec.name] if spec.is_absolute() else [desc["spec"], spec.name]
    for name in candidates:
        try:
            model = untrusted.resolve_inside(name, path.parent, [root], ResultError, str(path),
                                             ("agent", "runs", run, "spec"))
        except ResultError:
            continue
        if model.is_file():
            break
    else:
        raise ResultError(f"{where}.spec: no model file {desc['spec']!r:.80} next to the result inside "
                          f"{root}; commit the model with the result to reproduce it")
    digest = sha256_of(model)
    if digest != desc["sha256"]:
        raise ResultError(f"{where}.sha256: the model file {model} has SHA-256 {digest}, the result "
                          f"names {desc['sha256']}")
    return AgentSpec(str(model), label, kwargs)


#: how far below its best score a deterministic policy's recorded flip may score and still
#: count as its choice: a tie broken the other way by float rounding (relative to
#: ``max(1, |best|)``; a policy's probabilities tie within a few float32 ulps, about 1e-7,
#: where CPUs round differently)
NEAR_TIE = 1e-6


def _near_tie(agent: Any, chosen: int, recorded: Any) -> bool:
    """Whether ``agent`` chose by its best score (its ``last_scores``) and the recorded
    flip scores within :data:`NEAR_TIE` of its choice."""
    scores = getattr(agent, "last_scores", None)
    if scores is None or isinstance(recorded, bool) or not isinstance(recorded, int) \
            or not 0 <= recorded < len(scores):
        return False
    gap = float(scores[chosen]) - float(scores[recorded])
    return 0 <= gap <= NEAR_TIE * max(1.0, abs(float(scores[chosen])))


def reproduce_game(record: dict[str, Any], players: Sequence[Any],
                   track_deal: tuple[Track, int] | None = None,
                   counts: dict[str, int] | None = None) -> str | None:
    """Play ``record``'s game again with ``players[s]`` in seat ``s`` (each reset from the
    game's seed as :func:`memtab_env.play.play_game` does); None when every action is the
    recorded one, else a sentence naming the first action that differs and its seat.

    Each agent chooses from its observation and the game goes on with the recorded flip,
    so that a deterministic policy whose choice and the recorded flip score within
    :data:`NEAR_TIE` of each other (a tie that another CPU's float rounding breaks the
    other way) is still the agent that played; every other difference refuses the game.
    ``counts["near_ties"]`` (when given) counts such choices.

    With ``track_deal = (track, d)`` the game is dealt as deal ``d`` of ``track`` (its
    options, its seed for the deal), whatever the record says about its seed, layout or
    options, and the record's layout must be that deal's."""
    from memtab_env.play import make_raw_env, reset_agents, tell_reveals, turns, watching

    if track_deal is not None:
        track, d = track_deal
        env = make_raw_env(track.game, **track.options)
        seed, layout = track.seeds(d + 1)[d], None
    else:
        options = {k: v for k, v in record["options"].items() if k != "render_mode"}
        env = make_raw_env(record["game"], **options)
        seed = record.get("seed")
        layout = record["layout"] if record.get("deal") == "layout" else None
        if seed is None and layout is None:
            return "the record names no seed and no layout: its game cannot be dealt again"
    recorded = record["actions"]
    k = 0
    try:
        reset_agents(players, seed)
        env.reset(seed=seed, options={"layout": list(layout)} if layout is not None else None)
        if track_deal is not None and record.get("layout") != env.record()["layout"]:
            return f"its layout is not deal {track_deal[1]} of track {track_deal[0].key} (seed {seed})"
        watchers = watching(players)
        for _, seat, obs in turns(env):
            chosen = int(players[seat].act(obs))
            if k >= len(recorded):
                return (f"the record has {len(recorded)} actions, the named agents play on (seat {seat} "
                        f"plays {chosen} next)")
            a = recorded[k]
            if a.get("player") != seat:
                return f"action {k}: the record has seat {a.get('player')} play, seat {seat} is on turn"
            if a.get("action") != chosen:
                if not _near_tie(players[seat], chosen, a.get("action")):
                    return (f"action {k}: the record has seat {seat} play {a.get('action')!r}, "
                            f"the named agent in seat {seat} plays {chosen}")
                if counts is not None:
                    counts["near_ties"] = counts.get("near_ties", 0) + 1
            env.step(int(a["action"]))
            tell_reveals(env, watchers)
            k += 1
    except Exception as exc:  # an agent that cannot play the recorded position
        return f"the named agents cannot play this game again: {type(exc).__name__}: {exc}"
    if k != len(recorded):
        return f"the record has {len(recorded)} actions, the game ends after {k}"
    return None


def reproduce_result(path: Path, result: dict[str, Any], records: Sequence[tuple[str, dict[str, Any]]],
                     n: int, root: Path, seed: int | None = None) -> int:
    """Re-play ``n`` of ``records`` (audited records of ``result``) with the agents
    ``result`` names and the track's opponents; return the number re-played, or raise
    :class:`ResultError` at the first game they do not reproduce."""
    from memtab_env.protocol.results import track_of

    track = track_of(result)
    built: dict[Any, Any] = {}

    def agent(spec: AgentSpec, slot: int) -> Any:
        # one object per lineup slot, as the backends build them (two seats never share
        # an agent's generator)
        key = (spec.spec, spec.kwargs, slot)
        if key not in built:
            try:
                built[key] = spec.build(track.game)
            except (MemTabError, OSError, ValueError) as exc:
                raise ResultError(f"{path}: agent {spec.spec!r:.80} cannot be built: {exc}") from exc
        return built[key]

    specs = [result_agent(result, i, path, root) for i in range(len(result["runs"]))]
    for k in choose(len(records), n, seed):
        where, rec = records[k]
        b = rec["benchmark"]
        lineup = [agent(specs[int(b["run"])], 0)] + [agent(AgentSpec(b["opponent"]), slot)
                                                     for slot in range(1, track.num_players)]
        players = [lineup[i] for i in b["seats"]]
        why = reproduce_game(rec, players, (track, int(b["deal"])))
        if why is not None:
            raise ResultError(f"{where}: not reproduced by the agent the result names "
                              f"({specs[int(b['run'])].spec!r:.80}, run {b['run']}): {why}")
    return min(n, len(records))


def record_players(record: dict[str, Any], mapping: Mapping[str, str], where: str) -> list[Any]:
    """The agents of ``record``'s seats from its ``agents`` field: built-in names of its
    game, or labels given in ``mapping`` (label -> name or model path)."""
    from memtab_env import agents as agent_lib

    names = record.get("agents")
    if not isinstance(names, list) or len(names) != record["num_players"] or \
            not all(isinstance(x, str) for x in names):
        raise RecordError(f"{where}: field agents: a reproducible record names the agent of every seat "
                          f"(a list of {record['num_players']} strings), got {names!r:.80}")
    out = []  # one object per seat, even where two seats name the same agent
    for name in names:
        spec = mapping.get(name, name)
        if spec not in agent_lib.available(record["game"]) and spec not in mapping.values():
            raise RecordError(f"{where}: field agents: {name!r:.60} is not a built-in agent of "
                              f"{record['game']}; give --agent {name}=NAME_OR_PATH")
        try:
            out.append(agent_lib.make(spec, game=record["game"]))
        except (MemTabError, OSError, ValueError) as exc:
            raise RecordError(f"{where}: agent {spec!r:.80} cannot be built: {exc}") from exc
    return out
