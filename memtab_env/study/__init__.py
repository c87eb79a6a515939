"""The memory study: which memory architecture does how well, under which memory model.

Protocol (``configs/study.yaml`` holds every number; ``memtab study`` runs it):

- **Cells.** Every memory architecture of ``models`` (memax models behind the
  position-equivariant set encoder of :mod:`memtab_env.jax.ppo`: a memory per position)
  x every env memory model of ``memories`` (``none``, ``window:4``), plus the
  ``reference`` cell (no memory architecture, ``perfect`` memory: what a memoryless
  policy reaches when the env remembers for it), on every track of ``tracks``.
- **Seeds.** Each cell trains every seed of ``seeds`` with the same PPO settings and the
  track's fixed sample budget (``timesteps`` learner steps); the seeds train side by
  side in one compiled call (:class:`memtab_env.jax.ppo.Trainer`), each with its own
  weights, games and samples.
- **Scores.** A track's score is normalised: 0 = uniformly random play, 1 = a fixed
  strong reference. ``solo-turns`` (Pelmanism solo): ``(E_random - T) / (E_random -
  E_opt)``, ``T`` the mean number of turns over the track's deals, ``E_random = n**2`` and
  ``E_opt`` the exact optimum of perfect-memory play
  (:mod:`memtab_env.games.pelmanism.values`). ``benchmark`` (``memtab-2p-none``): one
  scale per track id, the benchmark's: the final score of each seed is ``memtab
  evaluate``'s normalised score of its saved policy on the benchmark track of that id
  (its first ``final_deals`` deals, every seat rotation, every reference opponent,
  ``expert`` included, the policy's most likely legal flip as the benchmark plays it;
  :func:`memtab_env.study.scores.benchmark_score`), so the study and the leaderboard give
  one policy one number. The learning curves use a cheap proxy on the JAX view: every deal
  once per seat against the opponents it plays exactly (``random``, ``greedy``), sampled
  actions, normalised between those opponents' anchors (:func:`benchmark_anchors`).
  Run files record the scale of their final scores (``final_scale``); older benchmark
  run files, without it, hold the proxy, and the tables say so.
- **Play.** Curves: policies play their sampled actions (the stochastic policy PPO
  trains; a memoryless policy's most likely flip repeats itself for ever under memory
  ``none``); benchmark final scores: as the benchmark plays them.
- **Deals.** Final scores use the first ``final_deals`` of the benchmark's evaluation
  deals (deal ``i`` from seed ``EVAL_SEED_START + i``, never used in training), the
  learning curves the first ``curve_deals``, ``curve_points`` times per run, all played
  in the JAX view (the differential tests hold it equal to the AEC env flip for flip).
- **Aggregates.** Per cell: the interquartile mean (IQM) over seeds and its 95%
  stratified-bootstrap interval (:func:`memtab_env.protocol.metrics.stratified_bootstrap`,
  Agarwal et al., "Deep RL at the Edge of the Statistical Precipice", 2021); across
  tracks: the same with tracks as strata.
- **Files.** One run file per cell (``results/study/<track>/<memory>__<model>.json``,
  format ``memtab-study-run/1``: config, per-seed curves and final scores, timing and
  ``platform``, the library versions, CPU and devices that trained it; older run files
  lack it) and the trained policies beside it (``<memory>__<model>__s<seed>.zip``, JAX
  PPO checkpoints that ``memtab_env.agents.make(path)`` plays). ``LEADERBOARD.md``'s
  memory study section and the figures in ``docs/study/`` are recomputed from the run
  files, which are read as untrusted data and checked (:func:`load_run`).

The package, no JAX (this face only hands the names of its modules on):
:mod:`~memtab_env.study.grid` (the config and its cells), :mod:`~memtab_env.study.scores`,
:mod:`~memtab_env.study.runs` (run files), :mod:`~memtab_env.study.tables` (the
leaderboard section) and :mod:`~memtab_env.study.figures` (learning curves);
:mod:`memtab_env.study.run` trains.
"""

from __future__ import annotations

from memtab_env.study.grid import (
    CELL_FIELDS,
    MAX_FILE_BYTES,
    SCORES,
    Study,
    StudyError,
    StudyTrack,
    load_study,
    study_from_dict,
)
from memtab_env.study.runs import COMMITTED_STUDIES, RUN_FORMAT, collect_runs, load_run, policy_path, run_path
from memtab_env.study.scores import benchmark_anchors, normalised_turns, solo_turns_bounds
from memtab_env.study.tables import aggregate, leaderboard_section

__all__ = [
    "CELL_FIELDS",
    "COMMITTED_STUDIES",
    "MAX_FILE_BYTES",
    "RUN_FORMAT",
    "SCORES",
    "Study",
    "StudyError",
    "StudyTrack",
    "aggregate",
    "benchmark_anchors",
    "collect_runs",
    "leaderboard_section",
    "load_run",
    "load_study",
    "normalised_turns",
    "policy_path",
    "run_path",
    "solo_turns_bounds",
    "study_from_dict",
]
