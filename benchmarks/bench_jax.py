"""Flips per second of the JAX backend (``memtab_env.jax``), beside the numba batched
engine run in the same process.

Run: ``python benchmarks/bench_jax.py [--seconds 1.0] [--repeats 3] [--batch 1 64 ...]``
(``JAX_PLATFORMS=cpu`` to force the CPU; on a machine with a GPU JAX uses it).

What is timed, under uniformly random legal play with auto-reset (a fresh deal drawn
from JAX keys when a game ends, ``auto_reset_batch``): one jitted ``lax.scan`` of
``--unroll`` steps over B vmapped games, each step drawing a random legal flip per game
from the state's mask (``uniform_legal``), ``env.step`` and the auto-reset. "obs"
computes every state's observation of the player on turn (``observe=True``, the
default) and reads all of it as a policy's input layer does, as float32 (their sum);
"no obs" steps the rules, memory and rewards only (``observe=False``). Summing the
int8 observations directly would time XLA's integer reduction instead, which on CPUs
costs more than building them (8 to 24 ms for B = 8,192 observations of MemTab here,
against under 1 ms for the float32 sum). Flips/s
= B x steps / s, the median of ``--repeats`` runs of ``--seconds`` each after a warm-up
(compilation excluded). The numba peer is ``BatchedMemTab`` / ``BatchedPelmanism``
(every core, masks; "+ obs" adds its observations), as ``benchmarks/bench_vector.py``
times it. Prints, never asserts.

Goals: >= 1M flips/s on 2 CPU cores at large B; >= 100M flips/s on one H200.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

BATCH_SIZES = (1, 64, 1024, 8192, 65536)
GAMES = {"MemTab-v0": {"num_players": 2}, "Pelmanism-v0": {"deck": "standard", "num_players": 2}}


def median_rate(run: Callable[[float], tuple[float, float]], seconds: float, repeats: int) -> float:
    run(min(seconds, 0.3))
    rates = []
    for _ in range(repeats):
        count, elapsed = run(seconds)
        rates.append(count / elapsed)
    return statistics.median(rates)


def jax_run(env_id: str, batch: int, observe: bool, unroll: int) -> Callable:
    import jax
    import jax.numpy as jnp

    import memtab_env.jax as mj

    env = mj.make(env_id, observe=observe, **GAMES[env_id])
    step = mj.auto_reset_batch(env.step, env.init)
    random_actions = jax.vmap(mj.uniform_legal)

    def one(carry, _):
        state, key = carry
        key, act_key, reset_key = jax.random.split(key, 3)
        actions = random_actions(jax.random.split(act_key, batch), state.legal_action_mask)
        state = step(state, actions, reset_key)
        out = state.observation.astype(jnp.float32).sum() if observe else state.rewards.sum()
        return (state, key), out

    @jax.jit
    def many(state, key):
        (state, key), out = jax.lax.scan(one, (state, key), None, length=unroll)
        return state, key, out.sum()

    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), batch))
    key = jax.random.key(1)
    holder = [state, key]

    def run(seconds: float) -> tuple[float, float]:
        steps = 0
        start = time.perf_counter()
        while True:
            s, k, out = many(holder[0], holder[1])
            out.block_until_ready()
            holder[0], holder[1] = s, k
            steps += unroll
            elapsed = time.perf_counter() - start
            if elapsed > seconds:
                return steps * batch, elapsed

    return run


def numba_run(env_id: str, batch: int, with_obs: bool) -> Callable:
    """The numba batched engine timed as ``bench_vector.py`` times it (every core, masks,
    optionally observations)."""
    from bench_vector import engine_run  # this folder's script: on the path when run

    from memtab_env.registry import game_spec

    return engine_run(batch, with_obs, game=game_spec(env_id).name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--unroll", type=int, default=32, help="steps per jitted call")
    parser.add_argument("--batch", type=int, nargs="+", default=list(BATCH_SIZES))
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--peer-batch", type=int, default=8192, help="numba engine batch size")
    args = parser.parse_args(argv)

    import jax

    devices = jax.devices()
    print(f"JAX {jax.__version__} on {len(devices)} x {devices[0].device_kind} ({devices[0].platform})")
    for env_id in args.games:
        peer = {obs: median_rate(numba_run(env_id, args.peer_batch, obs), args.seconds, args.repeats)
                for obs in (False, True)}
        print(f"\n{env_id} {GAMES[env_id]}: flips/s, median of {args.repeats} x {args.seconds:g} s")
        print(f"numba BatchedEngine B={args.peer_batch}: {peer[False] / 1e6:8.2f} M (masks), "
              f"{peer[True] / 1e6:8.2f} M (+ obs)")
        print(f"{'B':>7}  {'JAX no obs':>12}  {'JAX obs':>12}  {'obs / no obs':>13}  {'no obs / numba':>15}  "
              f"{'obs / numba+obs':>16}")
        for b in args.batch:
            rates = {obs: median_rate(jax_run(env_id, b, obs, args.unroll), args.seconds, args.repeats)
                     for obs in (False, True)}
            print(f"{b:>7}  {rates[False] / 1e6:10.3f} M  {rates[True] / 1e6:10.3f} M  "
                  f"{rates[True] / rates[False]:13.3f}  {rates[False] / peer[False]:15.3f}  "
                  f"{rates[True] / peer[True]:16.3f}", flush=True)


if __name__ == "__main__":
    main()
