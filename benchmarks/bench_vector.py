"""Flips per second of the batched MemTab engine and its vector envs, against the scalar
envs and peers, plus MaskablePPO training throughput.

Run: ``python benchmarks/bench_vector.py [--seconds 1.0] [--repeats 3]``

One run, in one process, one measurement after another (the batched engine runs large
batches on every core, ``parallel=None``; the SB3 baseline's workers are processes).
Every figure is the median of ``--repeats`` timed runs of ``--seconds`` each, after a
warm-up run (JIT compilation, imports, caches).

What is timed, all under uniformly random legal play:

- batched engine ``BatchedMemTab`` (B games, auto-reset): per step, a random legal flip
  per game (``random_actions``: the uniform policy, from the games' own streams), ``step``
  and ``action_masks``; "+ obs" adds ``observations()`` (the int8 observation of the seat
  on turn, perfect memory). Flips/s = B x steps/s.
- ``MemTabVectorEnv`` (``gymnasium.make_vec`` view, ``random`` opponents stepped inside the
  batch, float32 observations returned as fresh arrays): actions are a random legal flip
  per game, drawn in numpy from ``action_masks()``. Flips counted: learner + opponents.
- scalar ``memtab_v0.env()`` (PettingZoo AEC with the standard wrapper) and the scalar
  Gymnasium view ``gymnasium.make("MemTab-v0")`` (learner + opponent flips), PettingZoo
  ``tictactoe_v3.env()`` / ``connect_four_v3.env()`` (moves), POPGym ``ConcentrationHard``
  (flips = steps, random actions, no mask) when installed.
- ratio = batched engine (B = 8192, every core, masks) / the row: how many times faster
  the engine is.
- flips/CPU-s: the same count per CPU second of this process (a gauge of what an idle
  machine would give when other processes share the cores).
- peak memory per game: ``tracemalloc`` peak while building the env and playing (NumPy
  arrays included), divided by the number of games it holds.
- training: ``MaskablePPO("MlpPolicy")`` env steps per second of ``learn()`` on the
  SB3 adapter ``MemTabSB3VecEnv`` vs ``SubprocVecEnv`` of scalar ``MemTab-v0`` envs
  (``random`` opponents); same number of envs, hyperparameters, seed and torch threads
  (``--sb3-envs``, ``--sb3-steps``, ``--torch-threads``).
- Memory: The Board Game (``--games memory_board``): ``MemoryBoardVectorEnv`` (B = 64,
  1024, 8192) against the scalar ``memory_board_v0.env()`` and
  ``gymnasium.make("MemoryBoard-v0")``; target: the batched view >= 50x the scalar view in
  flips per second.
- Pelmanism (a table of its own; ``--games pelmanism`` runs only it): the batched engine
  ``BatchedPelmanism`` (standard deck, two players, perfect memory; B = 1, 64, 1024,
  8192; masks, and masks + obs, timed as the MemTab engine), ``PelmanismVectorEnv``
  (``random`` opponents, all flips) and the scalar ``pelmanism_v0.env()`` (AEC) and
  ``gymnasium.make("Pelmanism-v0")`` under the same random legal play. Ratios:
  "engine/row" = batched engine (B = 8192, masks) over the row, "row/AEC" = the row
  over the scalar AEC env.

Targets (2 cores, large B): engine >= 20 M flips/s with masks, >= 5 M with
observations; SB3 training >= 2x the SubprocVecEnv baseline.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

BATCH_SIZES = (1, 64, 1024, 8192)
TARGET_MASKS = 20e6
TARGET_OBS = 5e6
TARGET_SB3 = 2.0


# --------------------------------------------------------------------------------------
# timing helpers
# --------------------------------------------------------------------------------------
def timed(
    run: Callable[[float], tuple[float, float]], seconds: float, repeats: int
) -> tuple[float, float]:
    """Median rates of ``run(seconds) -> (count, elapsed)`` over ``repeats`` runs, after a
    short warm-up: per wall-clock second, and per CPU second of this process (what the
    figure would be with every busy thread on a core of its own: the wall-clock figure
    of an idle machine, near enough, when other processes load this one)."""
    run(min(seconds, 0.2))
    wall, cpu = [], []
    for _ in range(repeats):
        c0 = time.process_time()
        count, elapsed = run(seconds)
        used = time.process_time() - c0
        wall.append(count / elapsed)
        cpu.append(count / max(used, 1e-9))
    return statistics.median(wall), statistics.median(cpu)


def peak_bytes(build_and_play: Callable[[], Any]) -> int:
    """tracemalloc peak (bytes) of ``build_and_play()``, after one untraced warm-up call
    (imports, compiled kernels and caches are not counted)."""
    build_and_play()
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    keep = build_and_play()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del keep
    return peak


# --------------------------------------------------------------------------------------
# the batched engine and the vector env
# --------------------------------------------------------------------------------------
def engine_run(
    num_envs: int, with_obs: bool, parallel: bool | None = None, game: str = "memtab"
) -> Callable:
    eng = _engine(game, num_envs, parallel)
    eng.reset(seed=0)
    actions = np.empty(num_envs, dtype=np.int64)

    def run(seconds: float) -> tuple[float, float]:
        steps = 0
        start = time.perf_counter()
        while True:
            for _ in range(16):
                eng.random_actions(actions)
                eng.step(actions)
                eng.action_masks()
                if with_obs:
                    eng.observations()
            steps += 16
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return steps * num_envs, elapsed

    return run


def _engine(game: str, num_envs: int, parallel: bool | None = None) -> Any:
    """The batched engine of ``game`` with its default options (its registry row's
    ``batched_engine``; Pelmanism: standard deck, two players)."""
    from memtab_env.registry import game_spec, load

    return load(game_spec(game).batched_engine)(num_envs, parallel=parallel)


def engine_memory(num_envs: int, game: str = "memtab") -> int:
    def play() -> Any:
        eng = _engine(game, num_envs)
        eng.reset(seed=0)
        for _ in range(8):
            eng.step(eng.random_actions())
            eng.action_masks()
            eng.observations()
        return eng

    return peak_bytes(play) // num_envs


def _random_legal(masks: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """A random legal flip per row: argmax of noise over the legal positions."""
    return np.argmax(np.where(masks != 0, noise, -1.0), axis=1)


def _vector_env(game: str, num_envs: int) -> Any:
    import gymnasium

    from memtab_env.registry import game_spec

    return gymnasium.make_vec(game_spec(game).env_id, num_envs=num_envs, opponents="random",
                              vectorization_mode="vector_entry_point").unwrapped


def vector_env_run(num_envs: int, game: str = "memtab") -> Callable:
    venv = _vector_env(game, num_envs)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    width = venv.single_action_space.n
    noise = [rng.random((num_envs, width), dtype=np.float32) for _ in range(8)]
    clock = venv.engine.flips  # a view: the flips of each game so far

    def run(seconds: float) -> tuple[float, float]:
        flips = -int(clock.sum())
        steps = 0
        start = time.perf_counter()
        while True:
            _, _, _, _, info = venv.step(_random_legal(venv.action_masks(), noise[steps % 8]))
            steps += 1
            if "final_info" in info:
                fi = info["final_info"]
                flips += int(fi["flips"][fi["_flips"]].sum())
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return flips + int(clock.sum()), elapsed

    return run


def vector_env_memory(num_envs: int, game: str = "memtab") -> int:
    def play() -> Any:
        venv = _vector_env(game, num_envs)
        venv.reset(seed=0)
        noise = np.random.default_rng(0).random((num_envs, venv.single_action_space.n))
        for _ in range(8):
            venv.step(_random_legal(venv.action_masks(), noise))
        return venv

    return peak_bytes(play) // num_envs


# --------------------------------------------------------------------------------------
# scalar envs and peers
# --------------------------------------------------------------------------------------
def aec_run(make: Callable[[], Any]) -> Callable:
    """Moves per second of a PettingZoo AEC env under random legal play."""
    env = make()
    rng = np.random.default_rng(0)
    randoms = rng.random(1 << 16)

    def run(seconds: float) -> tuple[float, float]:
        k = moves = 0
        start = time.perf_counter()
        while True:
            env.reset(seed=k)
            for _ in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[int(randoms[k & 0xFFFF] * len(legal))]))
                k += 1
                moves += 1
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return moves, elapsed

    return run


def aec_memory(make: Callable[[], Any], random_play: bool = False) -> int:
    """Peak bytes of one game, first legal move each time (or, ``random_play``, a random
    legal one: a Pelmanism player always flipping the first two cards would play to the
    flip cap)."""

    def play() -> Any:
        env = make()
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            legal = np.flatnonzero(obs["action_mask"])
            pick = int(rng.integers(len(legal))) if random_play and len(legal) else 0
            env.step(None if term or trunc else int(legal[pick]))
        return env

    return peak_bytes(play)


def gym_run(env_id: str = "MemTab-v0") -> Callable:
    """All flips (learner and opponents; the board game's other actions not counted) per
    second through ``gymnasium.make``."""
    import gymnasium

    import memtab_env  # noqa: F401

    env = gymnasium.make(env_id, opponents="random")
    rng = np.random.default_rng(0)

    def run(seconds: float) -> tuple[float, float]:
        flips = episode = 0
        start = time.perf_counter()
        while True:
            _, info = env.reset(seed=episode)
            episode += 1
            done = False
            while not done:
                legal = np.flatnonzero(info["action_mask"])
                _, _, term, trunc, info = env.step(int(legal[int(rng.random() * len(legal))]))
                done = term or trunc
            flips += sum(1 for t in env.unwrapped.aec._transitions if t.revealed)
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return flips, elapsed

    return run


def gym_memory(env_id: str = "MemTab-v0", random_play: bool = False) -> int:
    """Peak bytes of one episode of ``gymnasium.make(env_id)`` (first legal flip, or a
    random legal one with ``random_play``)."""
    import gymnasium

    def play() -> Any:
        env = gymnasium.make(env_id, opponents="random")
        _, info = env.reset(seed=0)
        rng = np.random.default_rng(0)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            pick = int(rng.integers(len(legal))) if random_play else 0
            _, _, term, trunc, info = env.step(int(legal[pick]))
            done = term or trunc
        return env

    return peak_bytes(play)


def popgym_run() -> Callable | None:
    try:
        from popgym.envs.concentration import ConcentrationHard
    except ImportError:
        return None
    env = ConcentrationHard()

    def run(seconds: float) -> tuple[float, float]:
        steps = episode = 0
        start = time.perf_counter()
        while True:
            env.reset(seed=episode)
            episode += 1
            done = False
            while not done:
                _, _, term, trunc, _ = env.step(env.action_space.sample())
                steps += 1
                done = term or trunc
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return steps, elapsed

    return run


def popgym_memory() -> int:
    from popgym.envs.concentration import ConcentrationHard

    def play() -> Any:
        env = ConcentrationHard()
        env.reset(seed=0)
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(env.action_space.sample())
            done = term or trunc
        return env

    return peak_bytes(play)


# --------------------------------------------------------------------------------------
# Pelmanism
# --------------------------------------------------------------------------------------
def pelmanism_table(seconds: float, repeats: int) -> None:
    """The batched Pelmanism engine (standard deck) next to the scalar Pelmanism envs."""
    from memtab_env import pelmanism_v0
    from memtab_env.vector.engine_base import resolve_threads

    rows: list[tuple[str, float, float, int | None]] = []
    big = BATCH_SIZES[-1]
    configs = [(b, None) for b in BATCH_SIZES]
    if resolve_threads(None, big) > 1:
        configs.append((big, False))
    for b, parallel in configs:
        t = resolve_threads(parallel, b)
        name = f"BatchedPelmanism B={b} ({t} thread{'s' if t > 1 else ''})"
        mem = engine_memory(b, "pelmanism") if parallel is None else None
        for with_obs in (False, True):
            label = f"{name} masks" + (" + obs" if with_obs else "")
            rate, per_cpu = timed(engine_run(b, with_obs, parallel, "pelmanism"), seconds, repeats)
            rows.append((label, rate, per_cpu, mem))
    ref_name, ref = rows[2 * (len(BATCH_SIZES) - 1)][:2]  # B = 8192, default threads, masks
    for b in (64, 1024, 8192):
        rows.append((f"PelmanismVectorEnv B={b} (all flips)",
                     *timed(vector_env_run(b, "pelmanism"), seconds, repeats),
                     vector_env_memory(b, "pelmanism")))  # fmt: skip
    aec_name = "pelmanism_v0.env() (AEC)"
    rows.append((aec_name, *timed(aec_run(pelmanism_v0.env), seconds, repeats),
                 aec_memory(pelmanism_v0.env, random_play=True)))  # fmt: skip
    rows.append(("Pelmanism-v0 gymnasium (all flips)",
                 *timed(gym_run("Pelmanism-v0"), seconds, repeats),
                 gym_memory("Pelmanism-v0", random_play=True)))  # fmt: skip
    aec = rows[-2][1]
    print("\nPelmanism (standard deck, 2 players, perfect memory, random legal flips)")
    print(f"{'env':<46}{'flips/s':>13}{'engine/row':>12}{'row/AEC':>10}{'flips/CPU-s':>13}"
          f"{'peak B/game':>13}")  # fmt: skip
    for name, rate, per_cpu, mem in rows:
        mem_s = f"{mem:,}" if mem is not None else ""
        print(f"{name:<46}{rate:>13,.0f}{ref / rate:>11.1f}x{rate / aec:>9.1f}x{per_cpu:>13,.0f}"
              f"{mem_s:>13}")  # fmt: skip
    print(f"(engine/row: {ref_name} over the row; row/AEC: the row over {aec_name}; flips/s)")


# --------------------------------------------------------------------------------------
# Memory: The Board Game
# --------------------------------------------------------------------------------------
TARGET_BOARD = 50.0


def board_table(seconds: float, repeats: int) -> None:
    """The batched board game's vector env next to the scalar board envs (default board,
    two players, perfect memory, ``random`` opponents, random legal actions); flips are
    counted (returns and passes are actions, not flips)."""
    from memtab_env import memory_board_v0

    rows: list[tuple[str, float, float, int | None]] = []
    for b in (64, 1024, 8192):
        rows.append((f"MemoryBoardVectorEnv B={b} (all flips)",
                     *timed(vector_env_run(b, "memory_board"), seconds, repeats),
                     vector_env_memory(b, "memory_board")))  # fmt: skip
    rows.append(("memory_board_v0.env() (AEC, all actions)",
                 *timed(aec_run(memory_board_v0.env), seconds, repeats),
                 aec_memory(memory_board_v0.env, random_play=True)))  # fmt: skip
    rows.append(("MemoryBoard-v0 gymnasium (all flips)",
                 *timed(gym_run("MemoryBoard-v0"), seconds, repeats),
                 gym_memory("MemoryBoard-v0", random_play=True)))  # fmt: skip
    view = rows[-1][1]
    best = max(rate for name, rate, _, _ in rows if "VectorEnv" in name)
    print("\nMemory: The Board Game (default board, 2 players, perfect memory, random play)")
    print(f"{'env':<46}{'flips/s':>13}{'row/view':>10}{'flips/CPU-s':>13}{'peak B/game':>13}")
    for name, rate, per_cpu, mem in rows:
        mem_s = f"{mem:,}" if mem is not None else ""
        print(f"{name:<46}{rate:>13,.0f}{rate / view:>9.1f}x{per_cpu:>13,.0f}{mem_s:>13}")
    print("(row/view: the row over MemoryBoard-v0 gymnasium, in flips/s)")
    print(f"target: best batched view / scalar view {best / view:6.1f}x  (>= {TARGET_BOARD:g})  "
          f"{'met' if best / view >= TARGET_BOARD else 'NOT met'}")


# --------------------------------------------------------------------------------------
# SB3 training throughput
# --------------------------------------------------------------------------------------
def _scalar_memtab_env() -> Any:
    import gymnasium

    import memtab_env  # noqa: F401

    return gymnasium.make("MemTab-v0", opponents="random")


def sb3_rates(num_envs: int, timesteps: int) -> dict[str, float]:
    """MaskablePPO env steps per second of ``learn()`` on both vec envs."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from memtab_env.vector import MemTabSB3VecEnv

    def rate(venv: Any) -> float:
        model = MaskablePPO(
            "MlpPolicy", venv, n_steps=128, batch_size=512, n_epochs=4, seed=0, device="cpu",
            policy_kwargs={"net_arch": [64, 64]},
        )  # fmt: skip
        model.learn(total_timesteps=num_envs * 128)  # warm-up: one rollout and update
        start = time.perf_counter()
        model.learn(total_timesteps=timesteps, reset_num_timesteps=True)
        elapsed = time.perf_counter() - start
        return model.num_timesteps / elapsed

    out = {}
    vec = MemTabSB3VecEnv(num_envs=num_envs, seed=0, opponents="random")
    out["MemTabSB3VecEnv"] = rate(vec)
    vec.close()
    sub = SubprocVecEnv([_scalar_memtab_env for _ in range(num_envs)])
    try:
        out["SubprocVecEnv(MemTab-v0)"] = rate(sub)
    finally:
        sub.close()
    return out


# --------------------------------------------------------------------------------------
# MemTab
# --------------------------------------------------------------------------------------
def memtab_table(s: float, r: int) -> None:
    """The MemTab engine and vector env next to the scalar envs and peers, and the
    issue's targets."""
    try:  # PettingZoo's classic games draw with pygame
        from pettingzoo.classic import connect_four_v3, tictactoe_v3
    except ModuleNotFoundError as exc:
        from memtab_env.extras import missing_message

        raise SystemExit(missing_message(exc, "this benchmark's PettingZoo peers", extra="bench")) from None

    from memtab_env import memtab_v0
    from memtab_env.vector.engine_base import resolve_threads

    # name, flips per wall second, flips per CPU second, peak bytes per game
    rows: list[tuple[str, float, float, int | None]] = []
    large: list[tuple[str, float]] = []  # the engine at B >= 1024
    big = BATCH_SIZES[-1]
    configs = [(b, None) for b in BATCH_SIZES]
    if resolve_threads(None, big) > 1:
        configs.append((big, False))  # the same batch on one thread, for reference
    for b, parallel in configs:
        t = resolve_threads(parallel, b)
        name = f"BatchedMemTab B={b} ({t} thread{'s' if t > 1 else ''})"
        mem = engine_memory(b) if parallel is None else None
        for with_obs in (False, True):
            label = f"{name} masks" + (" + obs" if with_obs else "")
            rate, per_cpu = timed(engine_run(b, with_obs, parallel), s, r)
            rows.append((label, rate, per_cpu, mem))
            if b >= 1024:
                large.append((label, rate))
    ref_name, ref = rows[2 * (len(BATCH_SIZES) - 1)][:2]  # B = 8192, default threads, masks
    for b in (64, 1024, 8192):
        rows.append((f"MemTabVectorEnv B={b} (all flips)", *timed(vector_env_run(b), s, r),
                     vector_env_memory(b)))  # fmt: skip
    scalar: list[tuple[str, Callable[[], Any], Callable[[], int]]] = [
        ("memtab_v0.env() (AEC)", lambda: aec_run(memtab_v0.env),
         lambda: aec_memory(memtab_v0.env)),
        ("MemTab-v0 gymnasium (all flips)", gym_run, gym_memory),
        ("tictactoe_v3.env()", lambda: aec_run(tictactoe_v3.env),
         lambda: aec_memory(tictactoe_v3.env)),
        ("connect_four_v3.env()", lambda: aec_run(connect_four_v3.env),
         lambda: aec_memory(connect_four_v3.env)),
    ]  # fmt: skip
    if popgym_run() is None:
        print("popgym is not installed: skipping ConcentrationHard "
              '(the bench extra: pip install -e ".[bench]" in the memtab-env checkout)')
    else:
        scalar.append(("popgym ConcentrationHard", popgym_run, popgym_memory))  # type: ignore[arg-type]
    for name, make_run, memory in scalar:
        rows.append((name, *timed(make_run(), s, r), memory()))

    print(f"\n{'env':<46}{'flips/s':>13}{'engine/row':>12}{'flips/CPU-s':>13}{'peak B/game':>13}")
    for name, rate, per_cpu, mem in rows:
        mem_s = f"{mem:,}" if mem is not None else ""
        print(f"{name:<46}{rate:>13,.0f}{ref / rate:>11.1f}x{per_cpu:>13,.0f}{mem_s:>13}")
    print(f"(engine/row: {ref_name} over the row, in flips/s)")

    best_masks = max(rate for name, rate in large if "obs" not in name)
    best_obs = max(rate for name, rate in large if "obs" in name)
    print("\ntargets, best engine figure at B >= 1024")
    print(f"  engine with masks:        {best_masks / 1e6:6.1f} M flips/s  (>= 20)  "
          f"{'met' if best_masks >= TARGET_MASKS else 'NOT met'}")
    print(f"  engine with observations: {best_obs / 1e6:6.1f} M flips/s  (>= 5)   "
          f"{'met' if best_obs >= TARGET_OBS else 'NOT met'}")



#: the tables ``--games`` chooses among (a game's short name), in the order they print
TABLES: dict[str, Callable[[float, int], None]] = {
    "memtab": memtab_table, "pelmanism": pelmanism_table, "memory_board": board_table,
}


# --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per row (median)")
    ap.add_argument("--sb3-envs", type=int, default=16, help="envs of both SB3 vec envs")
    ap.add_argument("--sb3-steps", type=int, default=16384, help="timed learn() steps")
    ap.add_argument(
        "--torch-threads", type=int, default=1,
        help="torch intra-op threads for both trainings (1: a 64x64 MLP only pays for more)",
    )  # fmt: skip
    ap.add_argument("--skip-sb3", action="store_true", help="leave out the training part")
    ap.add_argument(
        "--games", default="memtab,pelmanism,memory_board",
        help="comma-separated tables to run: memtab (with the peers and the training part), "
        "pelmanism, memory_board",
    )  # fmt: skip
    args = ap.parse_args(argv)
    s, r = args.seconds, args.repeats
    games = {g.strip() for g in args.games.split(",") if g.strip()}
    unknown = sorted(games - set(TABLES))
    if unknown or not games:
        ap.error(f"--games: unknown table(s) {unknown}; allowed: {', '.join(TABLES)}")

    from memtab_env.vector.engine_base import available_cores

    print(
        f"cores: {available_cores()}; load average now: {os.getloadavg()[0]:.2f} "
        "(figures are only meaningful on a quiet machine)"
    )
    for name, table in TABLES.items():
        if name in games:
            table(s, r)
    if "memtab" in games and not args.skip_sb3:
        import torch

        torch.set_num_threads(args.torch_threads)
        rates = sb3_rates(args.sb3_envs, args.sb3_steps)
        print(
            f"\nMaskablePPO training throughput ({args.sb3_envs} envs, {args.sb3_steps} steps, "
            f"n_steps 128, batch 512, 4 epochs, MLP 64x64, {args.torch_threads} torch thread(s))"
        )
        for name, rate in rates.items():
            print(f"  {name:<28}{rate:>10,.0f} env steps/s")
        ratio = rates["MemTabSB3VecEnv"] / rates["SubprocVecEnv(MemTab-v0)"]
        print(f"  ratio: {ratio:.2f}x  (>= 2)  {'met' if ratio >= TARGET_SB3 else 'NOT met'}")


if __name__ == "__main__":
    main()
