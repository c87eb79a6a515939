"""The JAX PPO's config: everything a run depends on, plain data (saved as JSON beside
the weights of every checkpoint)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from memtab_env.errors import InvalidOptionError, reject_unknown_fields
from memtab_env.jax.single_agent import OPPONENTS

ENCODERS = ("set", "kinds", "flat")
#: the largest value of every size field: a config (a checkpoint's included) beyond them is
#: refused before any network is built or any game dealt
LIMITS: dict[str, int] = {
    "recurrent_size": 1024, "num_layers": 8, "set_layers": 8, "pool_size": 1000,
    "snapshot_every": 1_000_000, "num_envs": 1 << 20, "num_steps": 1 << 16,
    "total_timesteps": 10**13, "update_epochs": 1000, "num_minibatches": 1 << 20,
    "num_devices": 4096, "seed": 2**63 - 1,
}
#: the largest integer value in ``memory_kwargs`` (window sizes and the like)
MAX_MEMORY_KWARG = 4096
#: the largest learner-step count of the learning-rate schedule's fields
MAX_LR_STEPS = 10**13
LR_SCHEDULES = ("constant", "linear", "cosine")
#: the largest weight of the score in the training reward's mix
MAX_SCORE_REWARD = 100.0
#: the largest weight of the recall loss
MAX_RECALL_COEF = 100.0
#: the opponents a curriculum switches between: those of the single-agent JAX view
SWITCH_OPPONENTS = OPPONENTS


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Everything a run depends on (plain data: saved as JSON beside the weights)."""

    env_id: str = "MemTab-v0"
    """the JAX env id (``MemTab-v0`` or ``Pelmanism-v0``)"""
    env_options: dict[str, Any] = dataclasses.field(
        default_factory=lambda: {"num_players": 2, "memory": "none"})
    """options of ``memtab_env.jax.make_single_agent`` (game options, memory, reward)"""
    opponents: str = "random"
    """the built-in JAX opponents: ``random``, ``greedy``, ``expert`` (MemTab; played on
    the host, slower) or ``pool`` (self-play: frozen snapshots of the learner, one drawn
    per seat and episode)"""
    pool_size: int = 10
    """``pool``: the most recent snapshots kept"""
    snapshot_every: int = 10
    """``pool``: updates between two snapshots (the first is the initial network)"""
    opponent_switches: str = ""
    """an opponent curriculum: comma-separated ``NAME@STEPS`` items (e.g.
    ``greedy@1000000,pool@2000000``). From the first update that starts at or after
    ``STEPS`` learner steps the opponents are ``NAME`` (``random``, ``greedy``,
    ``expert`` or ``pool``); before the first switch they are ``opponents``. At a switch
    the weights, the optimiser's state, the reward statistics and the learning-rate
    schedule carry on (one run, not a follow-up), the games are dealt afresh, and a switch
    to ``pool`` fills the pool with the current weights. Empty: the same opponents
    throughout"""
    perfect_memory_steps: int = 0
    """a memory curriculum: the first ``perfect_memory_steps`` learner steps are played
    under memory ``perfect`` (every card ever revealed stays in the observation), the
    rest under ``env_options``' memory model. The switch is a stage of the curriculum as
    an opponent switch is (fresh games, the rest carries on). The network is the same
    under every memory model; it learns first what the cards are worth, then has to
    remember them. 0 (or an env under ``perfect``): no such stage"""
    learner_seat: int | str = "random"
    """the learner's seat, or ``random`` (drawn each episode)"""
    encoder: str = "set"
    """``set``: position tokens, a memory per position (shared weights) and set layers
    (equivariant logits); ``kinds``: ``set`` plus what the card kinds say (a kind each
    position's memory believes, messages between positions of one kind, whose tableau
    holds the kind), as the torch set policy of ``agents/set_policy.py``; ``flat``: one
    memory over the whole observation"""
    set_layers: int = 2
    """set layers (``encoder: set``)"""
    latch_init: bool = False
    """``encoder: kinds`` with a ``GRU`` memory: start each position's memory as a latch
    (:func:`latch_gru`): it writes when its position shows a card and keeps what it
    wrote otherwise; every weight stays trainable. Kept so that the committed latch runs
    and their checkpoints load and reproduce; not part of the recipe: it writes into
    memax's GRU internals (one architecture only), so a grid that compares architectures
    leaves it off"""
    recall_coef: float = 0.0
    """``encoder: kinds``: the weight of the recall loss, an auxiliary loss beside PPO's.
    The network's readout of each face-down position's memory (the kind it believes the
    position holds, or "not known") is trained by cross-entropy to give the kind that the
    learner's own observations last showed at that position in this episode, or "not
    known" where they never showed one. A dense, self-supervised signal for remembering
    (the targets come from the learner's past observations only, nothing it could not
    know), the same for every memory architecture. 0: PPO's loss alone"""
    memory_model: str = "GRU"
    """memax model name (``MLP`` = no memory)"""
    memory_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    """extra layer options for memax (e.g. ``{"window_size": 4}`` for ``Stack``)"""
    recurrent_size: int = 32
    """width of the memory model (per position with ``encoder: set``)"""
    num_layers: int = 1
    """memory layers"""
    num_envs: int = 64
    """games stepped together"""
    num_steps: int = 32
    """rollout length per update"""
    fresh_rollouts: bool = False
    """start every rollout on freshly dealt games with fresh memory (whole-episode
    backprop): every episode of a rollout begins inside it, so the update's replay carries
    its gradient back to the episode's first flip; the episode still running at the
    rollout's end is bootstrapped with its value (as at a time limit) and dropped. Size
    ``num_steps`` to the episode length. ``false``: the games and their recurrent states
    carry on from one rollout to the next (gradients span at most ``num_steps`` steps)"""
    total_timesteps: int = 1_000_000
    """learner steps in all"""
    learning_rate: float = 2.0e-3
    anneal_lr: bool = True
    """``false``: a constant learning rate, whatever ``lr_schedule`` says"""
    lr_schedule: str = "linear"
    """``constant``, ``linear`` or ``cosine`` from ``learning_rate`` down to
    ``lr_floor * learning_rate`` at the end of the schedule (see :func:`learning_rate_at`)"""
    lr_floor: float = 0.0
    """the fraction of ``learning_rate`` the schedule ends at (0: annealed to zero)"""
    lr_warmup: int = 0
    """learner steps of linear warm-up from zero at the start of the schedule"""
    lr_horizon: int = 0
    """learner steps the schedule spans (0: ``lr_offset`` plus this run's updates)"""
    lr_offset: int = 0
    """learner steps of the schedule already spent by the runs this one continues (a
    follow-up starts where its init run's schedule stopped, not at full rate)"""
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    normalize_reward: bool = True
    """divide rewards by a running standard deviation of the discounted return (as
    gymnasium's ``NormalizeReward``), so one set of coefficients fits every reward scheme"""
    score_reward: float = 0.0
    """the training reward's mix: each learner step's reward is the env's (its ``reward``
    option: ``win``, ``score`` or ``turns``) plus ``score_reward`` times the learner's
    score change over the step, opponents' flips included
    (:attr:`memtab_env.jax.SingleAgentState.score_change`). With ``reward: win``, 0 trains
    on the sparse win alone, a small weight (e.g. 0.05) adds a dense signal for every pair
    or tableau card won; a mix only shapes training: evaluation and the logged win rate
    are the env scheme's"""
    update_epochs: int = 4
    num_minibatches: int = 4
    seed: int = 0
    num_devices: int = 1
    """devices the games are sharded over (``jax.sharding``: each device steps
    ``num_envs / num_devices`` games, the weights are replicated and the gradients
    averaged by XLA); 0: every device"""

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_envs * self.num_steps))

    def opponent_stages(self) -> list[tuple[int, str]]:
        """The curriculum as ``[(first learner step, opponents), ...]``: ``(0, opponents)``
        then one item per switch of ``opponent_switches``."""
        stages = [(0, self.opponents)]
        if not isinstance(self.opponent_switches, str):
            raise InvalidOptionError(f"opponent_switches must be a string of NAME@STEPS items, "
                                     f"got {self.opponent_switches!r:.60}")
        for item in filter(None, (part.strip() for part in self.opponent_switches.split(","))):
            name, sep, steps = item.partition("@")
            if not sep or not steps.isdigit() or not name:
                raise InvalidOptionError(f"opponent_switches: {item!r:.60} is not NAME@STEPS "
                                         "(e.g. greedy@1000000)")
            if name not in SWITCH_OPPONENTS:
                raise InvalidOptionError(f"opponent_switches: unknown opponents {name!r:.40}; "
                                         f"allowed: {list(SWITCH_OPPONENTS)}")
            start = int(steps)
            if not stages[-1][0] < start <= MAX_LR_STEPS:
                raise InvalidOptionError(
                    f"opponent_switches: {item!r:.60} must come after step {stages[-1][0]} (switches "
                    f"in increasing order, each above 0 and at most {MAX_LR_STEPS})")
            if name == stages[-1][1]:
                raise InvalidOptionError(f"opponent_switches: {item!r:.60} switches to the opponents "
                                         "already playing")
            stages.append((start, name))
        return stages

    def stages(self) -> list[tuple[int, str, str]]:
        """The whole curriculum as ``[(first learner step, opponents, memory model), ...]``:
        the opponent stages (:meth:`opponent_stages`) and, with ``perfect_memory_steps``,
        the switch from memory ``perfect`` to the env's own."""
        memory = str(self.env_options.get("memory", "perfect"))
        switch = self.perfect_memory_steps if memory != "perfect" else 0
        opponents = self.opponent_stages()
        starts = sorted({first for first, _ in opponents} | ({switch} if switch else set()))
        return [(first, [name for start, name in opponents if start <= first][-1],
                 "perfect" if first < switch else memory) for first in starts]

    @property
    def uses_pool(self) -> bool:
        """Whether any stage of the curriculum plays ``pool`` opponents (the run then keeps
        a pool of snapshots from the start)."""
        return any(name == "pool" for _, name in self.opponent_stages())

    def stage_at(self, update: int) -> int:
        """The index in :meth:`stages` of the stage that update number ``update`` (0 the
        first) trains in."""
        start = update * self.num_envs * self.num_steps
        return max(i for i, (first, _, _) in enumerate(self.stages()) if first <= start)

    def learning_rate_at(self, timesteps: Any) -> Any:
        """The learning rate after ``timesteps`` learner steps of this run (a number or a
        traced array): warm-up, then the schedule from ``learning_rate`` to the floor."""
        import jax.numpy as jnp

        step = jnp.asarray(timesteps, jnp.float32) + self.lr_offset
        if not self.anneal_lr or self.lr_schedule == "constant":
            decay = jnp.float32(1.0)
        else:
            horizon = self.lr_horizon or (self.lr_offset + self.num_updates * self.num_envs * self.num_steps)
            frac = jnp.clip(step / horizon, 0.0, 1.0)
            shape = 1.0 - frac if self.lr_schedule == "linear" else 0.5 * (1.0 + jnp.cos(jnp.pi * frac))
            decay = self.lr_floor + (1.0 - self.lr_floor) * shape
        warm = jnp.clip(step / self.lr_warmup, 0.0, 1.0) if self.lr_warmup else 1.0
        return self.learning_rate * decay * warm

    def check(self) -> PPOConfig:
        """Raise :class:`InvalidOptionError` naming a bad field: every field of its type,
        every size within :data:`LIMITS`."""
        for name in ("env_id", "opponents", "encoder", "memory_model", "opponent_switches"):
            if not isinstance(getattr(self, name), str):
                raise InvalidOptionError(f"{name} must be a string, got {getattr(self, name)!r:.60}")
        for name in ("anneal_lr", "normalize_reward", "latch_init", "fresh_rollouts"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidOptionError(f"{name} must be true or false, got {getattr(self, name)!r:.60}")
        for name in ("env_options", "memory_kwargs"):
            value = getattr(self, name)
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, (str, int, float, bool, type(None)))
                    for k, v in value.items()):
                raise InvalidOptionError(f"{name} must be an object of plain values, got {value!r:.80}")
        for k, v in self.memory_kwargs.items():
            if isinstance(v, (int, float)) and not abs(v) <= MAX_MEMORY_KWARG:
                raise InvalidOptionError(f"memory_kwargs.{k} must be at most {MAX_MEMORY_KWARG}, got {v!r}")
        if self.learner_seat != "random" and (isinstance(self.learner_seat, bool)
                                              or not isinstance(self.learner_seat, int)):
            raise InvalidOptionError(f"learner_seat must be 'random' or an integer, "
                                     f"got {self.learner_seat!r:.60}")
        for name, top in LIMITS.items():
            value = getattr(self, name)
            low = 0 if name in ("seed", "num_devices") else 1
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
                raise InvalidOptionError(f"{name} must be an integer in [{low}, {top}], got {value!r:.60}")
        if self.encoder not in ENCODERS:
            raise InvalidOptionError(f"encoder must be one of {list(ENCODERS)}, got {self.encoder!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise InvalidOptionError(f"lr_schedule must be one of {list(LR_SCHEDULES)}, "
                                     f"got {self.lr_schedule!r:.60}")
        for name in ("lr_warmup", "lr_horizon", "lr_offset", "perfect_memory_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LR_STEPS:
                raise InvalidOptionError(f"{name} must be an integer in [0, {MAX_LR_STEPS}] (learner steps), "
                                         f"got {value!r:.60}")
        if isinstance(self.lr_floor, bool) or not isinstance(self.lr_floor, (int, float)) \
                or not 0 <= self.lr_floor <= 1:
            raise InvalidOptionError(f"lr_floor must be a number in [0, 1], got {self.lr_floor!r:.60}")
        stages = self.opponent_stages()
        if len(stages) > 1 and self.opponents not in SWITCH_OPPONENTS:
            raise InvalidOptionError(f"opponent_switches starts from opponents in {list(SWITCH_OPPONENTS)}, "
                                     f"got {self.opponents!r:.40}")
        if len(stages) > 1 and self.env_options.get("num_players") == 1:
            raise InvalidOptionError(f"opponent_switches {self.opponent_switches!r:.60}: a game with "
                                     "num_players 1 has no opponents to switch")
        if self.latch_init and (self.encoder != "kinds" or self.memory_model != "GRU"):
            raise InvalidOptionError(
                f"latch_init needs encoder 'kinds' and memory_model 'GRU', got encoder "
                f"{self.encoder!r} and memory_model {self.memory_model!r}")
        if isinstance(self.recall_coef, bool) or not isinstance(self.recall_coef, (int, float)) \
                or not 0 <= self.recall_coef <= MAX_RECALL_COEF:
            raise InvalidOptionError(f"recall_coef must be a number in [0, {MAX_RECALL_COEF}], "
                                     f"got {self.recall_coef!r:.60}")
        if self.recall_coef and self.encoder != "kinds":
            raise InvalidOptionError(f"recall_coef needs encoder 'kinds' (its memories' readout is "
                                     f"what the recall loss trains), got encoder {self.encoder!r}")
        if self.num_envs % self.num_minibatches:
            raise InvalidOptionError(
                f"num_envs ({self.num_envs}) must be a multiple of num_minibatches "
                f"({self.num_minibatches}): minibatches split the games")
        if isinstance(self.score_reward, bool) or not isinstance(self.score_reward, (int, float)) \
                or not 0 <= self.score_reward <= MAX_SCORE_REWARD:
            raise InvalidOptionError(f"score_reward must be a number in [0, {MAX_SCORE_REWARD}], "
                                     f"got {self.score_reward!r:.60}")
        for name in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef",
                     "max_grad_norm"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) \
                    or value < 0:
                raise InvalidOptionError(f"{name} must be a finite number >= 0, got {value!r}")
        return self

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> PPOConfig:
        if not isinstance(data, dict):
            raise InvalidOptionError(f"a PPO config is a JSON object, got {type(data).__name__}")
        reject_unknown_fields(data, (f.name for f in dataclasses.fields(cls)), InvalidOptionError,
                              "unknown PPO config")
        return cls(**data).check()

