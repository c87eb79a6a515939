"""One script for a machine with an accelerator: env flips/s and JAX PPO learner steps/s
on its first device, in under 5 minutes (compilation included).

Run: ``python benchmarks/device_check.py`` (``--tiny``: a few seconds on a CPU, to check
that the script works; the figures of a tiny run mean nothing).

Prints the device, then

- **env flips/s**: ``MemTab-v0`` (two players) under uniformly random legal play with
  auto-reset, observations computed, B games per jitted scan (``bench_jax.py``'s
  measurement, median of 3 runs of 1 s after compilation);
- **PPO steps/s**: the JAX PPO (:class:`memtab_env.jax.ppo.Trainer`) on MemTab-v0 under
  memory ``none`` against ``random``, for the network that learns MemTab (``kinds``
  encoder, a latch GRU per position) and the ``flat`` encoder with a GRU: learner steps/s
  over the updates after the first, and the first update's seconds (compilation; JAX's
  persistent cache, :mod:`memtab_env.jax.cache`, makes a rerun's shorter).

Prints, never asserts. Goals on one H200: >= 100M flips/s, and the JAX PPO >= 30x
RecurrentPPO's steps/s on this project's CPU machine (``bench_jax_ppo.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_jax beside this script

#: (env batches, PPO games, PPO rollout steps, PPO updates, env seconds per run)
#: the PPO networks timed: the one that learns MemTab, and one memory over the whole observation
ENCODERS = ("kinds", "flat")
SIZES = {"full": ((8192, 131072), 4096, 64, 6, 1.0), "tiny": ((16,), 4, 8, 3, 0.05)}


def ppo_rate(encoder: str, num_envs: int, num_steps: int, updates: int) -> tuple[float, float]:
    """(learner steps/s after the first update, seconds of the first update)."""
    from memtab_env.jax.ppo import PPOConfig, Trainer

    config = PPOConfig(encoder=encoder, memory_model="GRU", latch_init=encoder == "kinds",
                       recurrent_size=32, num_envs=num_envs, num_steps=num_steps,
                       total_timesteps=updates * num_envs * num_steps, learner_seat="random",
                       env_options={"num_players": 2, "memory": "none"}).check()
    trainer = Trainer(config)
    start = time.perf_counter()
    first = trainer.update()[0]
    compile_s = time.perf_counter() - start
    last = first
    while not trainer.done:
        last = trainer.update()[0]
    if last is first:
        return float("nan"), compile_s
    return (last["timesteps"] - first["timesteps"]) / (last["seconds"] - first["seconds"]), compile_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes: checks the script on a CPU")
    parser.add_argument("--encoders", nargs="+", default=list(ENCODERS), choices=list(ENCODERS),
                        help="the PPO networks timed (default: all)")
    args = parser.parse_args(argv)
    batches, ppo_envs, ppo_steps, updates, seconds = SIZES["tiny" if args.tiny else "full"]

    import jax
    from bench_jax import jax_run, median_rate

    start = time.perf_counter()
    device = jax.devices()[0]
    print(f"JAX {jax.__version__} on {len(jax.devices())} x {device.device_kind} ({device.platform})",
          flush=True)
    for batch in batches:
        rate = median_rate(jax_run("MemTab-v0", batch, True, 32), seconds, 3)
        print(f"env flips/s  MemTab-v0 2p, obs, B={batch}: {rate / 1e6:10.3f} M  "
              f"[{time.perf_counter() - start:.0f} s]", flush=True)
    for encoder in args.encoders:
        rate, compile_s = ppo_rate(encoder, ppo_envs, ppo_steps, updates)
        print(f"PPO steps/s  {encoder} GRU, {ppo_envs} games x {ppo_steps} steps: {rate:12.0f}  "
              f"(first update {compile_s:.1f} s)  [{time.perf_counter() - start:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
