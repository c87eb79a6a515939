"""Train a policy for a memtab-env game with Stable-Baselines3, then evaluate it.

    python train.py --config configs/quick.yaml
    python train.py --config configs/quick.yaml --total_timesteps 50_000 --set seed=3
    python train.py --resume runs/<run_name>            # or just --resume: the latest run
    python train.py --evaluate agents/policies/ppo_memtab.zip --eval_games 2000

The file reads top to bottom (cleanrl style): the typed :class:`Config` (one docstring per
field; ``python train.py --help`` prints them), loading the YAML file (keyed by env id,
rl-baselines3-zoo style), CLI overrides, seeding in one block, the environments and
opponents (a fixed mix of built-in agents, optionally with a self-play pool of frozen
snapshots), the model, learning with callbacks (progress bar, TensorBoard statistics,
checkpoints, self-play snapshots), saving and the final evaluation.

Outputs go to ``runs/<run_name>/`` where the run name carries env id, experiment name,
algorithm, seed and start time: ``model.zip``, ``config.yaml`` (the exact config, with the
command line), ``eval.json``, ``tensorboard/``, ``checkpoints/`` and, for self-play,
``pool/`` (the frozen snapshots).

Illegal actions: ``maskable_ppo`` never sends one (it samples from the action mask). The
other algorithms see no mask while learning: an illegal action gets the env's penalty
(``illegal_penalty``), leaves the game unchanged and is counted (``rollout/illegal_rate``
in TensorBoard). At evaluation every policy plays through the bare AEC env, where an
illegal action would raise, so the loader agent restricts its choice to the legal flips
(see ``docs/training.md``).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime as dt
import difflib
import inspect
import json
import math
import os
import shlex
import sys
import time
import types
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import gymnasium
import numpy as np
import yaml
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

import memtab_env

ALGOS = ("maskable_ppo", "ppo", "recurrent_ppo", "dqn")
POLICIES = ("mlp", "set")
VEC_ENVS = ("dummy", "subproc", "batched")
ACTIVATIONS = ("tanh", "relu")
LR_SCHEDULES = ("constant", "linear")
#: the opponent name that stands for the self-play pool of frozen snapshots
SELF = "self"
#: the env id read from a config file that holds several, unless --env says otherwise
DEFAULT_ENV_ID = "MemTab-v0"
EVAL_SCHEMA = "memtab-eval/1"


class ConfigError(ValueError):
    """A config file or override that does not fit :class:`Config`."""


# ---------------------------------------------------------------------------------------
# 1. Config
# ---------------------------------------------------------------------------------------
@dataclass
class Config:
    """Everything a training run depends on. YAML files and CLI overrides fill it; an
    unknown key or a value of the wrong type is an error."""

    # -- experiment --------------------------------------------------------------------
    env_id: str = "MemTab-v0"
    """Gymnasium id of the game; the YAML files are keyed by it."""
    exp_name: str = ""
    """Name used in the run name; empty: the config file's stem."""
    seed: int = 0
    """Seed of Python, NumPy, PyTorch and the training envs (env i gets seed + i)."""
    total_timesteps: int = 500_000
    """Learner steps to train for in total (a resumed run continues up to this count)."""
    algo: str = "maskable_ppo"
    """One of maskable_ppo (sb3-contrib, uses the action mask), ppo, recurrent_ppo
    (sb3-contrib, LSTM) and dqn."""
    policy: str = "mlp"
    """Network: mlp (SB3's MLP on the flat observation) or set (the position-equivariant
    network of agents/set_policy.py; maskable_ppo and ppo; with recurrent_ppo it is the
    features extractor in front of the LSTM, agents.set_policy.SetFeatures)."""
    device: str = "cpu"
    """PyTorch device."""
    torch_threads: int = 1
    """PyTorch CPU threads (small networks: 1 is fastest)."""

    # -- environment -------------------------------------------------------------------
    num_players: int = 2
    """Players per game (the learner plus num_players - 1 opponents)."""
    memory: str = "perfect"
    """Memory model of the observations: perfect, none, decay:p or window:k."""
    reward: str = "win"
    """Env reward scheme: win (terminal +1 / -1 shared) or score (score changes)."""
    illegal_penalty: float = -0.1
    """Reward of an illegal action (the game does not move; unmasked algorithms only)."""
    env_options: dict[str, Any] = field(default_factory=dict)
    """Further options of the game, passed to the env as they are (training and
    evaluation): e.g. {deck: "pairs:8"} for Pelmanism-v0, {variant: children} or {board:
    path} for MemoryBoard-v0. An option the game does not know is an error."""
    learner_seat: int | str = "random"
    """The learner's seat in training games: an integer or random (drawn every game)."""
    opponents: dict[str, float] = field(default_factory=lambda: {"greedy": 1.0})
    """Opponent mix: agent name -> weight. Every game, each opponent seat draws one agent
    with these weights. Names are those of agents.make, plus self: a frozen snapshot drawn
    uniformly from the self-play pool."""
    n_envs: int = 8
    """Number of parallel training envs."""
    vec_env: str = "dummy"
    """dummy (one process), subproc (SubprocVecEnv, one process per env) or batched
    (MemTab and Pelmanism: the numba engines of memtab_env.vector step the random and greedy games;
    the rest of the mix runs in scalar envs in the same process)."""

    # -- self-play ---------------------------------------------------------------------
    snapshot_every: int = 50_000
    """Steps between two frozen snapshots added to the self-play pool (used when the
    opponent mix names self)."""
    pool_size: int = 10
    """Number of most recent snapshots that self opponents are drawn from."""
    pool_deterministic: bool = False
    """Whether snapshot opponents play their most likely flip instead of sampling."""

    # -- network -----------------------------------------------------------------------
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layers of the mlp policy (actor and critic each; the Q-network for dqn)."""
    activation: str = "tanh"
    """Activation of the mlp policy: tanh or relu."""
    set_dim: int = 64
    """Token width of the set policy."""
    set_layers: int = 3
    """Residual layers of the set policy."""
    lstm_hidden_size: int = 128
    """LSTM width of recurrent_ppo."""
    slot_memory: int = 0
    """recurrent_ppo with policy set on MemTab and Pelmanism: memory values per position of
    a per-position recurrent memory (agents/recurrent_policy.py SlotMemoryPolicy: one
    small LSTM per position with shared weights, then the set network over what the
    observation shows and what is remembered there; needs obs_mask); 0: sb3-contrib's
    single LSTM of lstm_hidden_size after the set features."""
    obs_mask: bool = True
    """recurrent_ppo on MemTab and Pelmanism: restrict the LSTM policy to the flips the
    observation shows face down (agents/recurrent_policy.py), so it never sends an illegal
    one; false: sb3-contrib's plain MlpLstmPolicy, illegal flips penalised."""

    # -- optimisation (PPO family; learning_rate, gamma and batch_size also for dqn) ---
    learning_rate: float = 3.0e-4
    """Adam step size."""
    lr_schedule: str = "constant"
    """constant, or linear (decays to 0 at total_timesteps)."""
    n_steps: int = 128
    """Steps per env per rollout (PPO family)."""
    batch_size: int = 256
    """Minibatch size."""
    n_epochs: int = 4
    """Passes over each rollout (PPO family)."""
    gamma: float = 0.995
    """Discount factor (rewards are terminal: keep it close to 1)."""
    gae_lambda: float = 0.95
    """GAE lambda (PPO family)."""
    clip_range: float = 0.2
    """PPO clipping parameter."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient (PPO family)."""
    vf_coef: float = 0.5
    """Value loss coefficient (PPO family)."""
    max_grad_norm: float = 0.5
    """Gradient clipping norm."""
    target_kl: float | None = None
    """Stop an update's epochs early above this KL divergence (PPO family); null: never."""

    # -- DQN ---------------------------------------------------------------------------
    buffer_size: int = 100_000
    """Replay buffer size (dqn)."""
    learning_starts: int = 1_000
    """Steps before the first gradient step (dqn)."""
    train_freq: int = 4
    """Env steps (per env) between updates (dqn)."""
    gradient_steps: int = 1
    """Gradient steps per update (dqn)."""
    target_update_interval: int = 1_000
    """Steps between target network updates (dqn)."""
    exploration_fraction: float = 0.2
    """Fraction of training over which epsilon decays (dqn)."""
    exploration_final_eps: float = 0.05
    """Final epsilon (dqn)."""

    # -- logging and checkpoints -------------------------------------------------------
    runs_dir: str = "runs"
    """Directory that holds one folder per run."""
    checkpoint_every: int = 50_000
    """Steps between checkpoints (a crash loses at most this many steps)."""
    keep_checkpoints: int = 2
    """Number of most recent checkpoints kept on disk."""
    progress_bar: bool = True
    """Show a progress bar (tqdm + rich)."""
    tensorboard: bool = True
    """Write TensorBoard logs to runs/<run>/tensorboard."""
    verbose: int = 0
    """SB3 verbosity (0: quiet, 1: training tables)."""

    # -- evaluation --------------------------------------------------------------------
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    """Agents (names of agents.make) the final model is evaluated against."""
    eval_games: int = 200
    """Games per opponent: eval_games / num_players deals, each played once per seat."""
    eval_seed: int = 1_000_000
    """Seed of the first evaluation deal (deal i has seed eval_seed + i)."""
    eval_deterministic: bool = True
    """Evaluate the most likely flip (True) or sample from the policy (False)."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` for values that are out of range."""
        from memtab_env.memory import parse_memory
        from memtab_env.rewards import check_reward_scheme

        def choice(name: str, allowed: Sequence[str]) -> None:
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {list(allowed)}, got {getattr(self, name)!r}")

        if self.env_id not in gymnasium.registry:
            known = sorted(k for k in gymnasium.registry if k.split("-")[0] in _game_env_ids())
            raise ConfigError(f"env_id {self.env_id!r} is not registered; memtab-env ids: {known}")
        choice("algo", ALGOS)
        choice("policy", POLICIES)
        choice("vec_env", VEC_ENVS)
        choice("activation", ACTIVATIONS)
        choice("lr_schedule", LR_SCHEDULES)
        if self.algo == "recurrent_ppo" and self.obs_mask and self.game not in ("memtab", "pelmanism"):
            raise ConfigError(f"obs_mask works on MemTab-v0 and Pelmanism-v0, not {self.env_id}: "
                              "set obs_mask: false (illegal actions are then penalised)")
        if self.slot_memory < 0:
            raise ConfigError(f"slot_memory must be 0 (off) or a positive width, got {self.slot_memory}")
        if self.slot_memory and not (self.algo == "recurrent_ppo" and self.policy == "set" and self.obs_mask):
            raise ConfigError("slot_memory needs algo recurrent_ppo, policy set and obs_mask true "
                              f"(got algo {self.algo!r}, policy {self.policy!r}, obs_mask {self.obs_mask})")
        if self.policy == "set" and self.algo == "dqn":
            raise ConfigError("policy 'set' works with algo maskable_ppo, ppo or recurrent_ppo")
        try:
            parse_memory(self.memory)
            check_reward_scheme(self.reward)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if isinstance(self.learner_seat, str) and self.learner_seat != "random":
            raise ConfigError(f"learner_seat must be an integer seat or 'random', got {self.learner_seat!r}")
        for name in ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games",
                     "checkpoint_every", "snapshot_every", "pool_size", "num_players", "torch_threads",
                     "set_dim", "set_layers", "lstm_hidden_size", "buffer_size", "train_freq",
                     "gradient_steps", "target_update_interval", "keep_checkpoints"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.opponents or any(w < 0 for w in self.opponents.values()) \
                or sum(self.opponents.values()) <= 0:
            raise ConfigError(f"opponents needs at least one positive weight, got {self.opponents}")
        from memtab_env import agents

        for name in [*self.opponents, *self.eval_opponents]:
            if name != SELF and name not in agents.available(self.game) and not name.endswith(".zip"):
                raise ConfigError(
                    f"unknown agent {name!r} for {self.game}; available: {agents.available(self.game)} "
                    f"(or {SELF!r} in opponents for the self-play pool, or a .zip model)"
                )
        if SELF in self.eval_opponents:
            raise ConfigError(f"{SELF!r} is a training opponent only")
        from memtab_env.benchmark.tracks import is_reserved_seed

        if is_reserved_seed(self.seed) or is_reserved_seed(self.seed + self.n_envs - 1):
            raise ConfigError(
                f"seed {self.seed}: training envs would use seeds reserved for the benchmark's "
                "evaluation deals [1000000000, 1001000000) (BENCHMARK.md); choose another seed"
            )
        if self.vec_env == "batched" and self.game not in BATCHED_GAMES:
            raise ConfigError(f"vec_env 'batched' plays {sorted(BATCHED_GAMES)}, not {self.env_id}")
        from memtab_env.play import make_raw_env

        try:  # the game checks its own options (names and values) and says what is allowed
            make_raw_env(self.game, num_players=self.num_players, **self.env_options).close()
        except (TypeError, ValueError) as e:
            raise ConfigError(f"env_options {self.env_options}: {e}") from None
        if self.eval_games % self.num_players:
            raise ConfigError(f"eval_games ({self.eval_games}) must be a multiple of num_players "
                              f"({self.num_players}): every deal is played once per seat")

    @property
    def game(self) -> str:
        """The game's short name (``memtab``) for ``agents.make``."""
        from memtab_env.registry import game_spec

        return game_spec(self.env_id).name

    @property
    def selfplay(self) -> bool:
        return self.opponents.get(SELF, 0.0) > 0


def _game_env_ids() -> set[str]:
    from memtab_env.registry import GAMES

    return {spec.env_id.split("-")[0] for spec in GAMES.values()}


def field_docs() -> dict[str, str]:
    """The docstring under each :class:`Config` field (for ``--help`` and the docs)."""
    tree = ast.parse(inspect.getsource(Config))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


# ---------------------------------------------------------------------------------------
# 2. Loading YAML and applying overrides
# ---------------------------------------------------------------------------------------
def _coerce(name: str, value: Any, tp: Any, from_cli: bool) -> Any:
    """``value`` checked against the annotation ``tp`` (ints are accepted as floats)."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        errors = []
        for member in get_args(tp):
            if member is type(None):
                if value is None:
                    return None
                continue
            try:
                return _coerce(name, value, member, from_cli)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(f"{name}: {value!r} fits none of {tp}")
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{name} must be a list, got {value!r}")
        (item,) = get_args(tp)
        return [_coerce(f"{name}[{i}]", v, item, from_cli) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{name} must be a mapping, got {value!r}")
        kt, vt = get_args(tp)
        return {_coerce(f"{name} key", k, kt, from_cli): _coerce(f"{name}[{k}]", v, vt, from_cli)
                for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            if from_cli:
                try:
                    return float(value)
                except ValueError:
                    pass
            else:
                raise ConfigError(
                    f"{name} must be a number, got the string {value!r} "
                    "(PyYAML reads 1e-4 as a string: write 1.0e-4)"
                )
    elif tp is str:
        if isinstance(value, str):
            return value
    elif tp is Any:
        return value
    else:  # pragma: no cover - every annotation of Config is handled above
        raise ConfigError(f"{name}: unsupported annotation {tp}")
    raise ConfigError(f"{name} must be of type {tp.__name__}, got {value!r} ({type(value).__name__})")


def _check_keys(keys: Sequence[str], where: str) -> None:
    names = [f.name for f in dataclasses.fields(Config)]
    for key in keys:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {names}"
            raise ConfigError(f"unknown config key {key!r} in {where}{hint}")


def config_from_dict(values: dict[str, Any], base: Config | None = None, where: str = "config",
                     from_cli: bool = False) -> Config:
    """A new :class:`Config`: ``base`` (or the defaults) updated with ``values``, each
    checked against its field's type."""
    _check_keys(list(values), where)
    hints = get_type_hints(Config)
    cfg = dataclasses.replace(base) if base is not None else Config()
    for key, value in values.items():
        setattr(cfg, key, _coerce(key, value, hints[key], from_cli))
    return cfg


def load_yaml(path: str | Path, env_id: str | None = None) -> Config:
    """The config of ``env_id`` in the YAML file ``path``.

    The file maps env ids to field values; keys that start with ``_`` hold shared anchors
    and are skipped. Without ``env_id``: the file's only env id, else ``MemTab-v0``.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} not found") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of env ids to settings")
    entries = {k: v for k, v in data.items() if not str(k).startswith("_")}
    if env_id is None:
        if len(entries) == 1:
            env_id = next(iter(entries))
        elif DEFAULT_ENV_ID in entries:
            env_id = DEFAULT_ENV_ID
        else:
            raise ConfigError(f"{path} holds several env ids {sorted(entries)}: choose one with --env")
    if env_id not in entries:
        raise ConfigError(f"{path} has no entry for {env_id!r}; it has {sorted(entries)}")
    values = entries[env_id] or {}
    if not isinstance(values, dict):
        raise ConfigError(f"{path} [{env_id}]: expected a mapping of settings")
    values = dict(values)
    if values.setdefault("env_id", env_id) != env_id:
        raise ConfigError(f"{path} [{env_id}]: env_id {values['env_id']!r} differs from its key")
    values.setdefault("exp_name", path.stem)
    return config_from_dict(values, where=f"{path} [{env_id}]")


def dump_yaml(cfg: Config, command: str) -> str:
    """``cfg`` as a YAML file keyed by its env id, with the command that made it."""
    body = {k: v for k, v in dataclasses.asdict(cfg).items() if k != "env_id"}
    text = yaml.safe_dump({cfg.env_id: body}, sort_keys=False, default_flow_style=None)
    return f"# {command}\n{text}"


def build_parser() -> argparse.ArgumentParser:
    """``--config``, ``--env``, ``--set KEY=VALUE``, ``--resume``, ``--evaluate`` and one
    ``--<field> VALUE`` option per :class:`Config` field (values are read as YAML)."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        allow_abbrev=False,  # a misspelt option must fail, not match a prefix
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="YAML file keyed by env id (configs/*.yaml)")
    parser.add_argument("--env", help="env id to read from the config file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a field (repeatable); VALUE is read as YAML")
    parser.add_argument("--resume", nargs="?", const="latest", metavar="RUN_DIR",
                        help="continue a run from its last checkpoint (default: the latest run)")
    parser.add_argument("--evaluate", metavar="MODEL_ZIP",
                        help="only evaluate a saved model (config from its folder or --config)")
    parser.add_argument("--eval-out", help="with --evaluate: where to write the JSON")
    group = parser.add_argument_group("config fields (each overrides the file)")
    docs = field_docs()
    for f in dataclasses.fields(Config):
        group.add_argument(f"--{f.name}", dest=f"field_{f.name}", metavar="VALUE",
                           help=docs.get(f.name, ""))
    return parser


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Field overrides from ``--set KEY=VALUE`` and ``--<field> VALUE`` (YAML values)."""
    out: dict[str, Any] = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(raw)
    for f in dataclasses.fields(Config):
        raw = getattr(args, f"field_{f.name}")
        if raw is not None:
            out[f.name] = yaml.safe_load(raw)
    _check_keys(list(out), "the command line")
    return out


# ---------------------------------------------------------------------------------------
# 3. Agents that play a saved policy, opponents and the self-play pool
# ---------------------------------------------------------------------------------------
#: train.py's algorithm names -> the names of the SB3 loader (agents.sb3_policy)
LOADER_ALGOS = {"maskable_ppo": "MaskablePPO", "ppo": "PPO", "recurrent_ppo": "RecurrentPPO", "dqn": "DQN"}


def policy_agent(path: str | Path, algo: str, deterministic: bool = True) -> Any:
    """An agent (``reset``/``act`` on AEC observations) that plays the saved model
    ``path`` with the project's SB3 loader, :class:`memtab_env.agents.sb3_policy.SB3Agent`. The
    loader restricts the policy to the legal flips (the bare AEC env raises on an illegal
    one) and counts how often its unrestricted choice would have been illegal."""
    from memtab_env.agents.sb3_policy import SB3Agent

    return SB3Agent(path, algo=LOADER_ALGOS[algo], deterministic=deterministic)


#: snapshot agents loaded in this process, shared by every opponent seat (stateless
#: policies only: a recurrent agent carries its LSTM state and is loaded per seat)
_SNAPSHOTS: dict[str, Any] = {}


class OpponentMix:
    """One opponent seat: at every reset it draws an agent from a weighted mix of
    built-in agents and (name ``self``) the frozen snapshots of the self-play pool."""

    def __init__(self, weights: dict[str, float], game: str, algo: str, pool_size: int,
                 deterministic: bool) -> None:
        from memtab_env import agents

        self.names = list(weights)
        total = float(sum(weights.values()))
        self.probs = np.array([weights[n] / total for n in self.names])
        self.builtin = {n: agents.make(n, game=game) for n in self.names if n != SELF}
        self.algo, self.pool_size, self.deterministic = algo, pool_size, deterministic
        self.pool: list[str] = []
        self._loaded: dict[str, Any] = {}
        self.rng = np.random.default_rng()
        self.current: Any = None
        self.name = "mix(" + ", ".join(f"{n}:{w:g}" for n, w in weights.items()) + ")"

    def set_pool(self, paths: Sequence[str]) -> None:
        """Use the last ``pool_size`` of ``paths`` (snapshot zips) as the self-play pool."""
        self.pool = list(paths)[-self.pool_size :]
        self._loaded = {p: a for p, a in self._loaded.items() if p in self.pool}
        for p in [p for p in _SNAPSHOTS if p not in self.pool]:
            del _SNAPSHOTS[p]

    def _snapshot(self) -> Any:
        if not self.pool:
            raise RuntimeError("the self-play pool is empty (no snapshot was set)")
        path = self.pool[int(self.rng.integers(len(self.pool)))]
        cache = self._loaded if self.algo == "recurrent_ppo" else _SNAPSHOTS
        if path not in cache:
            cache[path] = policy_agent(path, self.algo, self.deterministic)
        return cache[path]

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        name = self.names[int(self.rng.choice(len(self.names), p=self.probs))]
        self.current = self._snapshot() if name == SELF else self.builtin[name]
        self.current.reset(seed=int(self.rng.integers(2**31)))

    def act(self, observation: Any) -> int:
        return int(self.current.act(observation))


def _set_pool_everywhere(env: Any, paths: Sequence[str]) -> None:
    for opponent in env.unwrapped.opponents:
        if isinstance(opponent, OpponentMix):
            opponent.set_pool(paths)


def make_env_fn(cfg: Config, monitor: bool = True) -> Callable[[], Any]:
    """A function that builds one training env (picklable for SubprocVecEnv); with
    ``monitor`` it is wrapped in SB3's ``Monitor`` (episode statistics)."""

    def _init() -> Any:
        from stable_baselines3.common.monitor import Monitor

        opponents = [
            OpponentMix(cfg.opponents, cfg.game, cfg.algo, cfg.pool_size, cfg.pool_deterministic)
            for _ in range(cfg.num_players - 1)
        ]
        env = gymnasium.make(
            cfg.env_id, opponents=opponents, learner_seat=cfg.learner_seat, memory=cfg.memory,
            reward=cfg.reward, num_players=cfg.num_players, illegal_penalty=cfg.illegal_penalty,
            obs_mode="flat", illegal_action="penalty", **cfg.env_options,
        )
        env = SelfPlayPool(env)
        return Monitor(env) if monitor else env

    return _init


class SelfPlayPool(gymnasium.Wrapper):
    """Wrapper that lets a vector env update the opponents' self-play pool
    (``vec_env.env_method("set_pool", paths)``, also across processes)."""

    def set_pool(self, paths: Sequence[str]) -> None:
        _set_pool_everywhere(self.env, paths)


def make_vec_env(cfg: Config, seed: int) -> VecEnv:
    """The training vector env (``n_envs`` games; game i is seeded with ``seed + i``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if cfg.vec_env == "batched":
        return batched_vec_env(cfg, seed)
    fns = [make_env_fn(cfg) for _ in range(cfg.n_envs)]
    venv = SubprocVecEnv(fns) if cfg.vec_env == "subproc" else DummyVecEnv(fns)
    venv.seed(seed)
    return venv


def split_counts(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders get the rest)."""
    w = np.asarray(weights, dtype=float) / float(np.sum(weights))
    exact = w * total
    counts = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - counts), kind="stable")[: total - int(counts.sum())]:
        counts[i] += 1
    return counts.tolist()


#: opponents that the batched engines step inside their compiled kernels
BATCHED_OPPONENTS = ("random", "greedy")
#: game -> its batched SB3 VecEnv (memtab_env.vector.sb3)
BATCHED_GAMES = {"memtab": "MemTabSB3VecEnv", "pelmanism": "PelmanismSB3VecEnv"}


def batched_vec_env(cfg: Config, seed: int) -> VecEnv:
    """The numba-batched engine (:mod:`memtab_env.vector.sb3`) as an SB3 VecEnv.

    Its opponents are compiled into the batch, so it has ``random`` and ``greedy`` only,
    and all games of one batch share their opponents. The ``n_envs`` games are therefore
    split in proportion to the opponent weights: one batch per built-in opponent, and
    one in-process group of scalar envs (as ``dummy``) for the rest of the mix (e.g.
    ``expert`` and ``self``, drawn per game with their relative weights). The scalar
    envs draw the opponent per game instead.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from memtab_env.vector import sb3

    if cfg.game not in BATCHED_GAMES:
        raise ConfigError(f"vec_env 'batched' plays {sorted(BATCHED_GAMES)}, not {cfg.env_id}")
    batched_cls = getattr(sb3, BATCHED_GAMES[cfg.game])
    active = {n: w for n, w in cfg.opponents.items() if w > 0}
    groups: list[tuple[str, float]] = [(n, w) for n, w in active.items() if n in BATCHED_OPPONENTS]
    rest = {n: w for n, w in active.items() if n not in BATCHED_OPPONENTS}
    if rest:
        groups.append(("scalar", sum(rest.values())))
    counts = split_counts(cfg.n_envs, [w for _, w in groups])
    parts: list[VecEnv] = []
    offset = 0
    for (name, _), count in zip(groups, counts, strict=True):
        if count == 0:
            continue
        if name == "scalar":
            scalar_cfg = dataclasses.replace(cfg, opponents=rest)
            part: VecEnv = DummyVecEnv([make_env_fn(scalar_cfg, monitor=False) for _ in range(count)])
            part.seed(seed + offset)
        else:
            part = batched_cls(
                num_envs=count, seed=seed + offset, opponents=name, learner_seat=cfg.learner_seat,
                memory=cfg.memory, reward=cfg.reward, num_players=cfg.num_players,
                illegal_penalty=cfg.illegal_penalty,
                max_episode_steps=memtab_env.game_spec(cfg.env_id).max_episode_steps,
                **cfg.env_options,
            )
        parts.append(part)
        offset += count
    return VecMonitor(parts[0] if len(parts) == 1 else ConcatVecEnv(parts))


class ConcatVecEnv(VecEnv):
    """Several VecEnvs with the same spaces side by side as one (games in order)."""

    def __init__(self, parts: Sequence[VecEnv]) -> None:
        self.parts = list(parts)
        self.bounds = np.cumsum([0] + [p.num_envs for p in self.parts])
        first = self.parts[0]
        super().__init__(int(self.bounds[-1]), first.observation_space, first.action_space)

    def _split(self, values: np.ndarray) -> list[np.ndarray]:
        return [values[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]

    def reset(self) -> np.ndarray:
        obs = [p.reset() for p in self.parts]
        self.reset_infos = [info for p in self.parts for info in p.reset_infos]
        return np.concatenate(obs)

    def step_async(self, actions: np.ndarray) -> None:
        for part, acts in zip(self.parts, self._split(np.asarray(actions)), strict=True):
            part.step_async(acts)

    def step_wait(self) -> Any:
        results = [p.step_wait() for p in self.parts]
        obs, rewards, dones, infos = zip(*results, strict=True)
        return (np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones),
                [info for part in infos for info in part])

    def close(self) -> None:
        for p in self.parts:
            p.close()

    def seed(self, seed: int | None = None) -> list[int | None]:  # type: ignore[override]
        out: list[int | None] = []
        for part, start in zip(self.parts, self.bounds[:-1], strict=True):
            out.extend(part.seed(None if seed is None else seed + int(start)))
        return out

    def action_masks(self) -> np.ndarray:
        return np.concatenate([np.asarray(p.env_method("action_masks")) for p in self.parts])

    def _locate(self, indices: Any) -> list[tuple[VecEnv, int]]:
        idx = range(self.num_envs) if indices is None else (
            [indices] if isinstance(indices, (int, np.integer)) else indices)
        out = []
        for i in idx:
            k = int(np.searchsorted(self.bounds, i, side="right")) - 1
            out.append((self.parts[k], int(i - self.bounds[k])))
        return out

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return list(masks) if indices is None else [masks[i] for i in np.atleast_1d(indices)]
        if indices is None:  # broadcast to the parts that have the method
            out: list[Any] = []
            for part in self.parts:
                if part.has_attr(method_name):
                    out.extend(part.env_method(method_name, *method_args, **method_kwargs))
            return out
        return [part.env_method(method_name, *method_args, indices=i, **method_kwargs)[0]
                for part, i in self._locate(indices)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [part.get_attr(attr_name, indices=i)[0] for part, i in self._locate(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        for part, i in self._locate(indices):
            part.set_attr(attr_name, value, indices=i)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [part.env_is_wrapped(wrapper_class, indices=i)[0] for part, i in self._locate(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


# ---------------------------------------------------------------------------------------
# 4. Model
# ---------------------------------------------------------------------------------------
def algo_class(algo: str) -> Any:
    """The Stable-Baselines3 / sb3-contrib class of ``algo``."""
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "recurrent_ppo":
        from sb3_contrib import RecurrentPPO

        return RecurrentPPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    from stable_baselines3 import DQN

    return DQN


def make_model(cfg: Config, env: Any, tensorboard_dir: str | None) -> Any:
    """A new model of ``cfg.algo`` on ``env``."""
    from torch import nn

    lr: Any = cfg.learning_rate
    if cfg.lr_schedule == "linear":
        from stable_baselines3.common.utils import LinearSchedule

        lr = LinearSchedule(cfg.learning_rate, 0.0, 1.0)
    activation = {"tanh": nn.Tanh, "relu": nn.ReLU}[cfg.activation]
    common = dict(learning_rate=lr, gamma=cfg.gamma, batch_size=cfg.batch_size, seed=cfg.seed,
                  device=cfg.device, verbose=cfg.verbose, tensorboard_log=tensorboard_dir,
                  max_grad_norm=cfg.max_grad_norm)
    if cfg.algo == "dqn":
        return algo_class("dqn")(
            "MlpPolicy", env, buffer_size=cfg.buffer_size, learning_starts=cfg.learning_starts,
            train_freq=cfg.train_freq, gradient_steps=cfg.gradient_steps,
            target_update_interval=cfg.target_update_interval,
            exploration_fraction=cfg.exploration_fraction,
            exploration_final_eps=cfg.exploration_final_eps,
            policy_kwargs=dict(net_arch=list(cfg.net_arch), activation_fn=activation), **common,
        )
    ppo = dict(n_steps=cfg.n_steps, n_epochs=cfg.n_epochs, gae_lambda=cfg.gae_lambda,
               clip_range=cfg.clip_range, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
               target_kl=cfg.target_kl, **common)
    layout: dict[str, Any] | None = None
    if cfg.policy == "set" and cfg.game != "memtab":  # MemTab's follows from the obs length
        from memtab_env.agents.set_policy import token_layout

        layout = token_layout(cfg.game, num_players=cfg.num_players, **cfg.env_options)
    if cfg.algo == "recurrent_ppo":
        policy: Any = "MlpLstmPolicy"
        kwargs: dict[str, Any] = dict(net_arch=list(cfg.net_arch), activation_fn=activation,
                                      lstm_hidden_size=cfg.lstm_hidden_size)
        if cfg.obs_mask:
            from memtab_env.agents.recurrent_policy import ObsMaskedLstmPolicy, legal_status

            policy = ObsMaskedLstmPolicy
            kwargs["legal_status"] = legal_status(cfg.game, num_players=cfg.num_players, **cfg.env_options)
        if cfg.slot_memory:
            from memtab_env.agents.recurrent_policy import SlotMemoryPolicy
            from memtab_env.agents.set_policy import token_layout

            policy = SlotMemoryPolicy
            kwargs = dict(legal_status=kwargs["legal_status"], slot_size=cfg.slot_memory,
                          set_dim=cfg.set_dim, set_layers=cfg.set_layers,
                          layout=layout or token_layout(cfg.game, num_players=cfg.num_players))
        elif cfg.policy == "set":
            from memtab_env.agents.set_policy import SetFeatures

            kwargs.update(features_extractor_class=SetFeatures, features_extractor_kwargs=dict(
                dim=cfg.set_dim, layers=cfg.set_layers, layout=layout))
            if cfg.obs_mask:  # the set scores also reach the logits directly
                kwargs["action_skip"] = True
    elif cfg.policy == "set":
        from memtab_env.agents.set_policy import MaskableMemTabSetPolicy, MemTabSetPolicy

        policy = MaskableMemTabSetPolicy if cfg.algo == "maskable_ppo" else MemTabSetPolicy
        kwargs = dict(set_dim=cfg.set_dim, set_layers=cfg.set_layers)
        if layout is not None:
            kwargs["set_layout"] = layout
    else:
        policy = "MlpPolicy"
        kwargs = dict(net_arch=list(cfg.net_arch), activation_fn=activation)
    return algo_class(cfg.algo)(policy, env, policy_kwargs=kwargs, **ppo)


# ---------------------------------------------------------------------------------------
# 5. Callbacks: statistics, checkpoints, self-play snapshots
# ---------------------------------------------------------------------------------------
class GameStats(BaseCallback):
    """Logs the learner's win rate (shared wins count 1/k) and illegal actions."""

    def __init__(self, num_players: int, reward: str, window: int = 200) -> None:
        super().__init__()
        self.num_players, self.reward = num_players, reward
        self.wins: deque[float] = deque(maxlen=window)
        self.illegal_steps = 0
        self.steps = 0
        self.illegal_total = 0

    def _share(self, info: dict[str, Any], reward: float) -> float | None:
        if info.get("TimeLimit.truncated"):
            return 0.0
        winners = info.get("winners")
        if winners is not None:
            return 1.0 / len(winners) if info["learner_seat"] in winners else 0.0
        if self.reward == "win":  # winners share +1, losers -1: the reward gives the share
            return reward if reward > 0 else (1.0 / self.num_players if reward == 0 else 0.0)
        return None

    def _on_step(self) -> bool:
        infos, dones, rewards = self.locals["infos"], self.locals["dones"], self.locals["rewards"]
        for info, done, reward in zip(infos, dones, rewards, strict=True):
            self.steps += 1
            if info.get("illegal_action"):
                self.illegal_steps += 1
                self.illegal_total += 1
            if done:
                share = self._share(info, float(reward))
                if share is not None:
                    self.wins.append(share)
        return True

    def _on_rollout_end(self) -> None:
        if self.wins:
            self.logger.record("rollout/win_rate", float(np.mean(self.wins)))
        if self.steps:
            self.logger.record("rollout/illegal_rate", self.illegal_steps / self.steps)
        self.logger.record("rollout/illegal_total", self.illegal_total)
        self.steps = self.illegal_steps = 0


class Checkpoints(BaseCallback):
    """Saves ``checkpoints/step_<N>.zip`` every ``every`` steps (plus the replay buffer for
    DQN), then ``checkpoints/latest.json``; keeps the ``keep`` most recent."""

    def __init__(self, directory: Path, every: int, keep: int, pool_dir: Path | None) -> None:
        super().__init__()
        self.directory, self.every, self.keep, self.pool_dir = directory, every, keep, pool_dir
        self.next = every

    def _on_training_start(self) -> None:
        self.next = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.save()
            self.next = (self.num_timesteps // self.every + 1) * self.every
        return True

    def save(self) -> Path:
        """Write a checkpoint at the current step count now."""
        self.directory.mkdir(parents=True, exist_ok=True)
        step = self.model.num_timesteps
        path = self.directory / f"step_{step:012d}.zip"
        _atomic_save(self.model, path)
        replay = None
        if hasattr(self.model, "replay_buffer") and self.model.replay_buffer is not None:
            replay = self.directory / f"replay_buffer_{step:012d}.pkl"
            tmp = replay.with_suffix(".tmp")
            self.model.save_replay_buffer(tmp)
            os.replace(tmp, replay)
        latest = {"step": step, "model": path.name, "replay_buffer": replay.name if replay else None,
                  "pool": [p.name for p in _pool_paths(self.pool_dir)] if self.pool_dir else []}
        tmp = self.directory / "latest.json.tmp"
        tmp.write_text(json.dumps(latest, indent=2))
        os.replace(tmp, self.directory / "latest.json")
        for old in sorted(self.directory.glob("step_*.zip"))[: -self.keep]:
            old.unlink()
        for old in sorted(self.directory.glob("replay_buffer_*.pkl"))[: -self.keep]:
            old.unlink()
        return path


class SelfPlay(BaseCallback):
    """Adds a frozen snapshot of the learner to ``pool/`` every ``every`` steps and hands
    the pool to every env's opponents (call :meth:`prepare` before learning: the envs
    are reset before callbacks start, and their opponents need a pool by then)."""

    def __init__(self, pool_dir: Path, every: int) -> None:
        super().__init__()
        self.pool_dir, self.every = pool_dir, every
        self.next = every

    def prepare(self, model: Any, env: VecEnv) -> None:
        """Snapshot ``model`` if the pool is empty, and give the pool to ``env``."""
        self.pool_dir.mkdir(parents=True, exist_ok=True)
        if not _pool_paths(self.pool_dir):
            _atomic_save(model, self.pool_dir / f"snapshot_{model.num_timesteps:012d}.zip")
        env.env_method("set_pool", [str(p) for p in _pool_paths(self.pool_dir)])

    def _on_training_start(self) -> None:
        self.next = (self.num_timesteps // self.every + 1) * self.every
        self.logger.record("selfplay/pool_size", len(_pool_paths(self.pool_dir)))

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            _atomic_save(self.model, self.pool_dir / f"snapshot_{self.num_timesteps:012d}.zip")
            paths = [str(p) for p in _pool_paths(self.pool_dir)]
            self.training_env.env_method("set_pool", paths)
            self.logger.record("selfplay/pool_size", len(paths))
            self.next = (self.num_timesteps // self.every + 1) * self.every
        return True


def _pool_paths(pool_dir: Path | None) -> list[Path]:
    return sorted(pool_dir.glob("snapshot_*.zip")) if pool_dir and pool_dir.exists() else []


def _atomic_save(model: Any, path: Path) -> None:
    tmp = path.with_name(path.stem + ".tmp.zip")
    model.save(tmp)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------
# 6. Evaluation
# ---------------------------------------------------------------------------------------
def wilson(mean: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate ``mean`` over ``n`` games."""
    if n == 0:
        return (0.0, 1.0)
    denom = 1 + z * z / n
    centre = (mean + z * z / (2 * n)) / denom
    half = z * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def evaluate(model_path: str | Path, cfg: Config, opponents: Sequence[str] | None = None,
             games: int | None = None) -> dict[str, Any]:
    """Play the saved model against each opponent through the bare AEC env: deals
    ``eval_seed .. eval_seed + games / n - 1``, each played once with the learner in every
    seat (the opponents, one fresh agent per seat, fill the others). Returns the results
    (the ``eval.json`` schema of docs/training.md)."""
    from memtab_env import agents
    from memtab_env.play import make_raw_env, play_game, win_shares

    opponents = list(opponents if opponents is not None else cfg.eval_opponents)
    games = games if games is not None else cfg.eval_games
    n = cfg.num_players
    deals = games // n
    seeds = [cfg.eval_seed + i for i in range(deals)]
    env = make_raw_env(cfg.game, memory=cfg.memory, reward=cfg.reward, num_players=n, **cfg.env_options)
    learner = policy_agent(model_path, cfg.algo, cfg.eval_deterministic)
    results: dict[str, Any] = {}
    for name in opponents:
        others = [agents.make(name, game=cfg.game) for _ in range(n - 1)]
        shares: list[float] = []
        diffs: list[float] = []
        by_seat: list[list[float]] = [[] for _ in range(n)]
        illegal_before = learner.illegal_choices
        t0 = time.perf_counter()
        for seed in seeds:
            for seat in range(n):
                seats = [*others[:seat], learner, *others[seat:]]
                record = play_game(env, seats, seed=seed)
                share = win_shares(record)[seat]
                scores = record["result"]["scores"]
                shares.append(share)
                by_seat[seat].append(share)
                diffs.append(scores[seat] - float(np.mean([s for i, s in enumerate(scores) if i != seat])))
        rate = float(np.mean(shares))
        lo, hi = wilson(rate, len(shares))
        results[name] = {
            "games": len(shares),
            "win_rate": rate,
            "ci95": [lo, hi],
            "mean_score_diff": float(np.mean(diffs)),
            "wins": int(sum(s == 1.0 for s in shares)),
            "shared": int(sum(0.0 < s < 1.0 for s in shares)),
            "losses": int(sum(s == 0.0 for s in shares)),
            "win_rate_by_seat": [float(np.mean(s)) for s in by_seat],
            "illegal_choices": int(learner.illegal_choices - illegal_before),
            "seconds": round(time.perf_counter() - t0, 2),
        }
    return {
        "schema": EVAL_SCHEMA,
        "env_id": cfg.env_id,
        "package_version": memtab_env.__version__,
        "model": Path(model_path).name,
        "algo": cfg.algo,
        "protocol": {
            "num_players": n,
            "memory": cfg.memory,
            "deals": deals,
            "seats_rotated": True,
            "deterministic": cfg.eval_deterministic,
            "seeds": seeds,
            "win_rate": "mean share of the win: 1/k for each of k winners, 0 for a loss",
            "ci95": "Wilson score interval over games",
        },
        "config": dataclasses.asdict(cfg),
        "results": results,
    }


def print_table(report: dict[str, Any], title: str) -> None:
    """The evaluation as a table on the terminal."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("opponent", "games", "win rate", "95% CI", "score diff", "W / shared / L"):
        table.add_column(col, justify="right" if col != "opponent" else "left")
    for name, r in report["results"].items():
        table.add_row(name, str(r["games"]), f"{r['win_rate']:.3f}",
                      f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]", f"{r['mean_score_diff']:+.2f}",
                      f"{r['wins']} / {r['shared']} / {r['losses']}")
    Console().print(table)


def eval_path(model_path: Path) -> Path:
    """Where the evaluation of ``model_path`` goes: ``eval.json`` next to ``model.zip``,
    ``<stem>_eval.json`` next to any other zip."""
    name = "eval.json" if model_path.name == "model.zip" else f"{model_path.stem}_eval.json"
    return model_path.with_name(name)


def write_eval(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2) + "\n")


# ---------------------------------------------------------------------------------------
# 7. Main
# ---------------------------------------------------------------------------------------
def seed_everything(seed: int, torch_threads: int) -> None:
    """Seed Python's, NumPy's and PyTorch's global generators (the envs and the model get
    their own seeds from the config)."""
    import torch
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(seed)  # random, numpy's global generator, torch
    torch.set_num_threads(torch_threads)


def run_name(cfg: Config) -> str:
    """``<env id>__<exp name>__<algo>__s<seed>__<YYYYmmdd-HHMMSS>``."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{cfg.env_id}__{cfg.exp_name or 'run'}__{cfg.algo}__s{cfg.seed}__{stamp}"


def find_resume_dir(arg: str, runs_dir: str) -> Path:
    """The run folder named by ``--resume`` (``latest``: the newest folder of ``runs_dir``
    that has a checkpoint)."""
    if arg != "latest":
        path = Path(arg)
        if not (path / "config.yaml").exists():
            raise ConfigError(f"--resume {arg}: no config.yaml there (not a run folder)")
        return path
    runs = [p for p in Path(runs_dir).glob("*") if (p / "checkpoints" / "latest.json").exists()]
    if not runs:
        raise ConfigError(f"--resume: no run with a checkpoint under {runs_dir}/")
    return max(runs, key=lambda p: (p / "checkpoints" / "latest.json").stat().st_mtime)


def main(argv: Sequence[str] | None = None) -> Path:
    """Train (or resume, or only evaluate) as the command line says; returns the run
    folder (the evaluation JSON's path with ``--evaluate``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    words = list(argv) if argv is not None else sys.argv[1:]
    command = "python train.py " + " ".join(shlex.quote(a) for a in words)
    overrides = cli_overrides(args)

    # -- config ------------------------------------------------------------------------
    resume_dir: Path | None = None
    if args.resume:
        if args.config:
            raise ConfigError("--resume reads the run's own config.yaml; do not pass --config")
        runs_dir = overrides.get("runs_dir", Config.runs_dir)
        resume_dir = find_resume_dir(args.resume, runs_dir)
        cfg = load_yaml(resume_dir / "config.yaml")
    elif args.config:
        cfg = load_yaml(args.config, args.env)
    elif args.evaluate and (Path(args.evaluate).parent / "config.yaml").exists():
        cfg = load_yaml(Path(args.evaluate).parent / "config.yaml")
    elif args.evaluate and Path(args.evaluate).with_suffix(".yaml").exists():
        cfg = load_yaml(Path(args.evaluate).with_suffix(".yaml"))
    else:
        raise ConfigError("give --config FILE (or --resume RUN_DIR, or --evaluate MODEL_ZIP)")
    cfg = config_from_dict(overrides, base=cfg, where="the command line", from_cli=True)
    cfg.validate()

    if args.evaluate:
        seed_everything(cfg.seed, cfg.torch_threads)
        model_path = Path(args.evaluate)
        report = evaluate(model_path, cfg)
        out = Path(args.eval_out) if args.eval_out else eval_path(model_path)
        write_eval(report, out)
        print_table(report, f"{model_path} ({cfg.env_id}, {cfg.memory} memory)")
        print(f"evaluation written to {out}")
        return out

    # -- seed everything ---------------------------------------------------------------
    seed_everything(cfg.seed, cfg.torch_threads)

    # -- run folder --------------------------------------------------------------------
    run_dir = resume_dir or Path(cfg.runs_dir) / run_name(cfg)
    ckpt_dir, pool_dir = run_dir / "checkpoints", run_dir / "pool"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(dump_yaml(cfg, command))
    tb_dir = str(run_dir / "tensorboard") if cfg.tensorboard else None

    # -- envs and model ----------------------------------------------------------------
    cls = algo_class(cfg.algo)
    if resume_dir is not None:
        latest = json.loads((ckpt_dir / "latest.json").read_text())
        step = int(latest["step"])
        for snap in _pool_paths(pool_dir):  # snapshots taken after the checkpoint are redone
            if int(snap.stem.split("_")[1]) > step:
                snap.unlink()
        env = make_vec_env(cfg, seed=cfg.seed + step)  # fresh games, not a replay of the start
        from memtab_env.agents.sb3_policy import moved_objects

        model = cls.load(ckpt_dir / latest["model"], env=env, device=cfg.device,
                         tensorboard_log=tb_dir, custom_objects=moved_objects(ckpt_dir / latest["model"]))
        if latest.get("replay_buffer"):
            model.load_replay_buffer(ckpt_dir / latest["replay_buffer"])
        print(f"resuming {run_dir} from step {model.num_timesteps:_}")
    else:
        env = make_vec_env(cfg, seed=cfg.seed)
        model = make_model(cfg, env, tb_dir)
        print(f"run {run_dir}")

    # -- learn -------------------------------------------------------------------------
    checkpoints = Checkpoints(ckpt_dir, cfg.checkpoint_every, cfg.keep_checkpoints,
                              pool_dir if cfg.selfplay else None)
    callbacks = [GameStats(cfg.num_players, cfg.reward), checkpoints]
    if cfg.selfplay:
        selfplay = SelfPlay(pool_dir, cfg.snapshot_every)
        selfplay.prepare(model, env)
        callbacks.append(selfplay)
    remaining = cfg.total_timesteps - model.num_timesteps
    t0 = time.perf_counter()
    start_steps = model.num_timesteps
    if remaining > 0:
        try:
            model.learn(remaining, callback=callbacks, progress_bar=cfg.progress_bar,
                        tb_log_name=cfg.algo, reset_num_timesteps=resume_dir is None)
        except KeyboardInterrupt:
            path = checkpoints.save()
            print(f"\ninterrupted: checkpoint {path} written; continue with "
                  f"python train.py --resume {run_dir}")
            env.close()
            raise
    seconds = time.perf_counter() - t0
    steps = model.num_timesteps - start_steps
    env.close()
    print(f"trained {steps:_} steps in {seconds:.0f} s ({steps / max(seconds, 1e-9):.0f} steps/s); "
          f"{model.num_timesteps:_} in total")

    # -- save --------------------------------------------------------------------------
    model_path = run_dir / "model.zip"
    model.save(model_path)
    checkpoints.save()

    # -- evaluate ----------------------------------------------------------------------
    t0 = time.perf_counter()
    report = evaluate(model_path, cfg)
    report["training"] = {"timesteps": int(model.num_timesteps), "seconds_this_session": round(seconds, 1),
                          "steps_per_second": round(steps / max(seconds, 1e-9), 1),
                          "command": command}
    write_eval(report, eval_path(model_path))
    print_table(report, f"{run_dir.name}: evaluation ({time.perf_counter() - t0:.0f} s)")
    print(f"model: {model_path}\nevaluation: {eval_path(model_path)}")
    return run_dir


if __name__ == "__main__":
    try:
        main()
    except ConfigError as error:
        sys.exit(f"train.py: config error: {error}")
    except KeyboardInterrupt:
        sys.exit(130)
