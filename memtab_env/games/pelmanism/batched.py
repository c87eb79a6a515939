"""``BatchedPelmanism``: B Pelmanism games stepped at once by compiled kernels.

The API is :class:`~memtab_env.games.memtab.batched.BatchedMemTab`'s, with what the game changes:

- decks (``deck``: ``standard``, ``colour``, ``pairs:N``, ``quartets:N``), so ``P``
  positions and ``K`` kinds vary; masks are (B, P), observations (B, ``P (3 + K) + 2 n
  + 2``) in exactly the layout of
  :class:`~memtab_env.games.pelmanism.observation.PelmanismEncoder`;
- the ``max_turns`` house rule;
- no rule bounds a Pelmanism game, so a game can also be *truncated*: when its flips
  reach ``game.info.max_game_length`` (the practical cap at which the AEC env truncates:
  100 turns per card, 10400 flips for 52 cards, unless ``max_turns`` bounds the game).
  :meth:`BatchedPelmanism.step` therefore returns ``(rewards, terminated, truncated)``
  where ``BatchedMemTab.step`` returns ``(rewards, terminated)``.

Each call to :meth:`BatchedPelmanism.step` makes one flip in every game (the action of
the seat on turn in that game). State lives in preallocated matrices (an int8 state
matrix, an int32 time matrix and a uint64 generator matrix, one row per game; the column
layout is in :mod:`memtab_env.games.pelmanism.batched_kernels`); masks, observations and step
results are written into preallocated buffers that the next call overwrites (copy what
you keep).

Rules once, the rest kept equal by a differential test
------------------------------------------------------
The rules are :mod:`memtab_env.games.pelmanism.rules_kernels`, whose kernels the scalar
engine calls on its own rows and the loops on every row of the matrices; the kernels
here add the deal, the memories, the encoder and the greedy rule over the matrices.
``tests/test_vector_pelmanism.py`` keeps the batch equal to the scalar envs: it plays
many hundreds of games of every deck kind, 1-6 players and every memory model through
this engine and the scalar engine side by side, auto-reset games included, and compares
the whole state, masks, observations, remembered masks, rewards and ends after every
flip.

Seeds: same games as the scalar env, game for game
--------------------------------------------------
Exactly the scheme of :mod:`memtab_env.games.memtab.batched`. A *slot* is one of the B places of
the batch. ``reset(seed=...)`` gives every slot a seed ``s`` (``seed + i`` for an int, or
one seed per slot); the slot then plays exactly the games of the PettingZoo env
``pelmanism_v0.raw_env`` after ``reset(seed=s)`` followed by plain ``reset()`` calls:

- the first game has the *game seed* ``s``; each later game (auto-reset, after
  termination or truncation) has the game seed ``np.random.default_rng(s).integers(2**63)``,
  drawn in turn;
- a game with game seed ``g`` is dealt ``Pelmanism.new_game(np.random.default_rng(g))``,
  i.e. ``default_rng(g).permutation(deck.cards)``;
- under ``decay:p`` its forgetting streams are those of
  ``Memory.reset(np.random.SeedSequence(g).spawn(2)[1])``, so forgetting is identical too;
- the random choices that are not the scalar env's (the ``random`` policy of
  :meth:`BatchedPelmanism.random_actions`, the opponents and random learner seats of the
  vector env) come from ``np.random.default_rng(np.random.SeedSequence(g).spawn(2)[0])``.

NumPy's ``SeedSequence`` and ``PCG64`` are re-expressed bit for bit inside the kernels
(:mod:`memtab_env.vector.rng`), and any game of the batch is replayed by the scalar env
from its game seed (:attr:`BatchedPelmanism.game_seed`).

Illegal actions are never remapped: :meth:`BatchedPelmanism.step` checks every action
first and raises :class:`~memtab_env.errors.IllegalActionError` naming the game and its
legal flips, leaving every game unchanged (as ``BatchedMemTab``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memtab_env.games.pelmanism import batched_kernels as pk
from memtab_env.games.pelmanism import rules_kernels as rk
from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import Pelmanism, PelmanismState
from memtab_env.vector.engine_base import BatchedGames, block_view, column_view


class BatchedPelmanism(BatchedGames):
    """B Pelmanism games in lockstep: one flip per game per :meth:`step`, with auto-reset.

    Args:
        num_envs: B, the number of games.
        deck: ``"standard"`` (default), ``"colour"``, ``"pairs:N"`` or ``"quartets:N"``
            (as :class:`~memtab_env.games.pelmanism.rules.Pelmanism`).
        num_players: 1 to 6.
        first_player: seat that starts every game.
        max_turns: ``None`` (the rules as written) or the house-rule turn limit.
        memory: memory model of :meth:`observations`, :meth:`remembered` and the greedy
            policy: ``"perfect"``, ``"none"``, ``"decay:p"`` or ``"window:k"``.
        reward: ``"win"`` (terminal +1/-1 shared), ``"score"`` (+1 to the seat that takes
            a pair) or ``"turns"`` (-1 to the seat whose turn ends), as
            :mod:`memtab_env.rewards`.
        autoreset: start a slot's next game in the step that ends one (default). Without
            it an ended game stays as it is and :meth:`step` ignores its action until
            :meth:`reset` restarts it.
        parallel: threads that run the kernels: ``None`` (every core from
            ``PARALLEL_THRESHOLD`` games on, else one), ``True``, ``False`` or a number.

    Attributes (arrays have one row per game; views into the state matrices):
        layout, kinds, status, owner, pairs, first, last, current, flip, turns, over: the
        fields of :class:`~memtab_env.games.pelmanism.rules.PelmanismState`. truncated_games:
        games ended at the flip cap (without auto-reset). flips: flips of each game so
        far. scores: (B, n) pairs taken. game_seed: (B,) the game seed of each game.
        final_scores, final_winners, final_game_seed, final_turns, final_flips: results
        of the games that ended in the last :meth:`step` (rows where ``terminated`` or
        ``truncated``; winners only where ``terminated``).
    """

    kernels = pk
    action_words = ("flip position", "face-down positions that may be flipped")

    def __init__(
        self,
        num_envs: int,
        deck: str = "standard",
        num_players: int = 2,
        first_player: int = 0,
        max_turns: int | None = None,
        memory: str = "perfect",
        reward: str = "win",
        autoreset: bool = True,
        parallel: bool | int | None = None,
    ) -> None:
        game = Pelmanism(deck=deck, num_players=num_players, first_player=first_player,
                         max_turns=max_turns)
        self._setup(num_envs, game, PelmanismEncoder(game), memory, reward, autoreset, parallel)
        b, n = self.num_envs, self.num_players
        p = self.num_positions = game.num_positions
        self.num_kinds = game.num_kinds
        self.max_turns = game.max_turns
        self._max_turns = 0 if self.max_turns is None else int(self.max_turns)
        self._cards = np.ascontiguousarray(game.deck.cards, dtype=np.int8)
        self._card_kind = np.ascontiguousarray(game.deck.card_kind, dtype=np.int8)
        self.state = np.zeros((b, pk.state_width(p, n, self._decay)), dtype=np.int8)
        self.times = np.zeros((b, pk.time_width(p)), dtype=np.int32)
        self._remembered = np.zeros((b, p), dtype=bool)

    def _row_args(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
        return self.state, self.times, (
            self.num_positions, self.num_kinds, self.num_players, self.first_player,
            self._max_turns, self._mem, self._window,
        ), (self._cards, self._card_kind)  # fmt: skip

    def _set_layouts(self, indices: np.ndarray, layouts: np.ndarray) -> None:
        pk.set_layouts(self.state, indices, layouts, self._card_kind)

    @property
    def max_flips(self) -> int:
        """Flips at which a game is truncated (the AEC env's ``max_game_length``)."""
        return self._max_flips

    # -- views of the state matrices ----------------------------------------------------
    def _block(self, col: int) -> np.ndarray:
        return self.state[:, col : col + self.num_positions]

    @property
    def layout(self) -> np.ndarray:
        """(B, P) card id dealt at each position."""
        return self._block(pk.HEAD)

    @property
    def kinds(self) -> np.ndarray:
        """(B, P) kind of the card at each position."""
        return self._block(pk.kinds_col(self.num_positions))

    @property
    def status(self) -> np.ndarray:
        """(B, P) 0 DOWN, 1 UP, 2 GONE."""
        return self._block(pk.status_col(self.num_positions))

    @property
    def owner(self) -> np.ndarray:
        """(B, P) -1, or the seat that took the card."""
        return self._block(pk.owner_col(self.num_positions))

    current = column_view("state", pk.CURRENT, "(B,) seat on turn.")
    flip = column_view("state", pk.FLIP, "(B,) 0 or 1: the next flip within the turn.")
    first = column_view("state", pk.FIRST, "(B,) position flipped first this turn, -1 before it.")
    last = block_view("state", rk.LAST, 2, "(B, 2) the two positions flipped in the previous turn, -1.")

    @property
    def over(self) -> np.ndarray:
        """(B,) bool: over by the rules (``PelmanismState.over``)."""
        return self.state[:, pk.OVER] == pk.OVER_RULES

    @property
    def truncated_games(self) -> np.ndarray:
        """(B,) bool: ended at the flip cap, not by the rules (only without auto-reset)."""
        return self.state[:, pk.OVER] == pk.OVER_TRUNCATED

    @property
    def ended(self) -> np.ndarray:
        """(B,) bool: over or truncated (no flip is legal)."""
        return self.state[:, pk.OVER] != 0

    @property
    def pairs(self) -> np.ndarray:
        """(B, n) pairs taken by each seat."""
        return self.state[:, pk.PAIRS : pk.PAIRS + self.num_players]

    scores = pairs

    turns = column_view("times", pk.TURNS, "(B,) turns completed, extra turns included (the solo measure).")
    flips = column_view("times", pk.CLOCK, "(B,) flips made in each game so far.")

    # -- queries ------------------------------------------------------------------------
    def remembered(self, observer: int | Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """(B, P) bool: ``Memory.remembered(observer, face_down)`` of each game
        (observer ``None`` = the seat on turn). A preallocated buffer."""
        self._check_reset()
        observers = self._observer_array(observer)
        pk.remembered_range(
            self.state, self.times, observers, self._remembered, self.num_positions,
            self.num_players, self._mem, self._window, 0, self.num_envs,
        )  # fmt: skip
        return self._remembered

    def greedy_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64: ``agents.pelmanism_agents.PelmanismGreedyAgent`` (``own_memory=True``)
        of the seat on turn in each game, acting on its observation under the engine's
        memory model (-1 for an ended game).

        Like the agent's ``act``, a call is an observation of that seat: it records the
        kinds the observation shows in the seat's greedy memory (kept per game and seat,
        cleared when a game starts), so a seat played by this policy must call it at each
        of its flips. Under ``perfect`` and ``none`` memory that makes it the
        perfect-memory greedy player."""
        self._check_reset()
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        self.run(
            pk.greedy_range, self.num_envs, self.state, self.times, out, self.num_positions,
            self.num_players, self._mem, self._window,
        )  # fmt: skip
        return out

    def get_state(self, i: int) -> PelmanismState:
        """Game ``i`` as a :class:`~memtab_env.games.pelmanism.rules.PelmanismState` (a copy),
        for the scalar engine, renderers and records."""
        self._check_reset()
        st = PelmanismState.from_rows(
            self.state[i : i + 1, : rk.state_size(self.num_positions)].copy(),
            self.times[i : i + 1, : rk.COUNTS_SIZE].copy(), self.num_players)
        st.data[0, rk.OVER] = self.state[i, rk.OVER] == pk.OVER_RULES
        st.data[0, rk.SPARE] = 0
        return st

    def _extra_buffers(self) -> tuple[np.ndarray, ...]:
        return (self._remembered,)
