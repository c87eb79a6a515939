"""The training config: :class:`Config` (a typed dataclass, one docstring per field),
its validation, the YAML files (keyed by env id, rl-baselines3-zoo style; the shipped
ones are package data, :func:`config_path`) and, for ``algo: jax_ppo``, the JAX PPO config
a training config maps to (:func:`ppo_config`). The command line that overrides a file's
fields is :mod:`memtab_env.train.command_line`; the JAX runner
(:mod:`memtab_env.train.jax_run`) and the run manifest depend on this module, never the
other way.

A YAML value is checked against its field's annotation (:func:`config_from_dict`): an
unknown key fails with the closest known one, a value of the wrong type fails with the
type it should have. Nothing here imports Stable-Baselines3.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import math
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import gymnasium
import yaml

from memtab_env.errors import MemTabError

ALGOS = ("maskable_ppo", "ppo", "recurrent_ppo", "dqn", "jax_ppo")
POLICIES = ("mlp", "set", "kinds")
VEC_ENVS = ("dummy", "subproc", "batched")
ACTIVATIONS = ("tanh", "relu")
LR_SCHEDULES = ("constant", "linear")
#: the opponent name that stands for the self-play pool of frozen snapshots
SELF = "self"
#: the env id read from a config file that holds several, unless --env says otherwise
DEFAULT_ENV_ID = "MemTab-v0"
#: opponents that the batched engines step inside their compiled kernels
BATCHED_OPPONENTS = ("random", "greedy")


def batched_games() -> list[str]:
    """The games that ``vec_env: batched`` trains: those whose registry row names a
    batched SB3 VecEnv (``sb3_vec_env``)."""
    from memtab_env.registry import GAMES

    return sorted(spec.name for spec in GAMES.values() if spec.sb3_vec_env is not None)


def _no_legal_status(game: str) -> bool:
    """Whether ``game``'s observation cannot mask the recurrent policy's flips (its
    encoder says so)."""
    from memtab_env.registry import game_spec, load

    return load(game_spec(game).encoder).no_legal_status is not None


class ConfigError(MemTabError, ValueError):
    """A config file, override or run file (``latest.json``, the manifest) that does not
    fit; the message names the file, the line and the field."""


#: largest config file read
MAX_CONFIG_BYTES = 1 << 20


def _key_line(text: str, env_id: str, key: str | None) -> int | None:
    """The line of ``env_id``'s entry (or of its field ``key``) in the YAML ``text``."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    for k, v in root.value:
        if getattr(k, "value", None) == env_id:
            if key is not None and isinstance(v, yaml.MappingNode):
                for k2, _ in v.value:
                    if getattr(k2, "value", None) == key:
                        return k2.start_mark.line + 1
            return k.start_mark.line + 1
    return None


def read_yaml(path: Path) -> tuple[str, Any]:
    """``(text, value)`` of the YAML file ``path``: a regular file of at most
    :data:`MAX_CONFIG_BYTES`, UTF-8, safe YAML (no Python objects); :class:`ConfigError`
    naming the file and the line otherwise."""
    from memtab_env import untrusted

    text = untrusted.decode(untrusted.read_bytes(path, ConfigError, MAX_CONFIG_BYTES), str(path), ConfigError)
    try:
        return text, yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except (RecursionError, ValueError) as exc:
        raise ConfigError(f"{path}: refused YAML ({type(exc).__name__}: {str(exc)[:100]})") from None


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
    (sb3-contrib, LSTM), dqn, and jax_ppo (memtab_env.jax.ppo: PPO with a memax memory
    model, end to end in JAX on the JAX backend; the jax extra)."""
    policy: str = "mlp"
    """Network: mlp (SB3's MLP on the flat observation) or set (the position-equivariant
    network of agents/set_policy.py; maskable_ppo and ppo; with recurrent_ppo it is the
    features extractor in front of the LSTM, agents.set_policy.SetFeatures); with jax_ppo
    mlp, set or kinds are the JAX PPO's encoders flat, set and kinds."""
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
    """dummy (one process), subproc (SubprocVecEnv, one process per env) or batched (the
    game's numba engine, the sb3_vec_env of its registry row, steps the random and greedy
    games; the rest of the mix runs in scalar envs in the same process)."""

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
    memory_model: str = "GRU"
    """jax_ppo: the memory architecture, a memax model name (MLP: none; Stack: a window
    of the last inputs; LSTM, GRU, MGU, LRU, S6, FFM, FART, Attention, ...); with policy
    set, one memory per position (shared weights)."""
    memory_kwargs: dict[str, Any] = field(default_factory=dict)
    """jax_ppo: options of the memax layer, e.g. {window_size: 4} for Stack."""
    recurrent_size: int = 32
    """jax_ppo: width of the memory model."""
    latch_init: bool = False
    """jax_ppo with policy kinds and memory_model GRU: start each position's memory as a
    latch (memtab_env.jax.ppo.latch_gru)."""
    jax_devices: int = 1
    """jax_ppo: JAX devices the games are sharded over (0: every device)."""
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

        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            items = list(value.values()) if isinstance(value, dict) else value
            items = items if isinstance(items, list) else [items]
            if any(isinstance(v, float) and not math.isfinite(v) for v in items):
                raise ConfigError(f"{f.name} must be finite, got {value!r:.60} (NaN and infinities are "
                                  "refused)")
        if self.env_id not in gymnasium.registry:
            known = sorted(k for k in gymnasium.registry if k.split("-")[0] in _game_env_ids())
            raise ConfigError(f"env_id {self.env_id!r} is not registered; memtab-env ids: {known}")
        choice("algo", ALGOS)
        choice("policy", POLICIES)
        choice("vec_env", VEC_ENVS)
        choice("activation", ACTIVATIONS)
        choice("lr_schedule", LR_SCHEDULES)
        if self.algo == "recurrent_ppo" and self.obs_mask and _no_legal_status(self.game):
            raise ConfigError(f"obs_mask works on MemTab-v0 and Pelmanism-v0, not {self.env_id}: "
                              "set obs_mask: false (illegal actions are then penalised)")
        if self.slot_memory < 0:
            raise ConfigError(f"slot_memory must be 0 (off) or a positive width, got {self.slot_memory}")
        if self.slot_memory and not (self.algo == "recurrent_ppo" and self.policy == "set" and self.obs_mask):
            raise ConfigError("slot_memory needs algo recurrent_ppo, policy set and obs_mask true "
                              f"(got algo {self.algo!r}, policy {self.policy!r}, obs_mask {self.obs_mask})")
        if self.algo == "jax_ppo":
            ppo_config(self)  # the JAX PPO's own checks, named by field
        if self.policy == "kinds" and self.algo != "jax_ppo":
            raise ConfigError(f"policy 'kinds' works with algo jax_ppo only, got {self.algo!r}")
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
                     "gradient_steps", "target_update_interval", "keep_checkpoints",
                     "recurrent_size"):
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
        from memtab_env.protocol.tracks import is_reserved_seed

        if is_reserved_seed(self.seed) or is_reserved_seed(self.seed + self.n_envs - 1):
            raise ConfigError(
                f"seed {self.seed}: training envs would use seeds reserved for the benchmark's "
                "evaluation deals [1000000000, 1001000000) (BENCHMARK.md); choose another seed"
            )
        if self.vec_env == "batched" and self.game not in batched_games():
            raise ConfigError(f"vec_env 'batched' plays {batched_games()}, not {self.env_id}")
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


def ppo_config(cfg: Config) -> Any:
    """The :class:`memtab_env.jax.ppo.PPOConfig` of a training config;
    :class:`ConfigError` naming the field that the JAX PPO cannot take."""
    from memtab_env.errors import InvalidOptionError
    from memtab_env.jax import GAMES
    from memtab_env.jax.ppo import PPOConfig
    from memtab_env.jax.single_agent import OPPONENTS

    # the JAX view's named opponents; its "pool" is the config's SELF
    JAX_OPPONENTS = tuple(o for o in OPPONENTS if o != "pool")  # noqa: N806
    if cfg.env_id not in GAMES:
        raise ConfigError(f"algo jax_ppo trains {sorted(GAMES)} (the JAX backend's games), not {cfg.env_id}")
    mix = {name: w for name, w in cfg.opponents.items() if w > 0}
    if len(mix) != 1 or next(iter(mix)) not in (*JAX_OPPONENTS, SELF):
        raise ConfigError(f"opponents: algo jax_ppo plays one built-in JAX opponent, one of "
                          f"{[*JAX_OPPONENTS, SELF]} (e.g. {{random: 1.0}}; {SELF}: the pool of "
                          f"frozen snapshots), got {cfg.opponents}")
    opponent = "pool" if SELF in mix else next(iter(mix))
    per_update = cfg.n_envs * cfg.n_steps
    if cfg.batch_size > cfg.n_envs * cfg.n_steps or (cfg.n_envs * cfg.n_steps) % cfg.batch_size \
            or cfg.n_envs % ((cfg.n_envs * cfg.n_steps) // cfg.batch_size):
        raise ConfigError(
            f"batch_size {cfg.batch_size}: algo jax_ppo splits a rollout of n_envs x n_steps = "
            f"{cfg.n_envs} x {cfg.n_steps} by games, so n_envs * n_steps / batch_size must be a "
            "whole number that divides n_envs")
    fields = dict(
        env_id=cfg.env_id,
        env_options={"num_players": cfg.num_players, "memory": cfg.memory, "reward": cfg.reward,
                     **cfg.env_options},
        opponents=opponent, learner_seat=cfg.learner_seat,
        pool_size=cfg.pool_size, snapshot_every=max(1, cfg.snapshot_every // per_update),
        encoder={"mlp": "flat"}.get(cfg.policy, cfg.policy), set_layers=cfg.set_layers,
        latch_init=cfg.latch_init,
        memory_model=cfg.memory_model, memory_kwargs=dict(cfg.memory_kwargs),
        recurrent_size=cfg.recurrent_size, num_envs=cfg.n_envs, num_steps=cfg.n_steps,
        total_timesteps=cfg.total_timesteps, learning_rate=cfg.learning_rate,
        anneal_lr=cfg.lr_schedule == "linear", gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
        clip_coef=cfg.clip_range, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
        max_grad_norm=cfg.max_grad_norm, update_epochs=cfg.n_epochs,
        num_minibatches=(cfg.n_envs * cfg.n_steps) // cfg.batch_size, seed=cfg.seed,
        num_devices=cfg.jax_devices)
    try:
        config = PPOConfig(**fields).check()
        from memtab_env.jax.ppo import make_policy

        make_policy(config)  # the game checks its options, memax its model name
    except (InvalidOptionError, TypeError, ValueError) as exc:
        raise ConfigError(f"algo jax_ppo: {exc}") from None
    return config


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


def check_keys(keys: Sequence[str], where: str) -> None:
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
    check_keys(list(values), where)
    hints = get_type_hints(Config)
    cfg = dataclasses.replace(base) if base is not None else Config()
    for key, value in values.items():
        setattr(cfg, key, _coerce(key, value, hints[key], from_cli))
    return cfg


def shipped_configs() -> list[str]:
    """Names of the configs shipped with the package (``quick``, ``selfplay``, ...)."""
    folder = resources.files("memtab_env.configs")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def config_path(name: str | Path) -> Path:
    """The YAML file that ``--config name`` means: a file at that path if one exists, else
    the shipped config of that name (``quick``, ``quick.yaml`` or ``configs/quick.yaml``:
    the package's copy of the repository's ``configs/``)."""
    path = Path(name)
    if path.is_file():
        return path
    stem = path.name[: -len(".yaml")] if path.name.endswith(".yaml") else path.name
    if (path.parent == Path(".") or path.parent.name == "configs") and stem in shipped_configs():
        return Path(str(resources.files("memtab_env.configs") / f"{stem}.yaml"))
    raise ConfigError(f"config file {str(name)!r} not found; shipped configs: {shipped_configs()} "
                      "(give a name, or the path of a YAML file)")


def load_yaml(path: str | Path, env_id: str | None = None) -> Config:
    """The config of ``env_id`` in the YAML file ``path`` (a path or a shipped config's
    name, :func:`config_path`).

    The file maps env ids to field values; keys that start with ``_`` hold shared anchors
    and are skipped. Without ``env_id``: the file's only env id, else ``MemTab-v0``.
    """
    path = config_path(path)
    text, data = read_yaml(path)
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
    try:
        cfg = config_from_dict(values, where=f"{path} [{env_id}]")
    except ConfigError as exc:
        raise _located(exc, path, text, env_id, values) from None
    cfg.source = (path, text, env_id, set(values))  # type: ignore[attr-defined]
    return cfg


def _located(exc: ConfigError, path: Path, text: str, env_id: str, keys: Any) -> ConfigError:
    """``exc`` about a value of the file ``path`` as ``FILE:LINE: [env] field F: ...``."""
    msg = str(exc)
    unknown = re.match(r"unknown config key '([^']*)'", msg)
    key = unknown.group(1) if unknown else next(
        (k for k in keys if isinstance(k, str) and re.match(rf"{re.escape(k)}[ :\[]", msg)), None)
    line = _key_line(text, env_id, key)
    where = f"{path}:{line}" if line is not None else str(path)
    return ConfigError(f"{where}: [{env_id}]{f' field {key}' if key else ''}: {msg}")


def validate_config(cfg: Config, overrides: Any = ()) -> None:
    """``cfg.validate()``; an error about a value read from a file names the file, the
    line and the field (``overrides``: the keys given on the command line)."""
    try:
        cfg.validate()
    except ConfigError as exc:
        source = getattr(cfg, "source", None)
        msg = str(exc)
        if source is None or any(re.match(rf"{re.escape(k)}[ :\[]", msg) for k in overrides):
            raise
        path, text, env_id, keys = source
        raise _located(exc, path, text, env_id, keys) from None


def dump_yaml(cfg: Config, command: str) -> str:
    """``cfg`` as a YAML file keyed by its env id, with the command that made it."""
    body = {k: v for k, v in dataclasses.asdict(cfg).items() if k != "env_id"}
    text = yaml.safe_dump({cfg.env_id: body}, sort_keys=False, default_flow_style=None)
    return f"# {command}\n{text}"
