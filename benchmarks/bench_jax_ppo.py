"""End-to-end training throughput (collection plus updates) of the JAX PPO
(:mod:`memtab_env.jax.ppo`) beside sb3-contrib's RecurrentPPO, in one process.

Run: ``python benchmarks/bench_jax_ppo.py [--models LSTM GRU MLP] [--timesteps 100000]``

Both train on MemTab-v0, two players, memory ``none``, ``random`` opponents, learner seat
drawn each episode, on the same CPU cores, with comparable recurrent policies:

- *per position* (what the study trains): RecurrentPPO with the project's recurrent set
  policy (``configs/recurrent_none.yaml``: one small LSTM per position, shared weights,
  then the set network; the batched numba vector env) against the JAX PPO's set encoder
  with a memax memory per position (``recurrent_size`` 16, as the LSTM's slot memory);
- *kinds*: the same RecurrentPPO against the JAX PPO's ``kinds`` network (its set
  layers pass messages between positions of one kind, as the torch set network does)
  with a latch-initialised GRU per position (``latch_init``; other models: no latch;
  ``recurrent_size`` 32, as the latch copies the position's 18 fields into its units);
- *flat*: RecurrentPPO's ``MlpLstmPolicy`` (an LSTM of ``--hidden`` units over the whole
  observation, ``DummyVecEnv``) against the JAX PPO's ``flat`` encoder of the same width.

Same rollout shape for both sides (``--num-envs`` games x 64 steps, 4 epochs), one torch
thread (as train.py). Steps/s counts learner steps; the JAX figure excludes the first
update (compilation), the SB3 figure a warm-up rollout. Prints, never asserts. Target:
the JAX PPO >= 30x RecurrentPPO.

``--breakdown`` also trains the JAX PPO at 1 and 2 epochs (RecurrentPPO at 1) and fits
seconds per step = collection (with GAE) + epochs x epoch: the rate with no updates at
all bounds the ratio that any number of epochs can reach.

``--env-only`` first measures collection without a network, the ceiling that the env
puts on training: the JAX PPO's own single-agent view and batched auto-reset stepping
uniformly random legal learner flips (a jitted scan of 64 steps over ``--num-envs``
games), beside the SB3 side's vector env stepping the same, one ``step`` call per
learner step of every game.
"""

from __future__ import annotations

import argparse
import time

BREAKDOWN_EPOCHS = (1, 2, 4)  # the last is the measured default, 4 epochs


def sb3_rate(kind: str, timesteps: int, num_envs: int, hidden: int, n_epochs: int = 4) -> float:
    import torch

    torch.set_num_threads(1)  # small networks: threads only contend (as train.py)
    if kind in ("position", "kinds"):
        from memtab_env.train.config import config_from_dict, load_yaml
        from memtab_env.train.model import make_model
        from memtab_env.train.vec import make_vec_env

        cfg = config_from_dict({"n_envs": num_envs, "n_steps": 64, "batch_size": 64 * num_envs // 4,
                                "n_epochs": n_epochs, "tensorboard": False, "progress_bar": False},
                               base=load_yaml("recurrent_none", "MemTab-v0"))
        cfg.validate()
        env = make_vec_env(cfg, seed=0)
        model = make_model(cfg, env, None)
    else:
        import gymnasium
        from sb3_contrib import RecurrentPPO
        from stable_baselines3.common.vec_env import DummyVecEnv

        import memtab_env  # noqa: F401 - registers MemTab-v0

        env = DummyVecEnv([lambda: gymnasium.make("MemTab-v0", memory="none", opponents="random",
                                                  learner_seat="random") for _ in range(num_envs)])
        model = RecurrentPPO("MlpLstmPolicy", env, n_steps=64, batch_size=64 * num_envs // 4,
                             n_epochs=n_epochs, policy_kwargs={"lstm_hidden_size": hidden}, seed=0,
                             verbose=0)
    model.learn(64 * num_envs)  # warm-up
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    return timesteps / (time.perf_counter() - start)


def jax_rate(kind: str, model: str, timesteps: int, num_envs: int, hidden: int,
             update_epochs: int = 4) -> float:
    from memtab_env.jax.ppo import PPOConfig, Trainer

    config = PPOConfig(memory_model=model, num_envs=num_envs, num_steps=64,
                       update_epochs=update_epochs,
                       encoder={"position": "set"}.get(kind, kind),
                       latch_init=kind == "kinds" and model == "GRU",
                       recurrent_size={"position": 16, "kinds": 32}.get(kind, hidden),
                       total_timesteps=timesteps + num_envs * 64, learner_seat="random",
                       env_options={"num_players": 2, "memory": "none"})
    trainer = Trainer(config)
    first = trainer.update()[0]
    while not trainer.done:
        last = trainer.update()[0]
    return (last["timesteps"] - first["timesteps"]) / (last["seconds"] - first["seconds"])


def fit_breakdown(epochs: list[int], rates: list[float]) -> tuple[float, float]:
    """Least-squares fit of seconds per learner step = collection + epochs x epoch over
    training runs at several ``epochs``: (collection, epoch), seconds per learner step."""
    import numpy as np

    epoch, collection = np.polyfit(np.asarray(epochs, float), 1.0 / np.asarray(rates, float), 1)
    return float(collection), float(epoch)


def env_rates(num_envs: int, rollouts: int) -> tuple[float, float]:
    """Learner steps/s of random legal play: (the JAX PPO's view, the SB3 side's vector
    env of ``configs/recurrent_none.yaml``)."""
    import jax
    import numpy as np
    from sb3_contrib.common.maskable.utils import get_action_masks

    import memtab_env.jax as mj
    from memtab_env.jax.ppo import PPOConfig, make_view
    from memtab_env.train.config import config_from_dict, load_yaml
    from memtab_env.train.vec import make_vec_env

    view = make_view(PPOConfig(learner_seat="random", env_options={"num_players": 2, "memory": "none"}))
    step = mj.auto_reset_batch(view.step, view.reset)

    @jax.jit
    def rollout(states: mj.SingleAgentState, key: jax.Array) -> tuple[mj.SingleAgentState, jax.Array]:
        def one(states: mj.SingleAgentState, key: jax.Array) -> tuple[mj.SingleAgentState, jax.Array]:
            act_key, reset_key = jax.random.split(key)
            actions = jax.vmap(mj.uniform_legal)(jax.random.split(act_key, num_envs),
                                                 states.legal_action_mask)
            states = step(states, actions, reset_key)
            return states, states.reward.sum()

        states, rewards = jax.lax.scan(one, states, jax.random.split(key, 64))
        return states, rewards.sum()

    states = jax.vmap(view.reset)(jax.random.split(jax.random.key(0), num_envs))
    states, total = rollout(states, jax.random.key(1))  # compilation
    total.block_until_ready()
    start = time.perf_counter()
    for i in range(rollouts):
        states, total = rollout(states, jax.random.key(2 + i))
    total.block_until_ready()
    jax_rate = rollouts * 64 * num_envs / (time.perf_counter() - start)

    cfg = config_from_dict({"n_envs": num_envs, "tensorboard": False, "progress_bar": False},
                           base=load_yaml("recurrent_none", "MemTab-v0"))
    env = make_vec_env(cfg, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    steps = max(64, rollouts * 64 // 8)
    start = time.perf_counter()
    for _ in range(steps):
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in get_action_masks(env)]))
    sb3_rate = steps * num_envs / (time.perf_counter() - start)
    return jax_rate, sb3_rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", default=["position", "flat"],
                        choices=["position", "kinds", "flat"])
    parser.add_argument("--models", nargs="+", default=["LSTM", "GRU", "MLP"])
    parser.add_argument("--timesteps", type=int, default=100_000)
    parser.add_argument("--sb3-timesteps", type=int, default=4096)
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--breakdown", action="store_true",
                        help="also train the JAX PPO at 1 and 2 epochs (RecurrentPPO at 1) and "
                             "split its time into collection and one epoch of updates")
    parser.add_argument("--env-only", action="store_true",
                        help="first measure collection alone (random legal flips, no network)")
    args = parser.parse_args(argv)
    if args.env_only:
        jax_env, sb3_env = env_rates(args.num_envs, rollouts=64)
        print(f"[env only] SB3 side's vector env ({args.num_envs} envs): {sb3_env:10.0f} steps/s", flush=True)
        print(f"[env only] JAX PPO's view, scan of 64 ({args.num_envs} envs): {jax_env:10.0f} steps/s  "
              f"ratio {jax_env / sb3_env:6.1f}x", flush=True)
    for kind in args.kinds:
        sb3 = sb3_rate(kind, args.sb3_timesteps, args.num_envs, args.hidden)
        print(f"[{kind}] sb3-contrib RecurrentPPO ({args.num_envs} envs): {sb3:10.0f} steps/s", flush=True)
        if args.breakdown:
            sb3_one = sb3_rate(kind, args.sb3_timesteps, args.num_envs, args.hidden, n_epochs=1)
            print(f"[{kind}] sb3-contrib RecurrentPPO at 1 epoch: {sb3_one:10.0f} steps/s", flush=True)
        for model in args.models:
            rate = jax_rate(kind, model, args.timesteps, args.num_envs, args.hidden)
            print(f"[{kind}] JAX PPO {model:>9} ({args.num_envs} envs): {rate:10.0f} steps/s  "
                  f"ratio {rate / sb3:6.1f}x", flush=True)
            if args.breakdown:
                rates = [jax_rate(kind, model, args.timesteps, args.num_envs, args.hidden, epochs)
                         for epochs in BREAKDOWN_EPOCHS[:-1]] + [rate]
                collection, epoch = fit_breakdown(list(BREAKDOWN_EPOCHS), rates)
                print(f"[{kind}] JAX PPO {model:>9} at {', '.join(map(str, BREAKDOWN_EPOCHS))} epochs: "
                      f"{', '.join(f'{r:.0f}' for r in rates)} steps/s; fit: collection "
                      f"{collection * 1e6:.1f} us + {epoch * 1e6:.1f} us per epoch per step; "
                      f"with no updates at all {1 / collection:.0f} steps/s, ratio "
                      f"{1 / collection / sb3:.1f}x; at 1 epoch on both sides "
                      f"ratio {rates[0] / sb3_one:.1f}x", flush=True)


if __name__ == "__main__":
    main()
