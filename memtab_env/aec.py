"""One PettingZoo AEC env class over any game engine, and the lean standard wrapper.

A game's classic-style module (``memtab_env.memtab_v0``) subclasses :class:`MemoryGameEnv`
with its registry row and exposes ``raw_env`` and ``env()``. Everything every env shares
lives here once: agents and turn order, seeding, memory models, observations, the
PettingZoo reward bookkeeping (the same agent may act several times in a row), records,
rendering and illegal-action handling.

Illegal actions (docs/rulings.md, "Bad input"): the bare ``raw_env`` raises
:class:`~memtab_env.errors.IllegalActionError` and leaves the game unchanged; ``env()``
ends the game with a loss (reward -1) for the offender and 0 for everybody else, exactly as
PettingZoo's ``TerminateIllegalWrapper`` does for its classic games.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from memtab_env.errors import (
    GameOverError,
    IllegalActionError,
    InvalidOptionError,
    NotResetError,
    check_finite,
    check_seed,
    unknown_option_error,
)
from memtab_env.games.base import Game, Transition
from memtab_env.memory import Memory, parse_memory
from memtab_env.registry import GameSpec, load
from memtab_env.rewards import check_reward_scheme, win_rewards

RENDER_MODES = ("human", "ansi", "rgb_array")
#: whether the classic-style envs offer a parallel API (no: one seat acts at a time)
_PARALLEL = False
_SEED_BOUND = 2**63


class MemoryGameEnv(AECEnv, EzPickle):
    """PettingZoo AEC env over a memory-game engine. Subclasses set ``game_spec``.

    Args:
        memory: memory model of the observations: ``"perfect"`` (default), ``"none"``,
            ``"decay:p"`` or ``"window:k"`` (see :mod:`memtab_env.memory`).
        reward: ``"win"`` (default; terminal +1/-1 shared) or ``"score"`` (dense change of
            each player's score), see :mod:`memtab_env.rewards`.
        render_mode: ``None``, ``"human"`` (prints the table), ``"ansi"`` (returns it as a
            string) or ``"rgb_array"`` (returns a uint8 image).
        render_positions: draw every position's number (the action id that flips it) on
            the ``rgb_array`` image, and on MemTab's text table (``#12`` for a face-down
            card instead of ``##``).
        **game_options: the engine's options (``num_players``, ``first_player``, ...).
    """

    game_spec: ClassVar[GameSpec]
    metadata: ClassVar[dict[str, Any]]

    def __init__(
        self,
        memory: str = "perfect",
        reward: str = "win",
        render_mode: str | None = None,
        render_positions: bool = False,
        **game_options: Any,
    ) -> None:
        EzPickle.__init__(self, memory=memory, reward=reward, render_mode=render_mode,
                          render_positions=render_positions, **game_options)
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise InvalidOptionError(
                f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}"
            )
        engine_cls = load(self.game_spec.engine)
        unknown = sorted(set(game_options) - set(engine_cls.default_options))
        if unknown:
            allowed = sorted(["memory", "reward", "render_mode", "render_positions",
                              *engine_cls.default_options])
            raise unknown_option_error(unknown, self.game_spec.env_id, allowed)
        self.game: Game = engine_cls(**game_options)
        self.encoder = load(self.game_spec.encoder)(self.game)
        self.memory_spec = parse_memory(memory)
        self.reward_scheme = check_reward_scheme(reward)
        self._turn_penalty = self.reward_scheme == "turns"
        self._dense = self.reward_scheme in ("score", "turns")
        self.render_mode = render_mode
        self.render_positions = bool(render_positions)
        self._renderer: Any = None

        n = self.game.num_players
        info = self.game.info
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    low=self.encoder.low, high=self.encoder.high, dtype=np.int8
                ),
                "action_mask": spaces.Box(0, 1, shape=(info.num_actions,), dtype=np.int8),
                "remembered_mask": spaces.Box(
                    0, 1, shape=(info.num_positions,), dtype=np.int8
                ),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(info.num_actions) for a in self.possible_agents}
        deal = info.num_positions * info.num_kinds
        self.state_space = spaces.Box(
            low=np.concatenate([np.zeros(deal, np.int8), self.encoder.low]),
            high=np.concatenate([np.ones(deal, np.int8), self.encoder.high]),
            dtype=np.int8,
        )
        self.memory = Memory(self.memory_spec, n, info.num_positions)
        self._num_actions = info.num_actions
        self._max_game_length = info.max_game_length
        self._seed_stream: np.random.Generator | None = None
        self._stream_seed: int | None = None  # None: fresh entropy
        #: the engine's state of the game in progress (None before the first reset)
        self.game_state: Any = None
        self.game_seed: int | None = None

    # -- PettingZoo API ---------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game.

        Unknown ``options`` keys are ignored with a warning (PettingZoo's ``api_test``
        requires that ``reset`` accepts arbitrary options). ``seed`` seeds this game's deal
        and memory streams, and the stream of seeds of the games that follow a ``reset()``
        without seed. ``options`` may hold ``"layout"`` (a deal: list of card codes or kind
        ids) to play a given deal.
        """
        # everything that can fail is checked before anything changes: a failed reset
        # leaves the env exactly as it was
        if seed is not None:
            seed = check_seed(seed)
        given = self.game.from_layout(options["layout"]) if options and "layout" in options else None
        unknown = sorted(set(options or {}) - {"layout"})
        if unknown:
            # a warning, not an error: PettingZoo's api_test resets with options={"options": 1}
            import gymnasium

            gymnasium.logger.warn(f"ignoring unknown reset option(s) {unknown}; known: ['layout']")
        if seed is not None:
            # the stream of the following games' seeds is made when first needed (a reset
            # without seed): the same draws, without its cost on every seeded reset
            self._seed_stream, self._stream_seed = None, seed
            game_seed = int(seed)
        else:
            if self._seed_stream is None:
                self._seed_stream = np.random.default_rng(self._stream_seed)
            game_seed = int(self._seed_stream.integers(_SEED_BOUND))
        self.game_seed = game_seed
        self.np_random = np.random.default_rng(game_seed)
        if given is not None:
            self.game_state = given
            self._layout_given = True
        else:
            self.game_state = self.game.new_game(self.np_random)
            self._layout_given = False
        # only decay draws from its seeded streams (spawned from the game's seed)
        self.memory.reset(np.random.SeedSequence(game_seed).spawn(2)[1] if self.memory.random else None)
        self._transitions: list[Transition] = []
        self._rewards_set = False
        self._illegal: dict[str, Any] | None = None
        self._final_rewards: np.ndarray | None = None
        self._prev_scores = self.game.scores(self.game_state) if self.reward_scheme == "score" else None

        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player(self.game_state)]
        if self.render_mode == "human":
            self.render()

    def state(self) -> np.ndarray:
        """The full-information state (PettingZoo's ``state()``, in :attr:`state_space`):
        what a centralised critic or a privileged baseline needs, the same whoever is on
        turn and whatever the memory model. A fresh int8 vector of two blocks:

        ==========  =========  ======================================================
        block       shape      meaning
        ==========  =========  ======================================================
        deal        P x K      one-hot kind of the card dealt at every position (the
                               whole deal, cards gone or taken included)
        table       obs size   the game's observation layout (the encoder's index
                               table, :mod:`memtab_env.observations`) seen from seat 0
                               with every card shown: every status, every face-down
                               card's kind, the tableaux or collections, the scores,
                               the flip index within the turn and whose turn it is;
                               seats in seat order (seat 0 first)
        ==========  =========  ======================================================

        ``P`` positions, ``K`` kinds (``info.num_positions``, ``info.num_kinds``).
        """
        if self.game_state is None:
            raise NotResetError("state() needs a game: call reset() first")
        game, st = self.game, self.game_state
        info = game.info
        deal = np.zeros((info.num_positions, info.num_kinds), np.int8)
        deal[np.arange(info.num_positions), game.dealt_kinds(st)] = 1
        return np.concatenate([deal.ravel(), self.encoder.encode(st, 0, game.face_down(st))])

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.game_state is None:
            raise NotResetError("observe() before the first reset(): call reset() first")
        return self.encoder.observe(self.game, self.game_state, self.agent_name_mapping[agent],
                                    self.memory, agent == self.agent_selection)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last`` (same result), without its extra indirections: it runs
        once per step of every loop."""
        if self.game_state is None:
            raise NotResetError("last() before the first reset(): call reset() first")
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def step(self, action: Any) -> None:
        if self.game_state is None:
            raise NotResetError("step() before the first reset(): call reset() first")
        if not self.agents:
            raise GameOverError("step() after the game ended and every agent was removed: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(
                f"{agent} is on turn and must act: action None is only allowed for an agent "
                f"whose game is over; legal actions: {self.legal_actions()}"
            )
        # the engine validates and raises before changing anything
        t = self.game.apply_inplace(self.game_state, action)
        self.memory.on_action(t.player, t.revealed)
        transitions = self._transitions
        transitions.append(t)

        # PettingZoo bookkeeping: the acting agent's cumulative reward restarts, `rewards`
        # holds this step's rewards (cleared only when a previous step set some)
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_set:
            self._clear_rewards()
            self._rewards_set = False
        if self._dense:  # score changes or the turn penalty: rewards on every step
            if self._prev_scores is not None:
                scores = self.game.scores(self.game_state)
                for a, d in zip(self.possible_agents, scores - self._prev_scores, strict=True):
                    self.rewards[a] = float(d)
                self._prev_scores = scores
                self._rewards_set = True
            if self._turn_penalty and t.turn_over:
                self.rewards[agent] -= 1.0
                self._rewards_set = True
        if t.game_over:
            self._final_rewards = win_rewards(self.game.num_players, self.game.winners(self.game_state))
            if self.reward_scheme == "win":
                for a, r in zip(self.possible_agents, self._final_rewards, strict=True):
                    self.rewards[a] = float(r)
            self._rewards_set = True
            self.terminations = dict.fromkeys(self.agents, True)
        elif len(transitions) >= self._max_game_length:
            # games without a rule bound on their length (Pelmanism, the board game) are
            # truncated at the engine's declared maximum; a MemTab game never gets here
            self.truncations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[t.next_player]
        if self._rewards_set:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode=...")
            return None
        renderer = self.renderer
        if self.render_mode == "rgb_array":
            frame = renderer.rgb(self.game_state)
            if self.render_positions:
                from memtab_env.drawing import draw_position_labels

                frame = draw_position_labels(frame, renderer.position_boxes())
            return frame
        if self.render_positions and "labels" in inspect.signature(renderer.ansi).parameters:
            text = renderer.ansi(self.game_state, labels=True)
        else:
            text = renderer.ansi(self.game_state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    @property
    def renderer(self) -> Any:
        """The game's renderer (``ansi(state)``, ``rgb(state)``), built when first needed."""
        if self._renderer is None:
            self._renderer = load(self.game_spec.renderer)(self.game)
        return self._renderer

    def last_revealed(self) -> tuple[int, ...]:
        """The positions the latest action revealed, in order (every player watches every
        flip: this is public); empty before the first action of a game."""
        transitions = getattr(self, "_transitions", None)
        return tuple(int(pos) for pos, _ in transitions[-1].revealed) if transitions else ()

    def describe_last(self) -> str:
        """What the latest action did, in words (``"player_1 flips 12 (row 1, column 5):
        R5, a pair is removed (with 3); extra turn"``): the game's renderer's
        ``describe``, or the card revealed, a pair taken, an extra turn, the end."""
        if not getattr(self, "_transitions", None):
            raise RuntimeError("no action yet in this game")
        t = self._transitions[-1]
        describe = getattr(self.renderer, "describe", None)
        if describe is not None:
            text = describe(self.game_state, t)
        else:
            from memtab_env.drawing import describe_transition

            text = describe_transition(self.game, self.game_state, t)
        return f"player_{t.player} {text}"

    def close(self) -> None:
        self._renderer = None

    # -- copies --------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles keep the game in progress (deal, every flip so far, memory,
        rewards, whose turn, seed streams), not only the constructor arguments as
        ``EzPickle`` alone would; the renderer's cache is rebuilt when first needed."""
        state = self.__dict__.copy()
        state["_renderer"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # -- extras ------------------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent on turn (empty once the game is over)."""
        return np.flatnonzero(self.game.legal_mask(self.game_state)).tolist()

    def end_by_illegal_action(self, agent: str, action: Any, illegal_reward: float) -> None:
        """End the game because ``agent`` sent ``action`` (used by :func:`wrap`)."""
        self._illegal = {"player": self.agent_name_mapping[agent], "action": _jsonable(action)}
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_set = True
        self.rewards[agent] = float(illegal_reward)
        self._final_rewards = np.array([self.rewards[a] for a in self.possible_agents])
        self._accumulate_rewards()
        self._deads_step_first()

    def action_entries(self) -> list[dict[str, Any]]:
        """The record entries of the actions so far: player, action, revealed card, extras."""
        out = []
        codes = self.game.layout_codes(self.game_state)  # cards never move from where dealt
        for t in self._transitions:
            entry: dict[str, Any] = {"player": t.player, "action": t.action}
            if t.revealed:
                entry["card"] = codes[t.revealed[0][0]]
            entry.update(t.extra)
            out.append(entry)
        return out

    def record(self) -> dict[str, Any]:
        """The game so far as a ``memtab-record/1`` dict (see ``docs/record_format.md``)."""
        from memtab_env.record import make_record

        return make_record(self)


def _jsonable(action: Any) -> Any:
    if isinstance(action, (np.integer, np.bool_)):
        return action.item()
    if isinstance(action, (int, float, str)) or action is None:
        return action
    return repr(action)


class ActionOutOfBoundsError(IllegalActionError, AssertionError):
    """An action outside the action space. Also an ``AssertionError``, the type PettingZoo's
    ``AssertOutOfBoundsWrapper`` raises, so code written against that chain still works."""


class StandardWrapper(OrderEnforcingWrapper):
    """PettingZoo's standard chain for classic games, in one layer.

    Behaves exactly as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(raw, illegal_reward=-1)))`` (``tests/test_wrapper_equivalence.py``
    plays both side by side, illegal actions included) while checking the action mask
    without building an observation. The differences are clearer messages: an action
    outside the action space raises :class:`ActionOutOfBoundsError` (an ``AssertionError``
    like PettingZoo's) naming the allowed range, and the ending of a game by an illegal
    action is written into the game record.
    """

    def __init__(self, env: MemoryGameEnv, illegal_reward: float = -1.0) -> None:
        super().__init__(env)
        self.illegal_reward = check_finite("illegal_reward", illegal_reward)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw: MemoryGameEnv = self.env  # type: ignore[assignment]
        self._has_updated = True
        if not raw.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        space = raw.action_spaces[agent]
        if not ((action is None and dead) or space.contains(action)):
            raise ActionOutOfBoundsError(
                f"action {action!r} is not in the action space of {agent}: "
                f"an integer in [0, {space.n - 1}]" + (" or None once its game is over" if dead else "")
            )
        if dead:
            raw._was_dead_step(action)
            return
        if isinstance(action, (bool, np.bool_)):
            raise IllegalActionError(f"action must be an integer, not a bool ({action!r})")
        if not raw.game.legal_mask(raw.game_state)[int(action)]:
            EnvLogger.warn_on_illegal_move()
            raw.end_by_illegal_action(agent, action, self.illegal_reward)
            return
        raw.step(action)


def wrap(raw: MemoryGameEnv) -> StandardWrapper:
    """The ``env()`` of every game: the raw env with the standard (lean) wrapper."""
    return StandardWrapper(raw)


@dataclass(frozen=True)
class Specs:
    """The game's own rows of a classic-style module's Specs table (PettingZoo's); the
    others are the same for every game (:func:`specs_table`)."""

    max_players: int
    actions: int
    observation_shape: str
    observation_values: str
    manual_control: str = "No"


_SPECS_RULE = "=" * 20 + "  " + "=" * 43


def specs_table(module: str, specs: Specs, parallel: bool) -> str:
    """The Specs table (reStructuredText) of the classic-style module ``module``."""
    rows = {
        "Import": f"``from memtab_env import {module}``",
        "Actions": "Discrete",
        "Parallel API": "Yes" if parallel else "No",
        "Manual Control": specs.manual_control,
        "Agents": f"``agents = ['player_0', 'player_1']`` (``num_players``: 1 to {specs.max_players})",
        "Action Shape": f"Discrete({specs.actions})",
        "Action Values": f"Discrete({specs.actions})",
        "Observation Shape": specs.observation_shape,
        "Observation Values": specs.observation_values,
    }
    body = "".join(f"{key:<22}{value}\n" for key, value in rows.items())
    return f"{_SPECS_RULE}\n{body}{_SPECS_RULE}\n"


def game_module(
    spec: GameSpec, doc: str | None, module: str, specs: Specs
) -> tuple[type[MemoryGameEnv], Callable[..., StandardWrapper]]:
    """``raw_env`` and ``env`` of a game's classic-style module (``memtab_env.memtab_v0``).

    ``raw_env`` is :class:`MemoryGameEnv` bound to the game's registry row. Its docstring
    is the module's with the Specs table (:func:`specs_table`) opening its Specs section,
    followed by the sections the row decides (Registered Configurations: its ids; Version
    History: its retired versions, newest first); it is named after the module
    (``metadata["name"]``) and pickles by reference as a class written there would.
    ``env()`` is ``raw_env`` with the standard wrapper.
    """
    name = module.rsplit(".", 1)[-1]
    history = [f"* v{old + 1}: {change}" for old, change in sorted(spec.retired.items(), reverse=True)]
    heading = "\nSpecs\n-----\n"
    if heading not in (doc or ""):
        raise ValueError(f"the docstring of {module} has no Specs section to hold its table")
    doc = (doc or "").replace(heading, heading + specs_table(name, specs, _PARALLEL), 1)
    doc = doc.rstrip() + (
        "\n\nRegistered Configurations\n-------------------------\n"
        f"``{spec.pettingzoo_id}`` (PettingZoo AEC), ``{spec.env_id}`` (Gymnasium single-agent view).\n"
        "\nVersion History\n---------------\n"
        + "".join(line + "\n" for line in history)
        + "* v0: initial release (memtab-env 0.1.0).\n"
    )

    class raw_env(MemoryGameEnv):  # noqa: N801 - PettingZoo classic naming
        __doc__ = doc
        game_spec = spec
        metadata = {
            "name": name,
            "render_modes": list(RENDER_MODES),
            "is_parallelizable": _PARALLEL,
            "render_fps": 2,
        }

    def env(**kwargs: Any) -> StandardWrapper:
        return wrap(raw_env(**kwargs))

    raw_env.__module__ = env.__module__ = module
    raw_env.__qualname__, env.__qualname__ = "raw_env", "env"
    env.__doc__ = f"The {spec.base_name} AEC env with the standard wrapper (illegal action = loss)."
    return raw_env, env
