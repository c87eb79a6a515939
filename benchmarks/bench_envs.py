"""Flips per second of the scalar MemTab envs against PettingZoo and POPGym peers.

Run: ``python benchmarks/bench_envs.py [--seconds 3] [--repeats 5]``

Every env is driven by the same loop (``agent_iter`` / ``last`` / a uniformly random
legal action from the mask / ``step``), in the same process, one after another, and each
figure is the median of ``--repeats`` timed runs. Printed ratios compare MemTab with the
peer named in the issue; absolute numbers depend on the machine, ratios much less.

Targets: ``raw_env()`` >= 2x tictactoe ``raw_env()``; ``env()`` >= 1.2x
tictactoe ``env()``; Gymnasium ``MemTab-v0`` (opponent moves included) >= POPGym
``ConcentrationHard``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np


def aec_rate(make: Callable, seconds: float, seed: int = 0) -> float:
    """Live-agent steps per second of an AEC env under random legal play."""
    env = make()
    rng = np.random.default_rng(seed)
    randoms = rng.random(1 << 16)
    k = steps = 0
    start = time.perf_counter()
    game = 0
    while True:
        env.reset(seed=game)
        game += 1
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(randoms[k & 0xFFFF] * len(legal))]))
            k += 1
            steps += 1
        if time.perf_counter() - start > seconds:
            return steps / (time.perf_counter() - start)


def gym_rate(make: Callable, seconds: float, mask_fn: Callable | None = None) -> float:
    """Learner steps per second of a Gymnasium env, counted as flips including opponents'
    when ``flips`` is reported in ``info`` (MemTab), else env steps."""
    env = make()
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    episode = 0
    while True:
        obs, info = env.reset(seed=episode)
        episode += 1
        done = False
        while not done:
            if mask_fn is not None:
                legal = np.flatnonzero(mask_fn(env, info))
                action = int(legal[int(rng.random() * len(legal))])
            else:
                action = env.action_space.sample()
            obs, _, term, trunc, info = env.step(action)
            steps += 1
            done = term or trunc
        if time.perf_counter() - start > seconds:
            return steps / (time.perf_counter() - start)


def memtab_gym_flip_rate(seconds: float) -> float:
    """All flips (learner and opponent) per second through ``gymnasium.make("MemTab-v0")``."""
    import gymnasium as gym

    import memtab_env  # noqa: F401

    env = gym.make("MemTab-v0", opponents="random")
    rng = np.random.default_rng(0)
    flips = 0
    start = time.perf_counter()
    episode = 0
    while True:
        obs, info = env.reset(seed=episode)
        episode += 1
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            obs, _, term, trunc, info = env.step(int(legal[int(rng.random() * len(legal))]))
            done = term or trunc
        flips += len(env.unwrapped.aec._transitions)
        if time.perf_counter() - start > seconds:
            return flips / (time.perf_counter() - start)


def median_rate(fn: Callable[[], float], repeats: int) -> float:
    fn()  # warm-up (imports, caches)
    return statistics.median(fn() for _ in range(repeats))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of one timed run")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per env (median)")
    args = ap.parse_args(argv)
    s, r = args.seconds, args.repeats

    try:  # PettingZoo's classic games draw with pygame
        from pettingzoo.classic import tictactoe_v3
    except ModuleNotFoundError as exc:
        from memtab_env.extras import missing_message

        raise SystemExit(missing_message(exc, "this benchmark's PettingZoo peers", extra="bench")) from None

    from memtab_env import memtab_v0

    rows: dict[str, float] = {}
    rows["memtab raw_env()"] = median_rate(lambda: aec_rate(memtab_v0.raw_env, s), r)
    rows["tictactoe_v3 raw_env()"] = median_rate(lambda: aec_rate(tictactoe_v3.raw_env, s), r)
    rows["memtab env()"] = median_rate(lambda: aec_rate(memtab_v0.env, s), r)
    rows["tictactoe_v3 env()"] = median_rate(lambda: aec_rate(tictactoe_v3.env, s), r)
    rows["MemTab-v0 gymnasium (all flips)"] = median_rate(lambda: memtab_gym_flip_rate(s), r)
    try:
        import popgym  # noqa: F401
        from popgym.envs.concentration import ConcentrationHard

        rows["popgym ConcentrationHard"] = median_rate(
            lambda: gym_rate(ConcentrationHard, s), r)
    except ImportError:
        print("popgym is not installed: skipping ConcentrationHard "
              '(the bench extra: pip install -e ".[bench]" in the memtab-env checkout)')

    print(f"\n{'env':<34}{'flips/s (median)':>18}")
    for name, rate in rows.items():
        print(f"{name:<34}{rate:>18,.0f}")
    print("\nratios (target)")
    print(f"  raw_env() / tictactoe raw_env(): "
          f"{rows['memtab raw_env()'] / rows['tictactoe_v3 raw_env()']:.2f}  (>= 2.0)")
    print(f"  env() / tictactoe env():         "
          f"{rows['memtab env()'] / rows['tictactoe_v3 env()']:.2f}  (>= 1.2)")
    if "popgym ConcentrationHard" in rows:
        print(f"  MemTab-v0 / ConcentrationHard:   "
              f"{rows['MemTab-v0 gymnasium (all flips)'] / rows['popgym ConcentrationHard']:.2f}"
              f"  (>= 1.0)")


if __name__ == "__main__":
    main()
