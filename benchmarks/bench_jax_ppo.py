"""End-to-end training throughput (collection plus updates) of the JAX PPO
(:mod:`memtab_env.jax.ppo`) beside sb3-contrib's RecurrentPPO, in one process, at matched
settings.

Run: ``python benchmarks/bench_jax_ppo.py [--kinds kinds flat] [--models LSTM GRU MLP]
[--threads 1] [--repeats 3]``

Both train on MemTab-v0, two players, memory ``none``, ``random`` opponents, learner seat
drawn each episode, with the same settings on both sides (:func:`settings` reads them
back from the two built learners; ``tests/test_benchmarks.py`` asserts them equal):

- **threads**: the process is pinned to ``--threads`` cores (``os.sched_setaffinity``),
  torch runs that many threads and, at one thread, XLA's CPU backend runs single-threaded
  (``--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``); ``0``: every core
  on both sides;
- **rollouts**: ``--num-envs`` games x 64 steps, 4 epochs of 4 minibatches (games split);
- **widths**: one ``--width`` for the recurrent memory and the layers after it;
- **actor and critic alike**: one memory shared by the actor and the critic, separate
  heads after it (sb3-contrib's ``shared_lstm=True, enable_critic_lstm=False``);
- **masking**: both sides never choose an illegal flip (the JAX PPO masks the logits
  with the env's legal mask; the torch policies read the face-down positions from the
  observation, ``ObsMaskedLstmPolicy``); each side says so in its output line.

The networks:

- *position*: RecurrentPPO with the project's slot-memory set policy (``SlotMemoryPolicy``:
  one small LSTM per position, shared weights, then the set network; the batched numba
  vector env) against the JAX PPO's ``set`` encoder with a memax memory per position;
- *kinds*: the same RecurrentPPO against the JAX PPO's ``kinds`` network (the one that
  learns MemTab: messages between positions of one kind, as the torch set network), a
  latch-initialised GRU per position (``latch_init``; other models: no latch);
- *flat*: RecurrentPPO's masked LSTM policy (one LSTM over the whole observation, linear
  heads) against the JAX PPO's ``flat`` encoder (one memax memory, linear heads).

Steps/s counts learner steps: the JAX figure excludes the first update (compilation,
printed apart), the SB3 figure a warm-up rollout and times ``--sb3-timesteps`` (>= 8,192).
Each figure is the median of ``--repeats`` runs; ratios are of medians measured in the
same process. Prints, never asserts. Goal on a CPU: the JAX PPO >= 10x RecurrentPPO.

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
import os
import statistics
import sys
import time
from typing import Any

BREAKDOWN_EPOCHS = (1, 2, 4)  # the last is the measured default, 4 epochs
NUM_STEPS, EPOCHS, MINIBATCHES = 64, 4, 4
#: the settings that must be equal on both sides (:func:`settings`)
MATCHED = ("threads", "num_envs", "num_steps", "epochs", "minibatches", "width",
           "shared_memory", "masks_illegal")
MIN_SB3_TIMESTEPS = 8192
DEFAULT_WIDTH = {"position": 16, "kinds": 32, "flat": 128}


def pin_threads(threads: int) -> int:
    """Pin this process to ``threads`` cores (0: every core it may use) and both
    libraries to that many threads; call before jax is imported. Returns the count."""
    cores = sorted(os.sched_getaffinity(0))
    if threads < 0 or threads > len(cores):
        raise SystemExit(f"--threads must be 0 (every core) or 1..{len(cores)}, got {threads}")
    threads = threads or len(cores)
    if threads == 1:
        if "jax" in sys.modules:
            raise RuntimeError("pin_threads must run before jax is imported")
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                   " intra_op_parallelism_threads=1").strip()
    os.sched_setaffinity(0, cores[:threads])
    import torch

    torch.set_num_threads(threads)
    return threads


def xla_threads() -> int:
    """The threads XLA's CPU backend computes with: 1 when pinned single-threaded, else
    the cores this process may use."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_cpu_multi_thread_eigen=false" in flags and "intra_op_parallelism_threads=1" in flags:
        return 1
    return len(os.sched_getaffinity(0))


def sb3_model(kind: str, num_envs: int, width: int, n_epochs: int = EPOCHS) -> Any:
    """The RecurrentPPO learner of ``kind`` (built, not trained)."""
    from memtab_env.agents.recurrent_policy import ObsMaskedLstmPolicy, SlotMemoryPolicy, legal_status
    from sb3_contrib import RecurrentPPO

    from memtab_env.train.config import config_from_dict, load_yaml
    from memtab_env.train.vec import make_vec_env

    cfg = config_from_dict({"n_envs": num_envs, "n_steps": NUM_STEPS,
                            "batch_size": NUM_STEPS * num_envs // MINIBATCHES, "n_epochs": n_epochs,
                            "tensorboard": False, "progress_bar": False},
                           base=load_yaml("recurrent_none", "MemTab-v0"))
    cfg.validate()
    env = make_vec_env(cfg, seed=0)
    status = legal_status(cfg.game, num_players=cfg.num_players, **cfg.env_options)
    if kind in ("position", "kinds"):
        from memtab_env.agents.set_policy import token_layout

        layout = token_layout(cfg.game, num_players=cfg.num_players, **cfg.env_options)
        policy: Any = SlotMemoryPolicy
        kwargs: dict[str, Any] = dict(legal_status=status, layout=layout, slot_size=width,
                                      set_dim=width, set_layers=2, value_hidden=width)
    else:
        policy = ObsMaskedLstmPolicy
        kwargs = dict(legal_status=status, lstm_hidden_size=width, net_arch=[], shared_lstm=True,
                      enable_critic_lstm=False)
    return RecurrentPPO(policy, env, n_steps=NUM_STEPS, batch_size=NUM_STEPS * num_envs // MINIBATCHES,
                        n_epochs=n_epochs, policy_kwargs=kwargs, seed=0, verbose=0)


def jax_config(kind: str, model: str, num_envs: int, width: int, timesteps: int,
               update_epochs: int = EPOCHS) -> Any:
    """The JAX PPO config of ``kind`` and memax ``model``."""
    from memtab_env.jax.ppo import PPOConfig

    return PPOConfig(memory_model=model, num_envs=num_envs, num_steps=NUM_STEPS,
                     update_epochs=update_epochs, num_minibatches=MINIBATCHES,
                     encoder={"position": "set"}.get(kind, kind),
                     latch_init=kind == "kinds" and model == "GRU", recurrent_size=width,
                     total_timesteps=timesteps + num_envs * NUM_STEPS, learner_seat="random",
                     env_options={"num_players": 2, "memory": "none"}).check()


def settings(sb3: Any, config: Any) -> dict[str, dict[str, Any]]:
    """What each side was built with, read back from the learners themselves:
    ``{"sb3": {...}, "jax": {...}}``, the keys of :data:`MATCHED`."""
    import torch

    policy = sb3.policy
    slot = getattr(policy, "slot_size", None)
    minibatches, rest = divmod(sb3.n_steps * sb3.n_envs, sb3.batch_size)
    return {
        "sb3": {"threads": torch.get_num_threads(), "num_envs": sb3.n_envs, "num_steps": sb3.n_steps,
                "epochs": sb3.n_epochs, "minibatches": minibatches if not rest else None,
                "width": slot if slot is not None else policy.lstm_actor.hidden_size,
                "shared_memory": bool(policy.shared_lstm and not policy.enable_critic_lstm),
                "masks_illegal": hasattr(policy, "legal_status")},
        "jax": {"threads": xla_threads(), "num_envs": config.num_envs, "num_steps": config.num_steps,
                "epochs": config.update_epochs, "minibatches": config.num_minibatches,
                "width": config.recurrent_size,
                "shared_memory": True,  # one memory feeds both heads in every JAX network
                "masks_illegal": True},  # every JAX network masks its logits with the legal mask
    }


def sb3_rate(kind: str, timesteps: int, num_envs: int, width: int, n_epochs: int = EPOCHS) -> float:
    model = sb3_model(kind, num_envs, width, n_epochs)
    model.learn(NUM_STEPS * num_envs)  # warm-up
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    return timesteps / (time.perf_counter() - start)


def jax_rate(kind: str, model: str, timesteps: int, num_envs: int, width: int,
             update_epochs: int = EPOCHS) -> tuple[float, float]:
    """(learner steps/s after the first update, seconds of the first update)."""
    from memtab_env.jax.ppo import Trainer

    trainer = Trainer(jax_config(kind, model, num_envs, width, timesteps, update_epochs))
    start = time.perf_counter()
    first = trainer.update()[0]
    compile_s = time.perf_counter() - start
    while not trainer.done:
        last = trainer.update()[0]
    return (last["timesteps"] - first["timesteps"]) / (last["seconds"] - first["seconds"]), compile_s


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



def _median(rates: list[float]) -> float:
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", default=["kinds", "flat"],
                        choices=["position", "kinds", "flat"])
    parser.add_argument("--models", nargs="+", default=["LSTM", "GRU", "MLP"],
                        help="memax models of the JAX side")
    parser.add_argument("--timesteps", type=int, default=100_000)
    parser.add_argument("--sb3-timesteps", type=int, default=MIN_SB3_TIMESTEPS)
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--width", type=int, default=None,
                        help="width of the memory and the layers after it on both sides (default: "
                             + ", ".join(f"{k} {v}" for k, v in DEFAULT_WIDTH.items()) + ")")
    parser.add_argument("--threads", type=int, default=1,
                        help="cores and threads of both sides (0: every core)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per figure; the median is printed")
    parser.add_argument("--breakdown", action="store_true",
                        help="also train the JAX PPO at 1 and 2 epochs (RecurrentPPO at 1) and "
                             "split its time into collection and one epoch of updates")
    parser.add_argument("--env-only", action="store_true",
                        help="first measure collection alone (random legal flips, no network)")
    args = parser.parse_args(argv)
    if args.sb3_timesteps < MIN_SB3_TIMESTEPS:
        parser.error(f"--sb3-timesteps must be >= {MIN_SB3_TIMESTEPS}, got {args.sb3_timesteps}")
    threads = pin_threads(args.threads)
    print(f"threads: {threads} on both sides (torch {threads}, XLA {xla_threads()})", flush=True)
    if args.env_only:
        jax_env, sb3_env = env_rates(args.num_envs, rollouts=64)
        print(f"[env only] SB3 side's vector env ({args.num_envs} envs): {sb3_env:10.0f} steps/s", flush=True)
        print(f"[env only] JAX PPO's view, scan of 64 ({args.num_envs} envs): {jax_env:10.0f} steps/s  "
              f"ratio {jax_env / sb3_env:6.1f}x", flush=True)
    for kind in args.kinds:
        width = args.width or DEFAULT_WIDTH[kind]
        built = settings(sb3_model(kind, args.num_envs, width),
                         jax_config(kind, args.models[0], args.num_envs, width, args.timesteps))
        unequal = [k for k in MATCHED if built["sb3"][k] != built["jax"][k]]
        if unequal:
            raise SystemExit(f"[{kind}] settings differ between the sides: {unequal}: {built}")
        print(f"[{kind}] settings (both sides): " + ", ".join(f"{k} {built['jax'][k]}" for k in MATCHED),
              flush=True)
        sb3 = _median([sb3_rate(kind, args.sb3_timesteps, args.num_envs, width)
                       for _ in range(args.repeats)])
        print(f"[{kind}] sb3-contrib RecurrentPPO ({args.num_envs} envs, width {width}, masks illegal "
              f"flips: {'yes' if built['sb3']['masks_illegal'] else 'no'}): {sb3:10.0f} steps/s", flush=True)
        if args.breakdown:
            sb3_one = sb3_rate(kind, args.sb3_timesteps, args.num_envs, width, n_epochs=1)
            print(f"[{kind}] sb3-contrib RecurrentPPO at 1 epoch: {sb3_one:10.0f} steps/s", flush=True)
        for model in args.models:
            runs = [jax_rate(kind, model, args.timesteps, args.num_envs, width) for _ in range(args.repeats)]
            rate = _median([r for r, _ in runs])
            print(f"[{kind}] JAX PPO {model:>9} ({args.num_envs} envs, width {width}, masks illegal flips: "
                  f"{'yes' if built['jax']['masks_illegal'] else 'no'}): {rate:10.0f} steps/s  "
                  f"ratio {rate / sb3:6.1f}x  (first update, compilation included: "
                  f"{', '.join(f'{c:.1f}' for _, c in runs)} s)", flush=True)
            if args.breakdown:
                rates = [jax_rate(kind, model, args.timesteps, args.num_envs, width, epochs)[0]
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
