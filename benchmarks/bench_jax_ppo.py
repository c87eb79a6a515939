"""End-to-end training throughput (collection plus updates) of the JAX PPO
(:mod:`memtab_env.jax.ppo`) beside sb3-contrib's RecurrentPPO, in one process.

Run: ``python benchmarks/bench_jax_ppo.py [--models GRU LSTM MLP] [--timesteps 200000]``

Both train on MemTab-v0, two players, memory ``none``, ``random`` opponents, learner seat
drawn each episode. RecurrentPPO: ``MlpLstmPolicy`` with an LSTM of ``--hidden`` units,
``--sb3-envs`` DummyVecEnv copies of ``gymnasium.make("MemTab-v0")``, ``n_steps=64``,
4 epochs, one torch thread (as train.py). JAX PPO: the same width, ``--num-envs`` games,
64-step rollouts, 4 epochs of 4 minibatches. Steps/s counts learner steps; the JAX
figure excludes the first update (compilation). Prints, never asserts. Target: >= 30x
RecurrentPPO on the same CPU cores.
"""

from __future__ import annotations

import argparse
import time


def sb3_rate(timesteps: int, num_envs: int, hidden: int) -> float:
    import gymnasium
    import torch
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    import memtab_env  # noqa: F401 - registers MemTab-v0

    torch.set_num_threads(1)  # small networks: threads only contend (as train.py)
    env = DummyVecEnv([lambda: gymnasium.make("MemTab-v0", memory="none", opponents="random",
                                              learner_seat="random") for _ in range(num_envs)])
    model = RecurrentPPO("MlpLstmPolicy", env, n_steps=64, batch_size=64 * num_envs // 4, n_epochs=4,
                         policy_kwargs={"lstm_hidden_size": hidden}, seed=0, verbose=0)
    model.learn(64 * num_envs)  # warm-up
    start = time.perf_counter()
    model.learn(timesteps)
    return timesteps / (time.perf_counter() - start)


def jax_rate(model: str, timesteps: int, num_envs: int, hidden: int) -> float:
    from memtab_env.jax.ppo import PPOConfig, train

    config = PPOConfig(memory_model=model, recurrent_size=hidden, num_envs=num_envs, num_steps=64,
                       total_timesteps=timesteps + num_envs * 64, learner_seat="random",
                       env_options={"num_players": 2, "memory": "none"})
    _, history = train(config)
    first, last = history[0], history[-1]
    return (last["timesteps"] - first["timesteps"]) / (last["seconds"] - first["seconds"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["GRU", "LSTM", "MLP"])
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--sb3-timesteps", type=int, default=10_000)
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--sb3-envs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=128)
    args = parser.parse_args(argv)
    sb3 = sb3_rate(args.sb3_timesteps, args.sb3_envs, args.hidden)
    print(f"sb3-contrib RecurrentPPO (LSTM {args.hidden}, {args.sb3_envs} envs): {sb3:10.0f} steps/s")
    for model in args.models:
        rate = jax_rate(model, args.timesteps, args.num_envs, args.hidden)
        print(f"JAX PPO {model:>9} ({args.num_envs} envs): {rate:10.0f} steps/s  "
              f"ratio {rate / sb3:6.1f}x", flush=True)


if __name__ == "__main__":
    main()
