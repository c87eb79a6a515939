"""Ablation of the JAX PPO recipe on one study cell: the committed recipe against each
change, every variant trained by the study's own :func:`memtab_env.study.run.run_cell`
(the seeds vmapped in one :class:`memtab_env.jax.ppo.Trainer`, scored by the study's
scorer on the track's deals) and written as a study run file under
``OUT/<variant>/<track>/`` (default ``results/ablation``: outside ``results/study``,
whose run files are the study's one run per cell).

    python benchmarks/ablate_recipe.py --variant committed --timesteps 120000
    python benchmarks/ablate_recipe.py --list
    python benchmarks/ablate_recipe.py --figure curves.png   # every variant's curves of the cell

A variant is a set of :class:`memtab_env.jax.ppo.PPOConfig` fields over the study's
``ppo`` (``configs/study.yaml``); the track, memory, model and seeds are the cell's.
``committed`` is the config's recipe as it stands; the other variants name every field
they change, so that a run folder means the same recipe whatever the config says now.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: PPOConfig fields of each variant, over the study's shared ``ppo`` fields
VARIANTS: dict[str, dict] = {
    "committed": {},
    # `random` as the opponent for the whole run (the MemTab grid's recipe before it
    # switched to `greedy` from 100,352 steps), with the win alone or with the reward mix
    "random-throughout": {"opponent_switches": ""},
    "random-throughout+score-mix": {"opponent_switches": "", "score_reward": 0.05},
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
    # the opponent switch alone, the win as the only reward
    "greedy-from-100k": {"opponent_switches": "greedy@100352"},
    # the same, then `expert` (the project's strongest hand-written player, played on the
    # host) from 401,408 steps (196 updates): the curriculum random, greedy, expert
    "greedy-from-100k+expert-from-400k+score-mix": {
        "opponent_switches": "greedy@100352,expert@401408", "score_reward": 0.05},
    # the memory curriculum: memory `perfect` for the first 299,008 learner steps (146
    # updates), then the cell's own, with `greedy` from 100,352 steps and the win alone
    "greedy-from-100k+perfect-memory-to-300k": {"opponent_switches": "greedy@100352",
                                                "perfect_memory_steps": 299008},
    # the recall loss (weight 1): each face-down position's memory is asked for the kind
    # the learner's observations last showed there, with the grid's recipe, and with the
    # reward mix added
    "greedy-from-100k+recall": {"opponent_switches": "greedy@100352", "recall_coef": 1.0},
    "greedy-from-100k+score-mix+recall": {"opponent_switches": "greedy@100352",
                                          "score_reward": 0.05, "recall_coef": 1.0},
    # the opponent switches alone (the win as the only reward): random, greedy, expert
    "greedy-from-100k+expert-from-400k": {"opponent_switches": "greedy@100352,expert@401408"},
    # the same, then the self-play pool (snapshots of the learner) from 200,704 steps (98
    # updates): the curriculum random, greedy, pool
    "greedy-from-100k+pool-from-200k+score-mix": {
        "opponent_switches": "greedy@100352,pool@200704", "score_reward": 0.05},
}


def vary(study: Any, variant: str, track: str, model: str, *, width: int | None = None,
         timesteps: int | None = None, seeds: Sequence[int] | None = None) -> tuple[Any, str]:
    """The study ``variant`` trains (its fields over the study's ``ppo``; ``width``: the
    model's ``recurrent_size``; ``timesteps``: the track's budget; ``seeds``), and the name
    of its run folder (``<variant>``, or ``<variant>+width-<N>``)."""
    if variant not in VARIANTS:
        raise ValueError(f"no variant {variant!r}; the variants are {', '.join(VARIANTS)}")
    if track not in study.tracks:
        raise ValueError(f"no track {track!r} in the study; its tracks are {', '.join(study.tracks)}")
    tracks = study.tracks
    if timesteps:
        tracks = {**tracks, track: dataclasses.replace(tracks[track], timesteps=timesteps)}
    models, name = study.models, variant
    if width is not None:
        if model not in models:
            raise ValueError(f"model {model!r} is not one of the study's models: {', '.join(models)}")
        if width < 1:
            raise ValueError(f"width must be a positive integer, got {width}")
        models = {**models, model: {**models[model], "recurrent_size": width}}
        name = f"{variant}+width-{width}"
    return dataclasses.replace(study, ppo={**study.ppo, **VARIANTS[variant]}, tracks=tracks,
                               models=models, seeds=tuple(seeds) if seeds else study.seeds), name


def draw_variants(out: Path, track: str, memory: str, model: str, figure: Path) -> list[str]:
    """One figure of the curves of every variant's run file of the cell under ``out``
    (a line per variant, labelled with its seeds; the study's own :func:`draw_curves`);
    returns the variants drawn."""
    import shutil
    import tempfile

    from memtab_env.study import load_run, run_path
    from memtab_env.study.figures import draw_curves

    runs, names = [], []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        path = run_path(folder, track, memory, model)
        if path.exists():
            run = load_run(path)  # a fresh dict: relabelled for the figure only
            run["model"] = f"{model}, {folder.name} ({len(run['seeds'])} seeds)"
            run["track"] = f"{track} {model}"
            runs.append(run)
            names.append(folder.name)
    if not runs:
        raise ValueError(f"no run file of {track} / {memory} / {model} under {out}/*/")
    with tempfile.TemporaryDirectory() as tmp:
        [drawn] = draw_curves(runs, tmp)
        figure.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(drawn, figure)
    return names


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
    parser.add_argument("--width", type=int, default=None,
                        help="the model's recurrent_size instead of the study's (a capacity "
                             "probe); the run goes to OUT/<variant>+width-<N>")
    parser.add_argument("--figure", default=None, metavar="PNG",
                        help="draw the curves of every variant's run of the cell under --out "
                             "into PNG and exit (trains nothing)")
    args = parser.parse_args(argv)
    if args.figure:
        try:
            names = draw_variants(Path(args.out), args.track, args.memory, args.model,
                                  Path(args.figure))
        except ValueError as exc:
            parser.error(str(exc))
        print(f"{args.figure}: {', '.join(names)}")
        return 0
    if args.list or not args.variant:
        for name, fields in VARIANTS.items():
            print(f"{name}: {fields}")
        return 0
    from memtab_env.study import load_study
    from memtab_env.study.run import run_cell

    try:
        study, name = vary(load_study(args.config), args.variant, args.track, args.model,
                           width=args.width, timesteps=args.timesteps, seeds=args.seeds)
    except ValueError as exc:
        parser.error(str(exc))
    run_cell(study, args.track, args.memory, args.model, Path(args.out) / name,
             log=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
