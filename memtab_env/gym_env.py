"""Gymnasium single-agent view of any game: the learner holds one seat, opponents the rest.

``gymnasium.make("MemTab-v0", opponents="greedy")``. The view is a thin layer over the
game's bare AEC env (``raw_env``), so rules, memory models, rewards and records are the
AEC env's; opponents act on the same AEC observations a PettingZoo agent would get.

Observation: ``obs_mode="flat"`` (default) is the learner's flat observation vector as a
float32 ``Box`` (for SB3 ``MlpPolicy`` and recurrent policies); ``obs_mode="dict"`` is a
one-level ``Dict`` with ``observation`` (float32), ``action_mask`` and ``remembered_mask``
(int8) for ``MultiInputPolicy``. The legal actions are in ``info["action_mask"]`` and
:meth:`SingleAgentEnv.action_masks` (sb3-contrib's ``MaskablePPO``).

Illegal actions (docs/rulings.md, "Bad input"): with ``illegal_action="penalty"`` (default)
the step returns ``illegal_penalty`` as reward, leaves the game unchanged (opponents do
not move) and sets ``info["illegal_action"] = True``; the registered step limit truncates
a learner that never stops. ``illegal_action="terminate"`` ends the episode instead: the
learner loses (reward -1, ``terminated=True``, ``info["illegal_action"] = True``, the other
seats are the winners, and the game record says so), as PettingZoo's classic ``env()``
does; an unmasked deterministic policy then cannot loop on one illegal flip until the
step limit (what SB3's ``evaluate_policy`` and rl_zoo3's ``enjoy`` see). ``illegal_action=
"raise"`` raises :class:`~memtab_env.errors.IllegalActionError`. Nothing is ever remapped.

If opponents end a game before the learner's first action (possible only through a chain
of extra turns), the view deals again from the same seed stream, with the opponents reset
for the new game, so that every episode has at least one learner step;
``info["redeals"]`` counts how often that happened. After ``MAX_REDEALS`` redeals in a row
it raises :class:`~memtab_env.errors.InvalidOptionError` (options where the learner can
never play, e.g. a one-kind Pelmanism deck with the learner second).

Games without a rule bound on their length (Pelmanism, the board game) are truncated by
the AEC env at the engine's maximum length; the view returns ``truncated=True`` then.

The mask of a finished episode: a finished game has no legal flip, but the step that ends
an episode (``terminated`` or ``truncated``) returns an action mask of all ones (in
``info["action_mask"]``, :meth:`SingleAgentEnv.action_masks` and the dict observation),
as pgx does, so that a masked categorical evaluated on a terminal observation never gets
an empty support (a vector wrapper in Gymnasium's default next-step auto-reset mode
evaluates the policy there; the action it then sends is ignored by the reset). The
action is never used: the episode is over and the next call must be ``reset()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from memtab_env.errors import (
    IllegalActionError,
    InvalidOptionError,
    MemTabError,
    NotResetError,
    check_finite,
    check_seed,
)
from memtab_env.play import tell_reveals, watching
from memtab_env.registry import game_spec, load

OBS_MODES = ("flat", "dict")
ILLEGAL_MODES = ("penalty", "raise", "terminate")
#: the learner's reward when ``illegal_action="terminate"`` ends its game
TERMINATE_REWARD = -1.0
#: redeals in a row after which reset() gives up (see the module docstring)
MAX_REDEALS = 100
#: lines of the ``rgb_array`` frame's panel that says what the flips since the last frame did
NOTE_ROWS = 6


def too_many_redeals(learner_seat: int) -> str:
    """The error of a reset that gave up after ``MAX_REDEALS`` redeals (scalar and
    batched views)."""
    return (
        f"the opponents ended {MAX_REDEALS} deals in a row before the learner's first "
        f"action (learner seat {learner_seat}); with these options the learner "
        "may never play (e.g. a one-kind Pelmanism deck, or a turn limit reached "
        "before its seat): use learner_seat=0 or other options"
    )


def opponents_per_seat(opponents: Any, count: int, single: bool, expected: str) -> list[Any]:
    """The opponent of each of the ``count`` other seats, in seat order after the learner:
    ``opponents`` itself for every seat when it is ``single``, else its items (one per
    seat). A clear error otherwise; ``expected`` says what is allowed."""
    if single:
        return [opponents] * count
    if isinstance(opponents, Sequence):
        specs = list(opponents)
        if len(specs) != count:
            raise InvalidOptionError(
                f"opponents: {count} other seat(s) need {count} opponent(s), got {len(specs)}"
            )
        return specs
    raise InvalidOptionError(f"opponents must be {expected}; got {opponents!r}")


class SingleAgentEnv(gym.Env):
    """Single-agent view of a memory game.

    Args:
        game: game name or id (``"memtab"``; set by the registration).
        opponents: an agent name for every other seat (``"random"``, ``"greedy"``, any name
            of ``agents.make``), an object with ``act(observation) -> int`` (and optionally
            ``reset(seed=None)``), or a sequence with one of those per other seat, in seat
            order after the learner.
        learner_seat: the learner's seat, or ``"random"`` for a uniformly drawn seat each
            episode.
        memory, reward, **game_options: as for the AEC env (``num_players``, ...).
        obs_mode: ``"flat"`` or ``"dict"``.
        illegal_action: ``"penalty"`` (default), ``"raise"`` or ``"terminate"`` (the
            episode ends, the learner loses: reward -1).
        illegal_penalty: reward of an illegal action in ``"penalty"`` mode.
        render_mode: ``None``, ``"human"``, ``"ansi"``, ``"rgb_array"``.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        game: str = "memtab",
        opponents: Any = "random",
        learner_seat: int | str = 0,
        memory: str = "perfect",
        reward: str = "win",
        obs_mode: str = "flat",
        illegal_action: str = "penalty",
        illegal_penalty: float = -0.1,
        render_mode: str | None = None,
        **game_options: Any,
    ) -> None:
        self.game_spec = game_spec(game)
        raw_cls = load(f"{self.game_spec.aec_module}:raw_env")
        self.aec = raw_cls(memory=memory, reward=reward, render_mode=render_mode, **game_options)
        self.game = self.aec.game
        n = self.game.num_players
        if obs_mode not in OBS_MODES:
            raise InvalidOptionError(f"obs_mode must be one of {list(OBS_MODES)}, got {obs_mode!r}")
        if illegal_action not in ILLEGAL_MODES:
            raise InvalidOptionError(
                f"illegal_action must be one of {list(ILLEGAL_MODES)}, got {illegal_action!r}"
            )
        if learner_seat != "random":
            if isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) \
                    or not 0 <= int(learner_seat) < n:
                raise InvalidOptionError(
                    f"learner_seat must be 'random' or an integer in [0, {n - 1}], got {learner_seat!r}"
                )
            learner_seat = int(learner_seat)
        self.learner_seat_option = learner_seat
        self.obs_mode = obs_mode
        self.illegal_action = illegal_action
        self.illegal_penalty = check_finite("illegal_penalty", illegal_penalty)
        self.render_mode = render_mode
        self._game_options = dict(game_options, num_players=n)
        self.opponents = self._make_opponents(opponents, n - 1)
        self.opponent_names = [getattr(o, "name", type(o).__name__) for o in self.opponents]
        self._watchers = watching(self.opponents)  # opponents told every flip's reveals

        enc = self.aec.encoder
        box = spaces.Box(low=enc.low.astype(np.float32), high=enc.high.astype(np.float32),
                         dtype=np.float32)
        na = self.game.info.num_actions
        if obs_mode == "flat":
            self.observation_space = box
        else:
            self.observation_space = spaces.Dict({
                "observation": box,
                "action_mask": spaces.Box(0, 1, shape=(na,), dtype=np.int8),
                "remembered_mask": spaces.Box(0, 1, shape=(self.game.info.num_positions,),
                                              dtype=np.int8),
            })
        self.action_space = spaces.Discrete(na)
        self.learner_seat = 0 if learner_seat == "random" else learner_seat
        self._learner_agent = self._learner
        #: rgb_array: what the flips since the last frame did (drawn under the table)
        self._notes: list[str] | None = [] if render_mode == "rgb_array" else None

    def _make_opponents(self, opponents: Any, count: int) -> list[Any]:
        specs = opponents_per_seat(
            opponents, count, isinstance(opponents, (str, bytes)) or hasattr(opponents, "act"),
            "an agent name, an object with act(observation) -> int, or a sequence of those")
        out = []
        for s in specs:
            if isinstance(s, str):
                out.append(self._named_opponent(s))
            elif hasattr(s, "act"):
                out.append(s)
            else:
                raise InvalidOptionError(f"opponent {s!r} is neither an agent name nor has act()")
        return out

    def _named_opponent(self, name: str) -> Any:
        """``agents.make(name)`` for this game, given the game options the agent's
        constructor takes (a custom ``board``, the ``deck``, ``num_players``), so a
        built-in opponent plays the same board or deck as the env."""
        import inspect

        from memtab_env import agents

        key = (self.game_spec.name, name)
        kwargs: dict[str, Any] = {}
        if key in agents.REGISTRY:
            params = inspect.signature(agents._load(agents.REGISTRY[key])).parameters
            kwargs = {k: v for k, v in self._game_options.items() if k in params}
        return agents.make(name, game=self.game_spec.name, **kwargs)

    # -- helpers -------------------------------------------------------------------------
    @property
    def _learner(self) -> str:
        return self.aec.possible_agents[self.learner_seat]

    def _over(self) -> bool:
        """Whether the game is over for the learner: ended by the rules, or truncated by
        the AEC env at the game's maximum length (Pelmanism and the board game)."""
        learner = self._learner_agent
        return bool(self.aec.terminations[learner] or self.aec.truncations[learner])

    def _reset_opponents(self) -> None:
        for o in self.opponents:
            if hasattr(o, "reset"):
                o.reset(seed=int(self.np_random.integers(2**31)))

    def _play_opponents(self) -> float:
        """Opponents act until the learner is on turn or the game is over; returns the
        learner's reward collected meanwhile.

        An opponent whose ``mask_only`` attribute is true (the built-in ``random``) reads
        nothing but the legal actions: it gets them through ``act_on_mask(mask)``, without
        an observation being built. Its moves are the same as through ``act``."""
        aec, learner, total = self.aec, self._learner_agent, 0.0
        n, seat0 = self.game.num_players, self.learner_seat + 1
        while True:
            agent = aec.agent_selection
            if agent == learner or aec.terminations[learner] or aec.truncations[learner]:
                return total
            opponent = self.opponents[(aec.agent_name_mapping[agent] - seat0) % n]
            if getattr(opponent, "mask_only", False):
                action = opponent.act_on_mask(self.game.legal_mask(aec.game_state))
            else:
                action = opponent.act(aec.observe(agent))
            aec.step(action)
            tell_reveals(aec, self._watchers)
            if self._notes is not None:
                self._notes.append(aec.describe_last())
            total += aec.rewards[learner]

    def _observe(self, over: bool = False, **extra: Any) -> tuple[Any, dict[str, Any]]:
        """The learner's observation and info (one AEC observation builds both); ``over``:
        the episode just ended, and the mask is all ones (module docstring)."""
        o = self.aec.observe(self._learner_agent)
        flat = o["observation"].astype(np.float32)
        mask = np.ones_like(o["action_mask"]) if over else o["action_mask"]
        self._mask = mask
        info = {"action_mask": mask, "learner_seat": self.learner_seat, **extra}
        if self.obs_mode == "flat":
            return flat, info
        return {"observation": flat, "action_mask": mask.copy(),
                "remembered_mask": o["remembered_mask"]}, info

    @staticmethod
    def _as_action(action: Any) -> int | None:
        """``action`` as a Python int if it is an integer (``int``, a numpy integer or a 0-d
        integer array; never a bool, a float or a string), else None: an illegal action."""
        if type(action) is int:
            return action
        if isinstance(action, np.integer) or (isinstance(action, np.ndarray) and action.shape == ()
                                              and action.dtype.kind in "iu"):
            return int(action)
        return None

    # -- Gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        # bad input is refused before anything changes (a failed reset leaves the view as it
        # was); a given layout that ends before the learner's first action is only found by
        # playing it, so the view (opponents included) is restored from a copy then
        if seed is not None:
            check_seed(seed)
        if options and "layout" in options:
            self.game.from_layout(options["layout"])
        saved = self._save() if options else None
        try:
            return self._reset(seed, options)
        except MemTabError:
            if saved is not None:
                vars(self).update(saved[0])
                vars(self.aec).update(saved[1])
            raise

    #: attributes that a reset never changes (the configuration), left out of :meth:`_save`
    _FIXED = frozenset({"aec", "game", "game_spec", "spec", "action_space", "observation_space",
                        "encoder", "_renderer", "observation_spaces", "action_spaces", "state_space",
                        "possible_agents", "agent_name_mapping", "memory_spec", "_ezpickle_args",
                        "_ezpickle_kwargs"})

    def _save(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A deep copy of everything a reset changes (the view, its opponents and its AEC
        env), or None if something in it cannot be copied."""
        import copy

        try:
            return copy.deepcopy(({k: v for k, v in vars(self).items() if k not in self._FIXED},
                                  {k: v for k, v in vars(self.aec).items() if k not in self._FIXED}))
        except Exception:  # an opponent that cannot be copied: no restore
            return None

    def _reset(self, seed: int | None, options: dict[str, Any] | None):
        super().reset(seed=seed)
        if self.learner_seat_option == "random":
            self.learner_seat = int(self.np_random.integers(self.game.num_players))
        self._learner_agent = self._learner  # the seat's agent name, for the hot paths
        self._reset_opponents()
        redeals = 0
        if self._notes is not None:
            self._notes.clear()
        self.aec.reset(seed=seed, options=options)
        self._play_opponents()
        while self._over():
            if options:
                raise InvalidOptionError("the given layout ends before the learner's first action")
            if redeals == MAX_REDEALS:
                raise InvalidOptionError(too_many_redeals(self.learner_seat))
            redeals += 1
            self._reset_opponents()  # a new game for them too: nothing carried over
            if self._notes is not None:
                self._notes.clear()
            self.aec.reset()
            self._play_opponents()
        return self._observe(redeals=redeals)

    def step(self, action: Any):
        if self.aec.game_state is None:
            raise NotResetError("step() before the first reset(): call reset() first")
        aec, learner = self.aec, self._learner_agent
        if aec.terminations[learner] or aec.truncations[learner]:
            raise gym.error.ResetNeeded("the episode is over: call reset() before step()")
        pos = self._as_action(action)
        mask = self._mask  # the learner's mask; the state has not changed since
        if pos is None or not 0 <= pos < mask.size or not mask[pos]:
            if self.illegal_action == "raise":
                self.game.apply(aec.game_state, action)  # raises the engine's precise error
                raise IllegalActionError(f"action {action!r} is not legal")
            if self.illegal_action == "terminate":
                aec.end_by_illegal_action(learner, action, TERMINATE_REWARD)
                obs, info = self._observe(over=True, illegal_action=True)
                info["scores"] = np.asarray(self.game.scores(aec.game_state)).tolist()
                info["winners"] = [p for p in range(self.game.num_players) if p != self.learner_seat]
                if self._notes is not None:
                    self._notes[:] = [f"player_{self.learner_seat} sends illegal action {action!r}: "
                                      "the game ends, a loss"]
                return obs, TERMINATE_REWARD, True, False, info
            obs, info = self._observe(illegal_action=True)
            return obs, self.illegal_penalty, False, False, info
        aec.step(pos)
        tell_reveals(aec, self._watchers)
        if self._notes is not None:
            self._notes[:] = [aec.describe_last()]
        reward = aec.rewards[learner] + self._play_opponents()
        terminated = bool(aec.terminations[learner])
        truncated = not terminated and bool(aec.truncations[learner])  # the game's length cap
        obs, info = self._observe(over=terminated or truncated, illegal_action=False)
        if terminated:
            info["scores"] = np.asarray(self.game.scores(aec.game_state)).tolist()
            # as in the record's result (the Gymnasium view never ends a game for an
            # illegal action), without building the whole record
            info["winners"] = [int(w) for w in self.game.winners(aec.game_state)]
        return obs, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions (sb3-contrib ``MaskablePPO``)."""
        return self._mask.astype(bool)

    def render(self) -> Any:
        """The AEC env's render of the game now. ``"human"``: the AEC env prints every
        frame once, as it happens (the learner's flips and the opponents'), so this prints
        the current table again only when called. ``"rgb_array"``: the table with, below
        it, what the learner's last flip and every opponent flip since then did (a video
        of the view, one frame per learner step, thus shows the opponents' flips too)."""
        frame = self.aec.render()
        if self._notes is not None and frame is not None:
            from memtab_env.drawing import draw_notes

            return draw_notes(frame, self._notes, NOTE_ROWS)
        return frame

    def record(self) -> dict[str, Any]:
        """The game so far as a record, with the learner's seat and the opponents."""
        rec = self.aec.record()
        rec["learner_seat"] = self.learner_seat
        rec["opponents"] = self.opponent_names
        return rec

    def close(self) -> None:
        self.aec.close()
