"""Ablation of the JAX PPO recipe on one study cell: the committed recipe against each
change, every variant trained by the study's own :func:`memtab_env.study.run.run_cell`
(the seeds vmapped in one :class:`memtab_env.jax.ppo.Trainer`, scored by the study's
scorer on the track's deals) and written as a study run file under
``OUT/<variant>/<track>/`` (default ``results/ablation``: outside ``results/study``,
whose run files are the study's one run per cell).

    python benchmarks/ablate_recipe.py --variant committed --timesteps 120000
    python benchmarks/ablate_recipe.py --list

A variant is a set of :class:`memtab_env.jax.ppo.PPOConfig` fields over the study's
``ppo`` (``configs/study.yaml``); the track, memory, model and seeds are the cell's.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

#: PPOConfig fields of each variant, over the study's shared ``ppo`` fields
VARIANTS: dict[str, dict] = {
    "committed": {},
    # the learning rate ends at a quarter of its start instead of zero
    "lr-floor": {"lr_floor": 0.25},
    # no annealing: 2e-3 throughout
    "constant-lr": {"anneal_lr": False},
    # whole-episode backprop: every rollout starts on fresh games; 64 steps of 32 games
    # keep the committed 2,048 samples per update and 512 per minibatch
    "whole-episode": {"fresh_rollouts": True, "num_envs": 32, "num_steps": 64},
    "whole-episode+lr-floor": {"fresh_rollouts": True, "num_envs": 32, "num_steps": 64,
                               "lr_floor": 0.25},
    # the training reward mix: the win plus 0.05 x the learner's score change per step
    "score-mix": {"score_reward": 0.05},
    # the reward mix, and `greedy` (a player with perfect memory) as the opponent from
    # 100,352 steps (49 updates of 2,048), when the MemTab reference beats `random` in
    # nine games of ten and its win no longer teaches it much
    "greedy-from-100k+score-mix": {"opponent_switches": "greedy@100352", "score_reward": 0.05},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS))
    parser.add_argument("--list", action="store_true", help="print the variants and exit")
    parser.add_argument("--config", default="configs/study.yaml")
    parser.add_argument("--track", default="pelmanism-solo-none")
    parser.add_argument("--memory", default="none")
    parser.add_argument("--model", default="GRU")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="default: the study's")
    parser.add_argument("--timesteps", type=int, default=None, help="default: the track's budget")
    parser.add_argument("--out", default="results/ablation")
    args = parser.parse_args(argv)
    if args.list or not args.variant:
        for name, fields in VARIANTS.items():
            print(f"{name}: {fields}")
        return 0
    from memtab_env.study import load_study
    from memtab_env.study.run import run_cell

    study = load_study(args.config)
    track = study.tracks[args.track]
    if args.timesteps:
        track = dataclasses.replace(track, timesteps=args.timesteps)
    study = dataclasses.replace(study, ppo={**study.ppo, **VARIANTS[args.variant]},
                                tracks={**study.tracks, args.track: track},
                                seeds=tuple(args.seeds) if args.seeds else study.seeds)
    run_cell(study, args.track, args.memory, args.model, Path(args.out) / args.variant,
             log=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
