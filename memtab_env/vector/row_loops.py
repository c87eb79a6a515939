"""The loops of every game's batched engine and batched single-agent view, written once
over the game's row kernels.

- The engine's loops (:class:`memtab_env.vector.engine_base.BatchedGames`): explicit
  resets, one action per game per step for the seat on turn there (rewards of every
  seat, termination, truncation at the game's cap, results, auto-reset, the next masks),
  action masks, observations, the ``random`` policy, and the legality check.
- The single-agent loop (:class:`memtab_env.vector.vector_env_base.BatchedVectorView`):
  the learner's action, then the opponents until it is on turn again, rewards,
  truncation, same-step auto-reset and the redeals of ``SingleAgentEnv.reset``.

A game's batched kernels module gives its rules as *row kernels*: njit functions over
row ``i`` of its state matrices, with the names and signatures of :data:`ROW_KERNELS`.
Every game keeps its state in two matrices, ``st`` and ``tm`` (any integer dtypes; a game
that needs one passes a zero-width ``tm``), its constants in the tuple ``G`` (what the
hot kernels read: player count, memory model, sizes, a board) and the constants only a
deal needs in the tuple ``A`` (a deck). The loops pass them through untouched, so every
game keeps its own layout. The matrices are arguments of their own, and the rules'
transition is called directly: ``row_flip`` is the rules (a game may pass its rules
kernel itself) and ``row_reveal``, called after it, the memory models' bookkeeping, so
neither has to wrap the other. numba keeps each array taken out of a tuple, and each
array passed through a nested inlined call, reference counted, which costs up to twice
the price of a flip. ``p_forget`` is the decay probability or ``None``,
as everywhere in :mod:`memtab_env.vector.batch_kernels`.

:func:`compile_row_loops` compiles the loops for one game: the functions below are the
loops' source, and each game gets its own copy of them whose global names resolve to
that game's row kernels (a function built from the same code object over the game's
namespace). numba then compiles the row kernels into the loops, inlined, exactly as if
the loops were written out in the game's module, and caches them on disk under names of
their own per game, beside this module (numba cannot cache a closure over other
kernels: it hashes the closure's cells, and a kernel pickles with a fresh id in every
process). A loop compiles when first called, so a game pays only for the loops it uses.
"""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from memtab_env.vector import batch_kernels as _batch_module
from memtab_env.vector.batch_kernels import (
    OPP_GREEDY,
    R_AUX,
    R_GAME_SEED,
    REWARD_SCORE,
    REWARD_TURNS,
    REWARD_WIN,
    opponent_stream,
    reset_opponents,
    seat_learner,
    seed_view,
    win_reward,
)
from memtab_env.vector.numba_cache import invalidate_stale_cache

Array = np.ndarray

#: what a game's kernels module defines for the loop: name -> signature and meaning
ROW_KERNELS = {
    "row_reset": "(st, tm, rg, i, seed, G, A, p_forget): explicit reset of slot i: its seed "
                 "stream and its first game, dealt with game seed ``seed``",
    "row_next_game": "(st, tm, rg, i, G, A, p_forget): the slot's next game (auto-reset, "
                     "redeal)",
    "row_flip": "(st, tm, i, a, G) -> bool: the rules' transition: apply the legal action "
                "``a`` of the seat on turn; True when it ended that seat's turn",
    "row_reveal": "(st, tm, rg, i, a, actor, G, p_forget): after ``row_flip``, what the "
                  "memory models keep of seat ``actor``'s action ``a`` (clocks, decay bits)",
    "row_truncate": "(st, tm, i): end the game by the flip cap (``row_ended`` is 2 after it)",
    "row_ended": "(st, tm, i) -> int: 0 live, 1 over by the rules, 2 truncated by a cap",
    "row_turn": "(st, tm, i) -> int: the seat on turn",
    "row_seat": "(st, tm, i) -> int: the learner's seat, kept in the row",
    "row_set_seat": "(st, tm, i, seat): keep the learner's seat",
    "row_score": "(st, tm, i, seat, G) -> int: the seat's score (the ``score`` reward's)",
    "row_result_bits": "(st, tm, i, G) -> int: a finished game's result, bit 1 + seat for "
                       "each winner (bit 0 the game's own flag)",
    "row_greedy": "(st, tm, i, scratch, G) -> int: the ``greedy`` agent's action for the "
                  "seat on turn",
    "row_random": "(st, tm, vg, i, column, scratch, G) -> int: the ``random`` agent's "
                  "action, drawn from the generator at ``vg[i, column:]`` (the view's, or "
                  "the engine's own matrix for its random policy)",
    "row_encode": "(st, tm, i, observer, out, G): ``observer``'s observation into ``out[i]``",
    "row_mask": "(st, tm, i, masks, G): the legal actions of the seat on turn into "
                "``masks[i]`` (all zeros once the game has ended)",
    "row_flips": "(st, tm, i) -> int: flips (reveals) of the game so far",
    "row_turns": "(st, tm, i) -> int: turns of the game so far, as the game counts them",
}  # fmt: skip

OVER_RULES = 1
OVER_TRUNCATED = 2


def _unbound(*args: Any) -> Any:
    raise TypeError(
        "the loops' source runs only as compiled by compile_row_loops, over a game's row "
        "kernels"
    )


# the names the loops' source calls; compile_row_loops resolves them to a game's kernels
row_reset = row_next_game = row_flip = row_reveal = row_ended = row_turn = row_seat = row_set_seat = _unbound
row_score = row_result_bits = row_greedy = row_random = row_encode = row_mask = _unbound
row_flips = row_turns = row_truncate = _unbound


def column_row_kernels(over: int, current: int, seat: int) -> tuple[Any, ...]:
    """``row_ended``, ``row_truncate``, ``row_turn``, ``row_seat`` and ``row_set_seat`` for
    a game that keeps the end flag (0 live, 1 over, 2 truncated), the seat on turn and the
    learner's seat in columns ``over``, ``current`` and ``seat`` of ``st`` (compile-time
    constants of the loops they inline into)."""

    @njit(inline="always")
    def row_ended(st: Array, tm: Array, i: int) -> int:
        return np.int64(st[i, over])

    @njit(inline="always")
    def row_truncate(st: Array, tm: Array, i: int) -> None:
        st[i, over] = OVER_TRUNCATED

    @njit(inline="always")
    def row_turn(st: Array, tm: Array, i: int) -> int:
        return np.int64(st[i, current])

    @njit(inline="always")
    def row_seat(st: Array, tm: Array, i: int) -> int:
        return np.int64(st[i, seat])

    @njit(inline="always")
    def row_set_seat(st: Array, tm: Array, i: int, learner: int) -> None:
        st[i, seat] = learner

    return row_ended, row_truncate, row_turn, row_seat, row_set_seat


def _column_reader(matrix: str, col: int) -> Any:
    """A row kernel ``(st, tm, i) -> int`` reading column ``col`` of ``st`` or ``tm``."""
    if matrix == "st":
        @njit(inline="always")
        def read(st: Array, tm: Array, i: int) -> int:
            return np.int64(st[i, col])
    elif matrix == "tm":
        @njit(inline="always")
        def read(st: Array, tm: Array, i: int) -> int:
            return np.int64(tm[i, col])
    else:
        raise ValueError(f"matrix must be 'st' or 'tm', got {matrix!r}")
    return read


def counter_row_kernels(flips: tuple[str, int], turns: tuple[str, int]) -> tuple[Any, Any]:
    """``row_flips`` and ``row_turns`` for a game that counts its flips (reveals) and its
    turns (as the game counts them) in one column each: ``("st", column)`` or
    ``("tm", column)``, the matrix and the column."""
    return _column_reader(*flips), _column_reader(*turns)


# =====================================================================================
# the engine's loops (compiled per game by compile_row_loops)
# =====================================================================================
def reset_range(st: Array, tm: Array, rg: Array, indices: Array, seeds: Array, G: tuple, A: tuple,
                p_forget: float | None, lo: int, hi: int) -> None:
    """Explicit reset of the slots ``indices[lo:hi]`` with ``seeds[lo:hi]``."""
    for j in range(lo, hi):
        row_reset(st, tm, rg, indices[j], seeds[j], G, A, p_forget)


def first_illegal(st: Array, tm: Array, masks: Array, actions: Array) -> int:
    """Index of the first game whose action is not in its mask (every action is illegal
    in a game that has ended: its mask is all zeros), or -1."""
    num_actions = masks.shape[1]
    for i in range(masks.shape[0]):
        a = actions[i]
        if not (0 <= a < num_actions and masks[i, a] != 0):
            return i
    return -1


def first_illegal_live(st: Array, tm: Array, masks: Array, actions: Array) -> int:
    """Index of the first game not ended whose action is not in its mask, or -1 (the
    actions of ended games are ignored)."""
    num_actions = masks.shape[1]
    for i in range(masks.shape[0]):
        a = actions[i]
        if row_ended(st, tm, i) == 0 and not (0 <= a < num_actions and masks[i, a] != 0):
            return i
    return -1


def step_range(st: Array, tm: Array, rg: Array, actions: Array, rewards: Array, terminated: Array,
               truncated: Array, final_scores: Array, final_bits: Array, final_seed: Array,
               final_turns: Array, final_flips: Array, masks: Array, scheme: int,
               autoreset: bool, max_flips: int, G: tuple, A: tuple, p_forget: float | None,
               lo: int, hi: int) -> None:
    """One action in each game ``lo..hi-1`` not ended (actions already checked legal),
    then the game's action mask into ``masks`` (fused: the row is in cache).

    ``rewards[i, seat]`` under the reward ``scheme``: ``win`` terminal shares, ``score``
    the change of the acting seat's score, ``turns`` -1 to the seat whose turn the action
    ended. A game ends when the rules end it (``terminated``) or, not over, when its flips
    reach ``max_flips`` or the game's own cap (``truncated``, as the AEC env); its final
    scores, result bits (terminated only), game seed, turns and flips are copied out
    before ``autoreset`` starts the slot's next game; without it an ended game is left as
    it is (its action ignored).
    """
    n = rewards.shape[1]
    for i in range(lo, hi):
        terminated[i] = False
        truncated[i] = False
        for j in range(n):
            rewards[i, j] = 0.0
        if row_ended(st, tm, i) == 0:
            actor = np.int64(row_turn(st, tm, i))
            before = np.int64(row_score(st, tm, i, actor, G)) if scheme == REWARD_SCORE else 0
            ended_turn = row_flip(st, tm, i, actions[i], G)
            row_reveal(st, tm, rg, i, actions[i], actor, G, p_forget)
            if row_ended(st, tm, i) == 0 and row_flips(st, tm, i) >= max_flips:
                row_truncate(st, tm, i)
            if scheme == REWARD_SCORE:
                rewards[i, actor] = np.int64(row_score(st, tm, i, actor, G)) - before
            elif scheme == REWARD_TURNS and ended_turn:
                rewards[i, actor] = -1.0
            ended = row_ended(st, tm, i)
            if ended != 0:
                bits = 0
                if ended == OVER_RULES:
                    terminated[i] = True
                    bits = row_result_bits(st, tm, i, G)
                    if scheme == REWARD_WIN:
                        for j in range(n):
                            rewards[i, j] = win_reward(bits, j, n)
                else:
                    truncated[i] = True
                for j in range(n):
                    final_scores[i, j] = row_score(st, tm, i, j, G)
                final_bits[i] = bits
                final_seed[i] = rg[i, R_GAME_SEED]
                final_turns[i] = row_turns(st, tm, i)
                final_flips[i] = row_flips(st, tm, i)
                if autoreset:
                    row_next_game(st, tm, rg, i, G, A, p_forget)
        row_mask(st, tm, i, masks, G)


def masks_range(st: Array, tm: Array, masks: Array, G: tuple, lo: int, hi: int) -> None:
    """The legal actions of the seat on turn in games ``lo..hi-1`` (zeros once ended)."""
    for i in range(lo, hi):
        row_mask(st, tm, i, masks, G)


def encode_range(st: Array, tm: Array, observers: Array, out: Array, G: tuple, lo: int, hi: int) -> None:
    """Observation rows of games ``lo..hi-1``; observer -1 = the seat on turn."""
    for i in range(lo, hi):
        o = observers[i] if observers[i] >= 0 else np.int64(row_turn(st, tm, i))
        row_encode(st, tm, i, o, out, G)


def random_range(st: Array, tm: Array, rg: Array, out: Array, scratch: Array, G: tuple, lo: int,
                 hi: int) -> None:
    """The ``random`` policy's action in games ``lo..hi-1``, from each game's auxiliary
    stream (-1 once ended); ``scratch`` is a (B, A) int8 buffer it may use."""
    for i in range(lo, hi):
        out[i] = row_random(st, tm, rg, i, R_AUX, scratch, G) if row_ended(st, tm, i) == 0 else -1


# =====================================================================================
# the single-agent loop (compiled per game by compile_row_loops)
# =====================================================================================
def play_opponents(st: Array, tm: Array, rg: Array, vg: Array, i: int, scratch: Array,
                   opponents: Array, max_flips: int, G: tuple, p_forget: float | None) -> None:
    """Opponents act until the learner is on turn or the game has ended.
    ``opponents[k]`` is the policy code of the seat ``k`` places after the learner
    (``n`` codes, index 0 unused); ``scratch`` is a (B, A) int8 buffer they may use."""
    n = opponents.shape[0]
    seat = np.int64(row_seat(st, tm, i))
    while row_ended(st, tm, i) == 0 and np.int64(row_turn(st, tm, i)) != seat:
        k = (np.int64(row_turn(st, tm, i)) - seat + n) % n
        if opponents[k] == OPP_GREEDY:
            a = row_greedy(st, tm, i, scratch, G)
        else:
            a = row_random(st, tm, vg, i, opponent_stream(k), scratch, G)
        actor = np.int64(row_turn(st, tm, i))
        row_flip(st, tm, i, a, G)
        row_reveal(st, tm, rg, i, a, actor, G, p_forget)
        if row_ended(st, tm, i) == 0 and row_flips(st, tm, i) >= max_flips:
            row_truncate(st, tm, i)


def start_episode(st: Array, tm: Array, rg: Array, vg: Array, redeals: Array, i: int,
                  scratch: Array, seat_mode: int, opponents: Array, max_redeals: int,
                  max_flips: int, G: tuple, A: tuple, p_forget: float | None) -> None:
    """``SingleAgentEnv.reset`` in the fresh game of slot ``i``: seat the learner, reset
    the opponents and let them play up to its first turn. A game that they end before
    the learner's first action is set aside and the slot's next game is dealt, with the
    opponents reset again; ``redeals[i]`` counts those deals. After ``max_redeals`` it
    stops with ``redeals[i] = max_redeals + 1``, which the vector env reports as the
    scalar view's error."""
    n = opponents.shape[0]
    row_set_seat(st, tm, i, seat_learner(vg, i, seat_mode, n))
    redeals[i] = 0
    while True:
        reset_opponents(vg, i, opponents, n)
        play_opponents(st, tm, rg, vg, i, scratch, opponents, max_flips, G, p_forget)
        if row_ended(st, tm, i) == 0:
            return
        if redeals[i] == max_redeals:
            redeals[i] = max_redeals + 1
            return
        redeals[i] += 1
        row_next_game(st, tm, rg, i, G, A, p_forget)


def venv_reset_range(st: Array, tm: Array, rg: Array, vg: Array, seeds: Array, steps: Array,
                     obs: Array, masks: Array, redeals: Array, seat_mode: int, opponents: Array,
                     max_redeals: int, max_flips: int, G: tuple, A: tuple, p_forget: float | None,
                     lo: int, hi: int) -> None:
    """Reset slots ``lo..hi-1`` with their seeds, seat the learners, let the opponents
    play up to the learner's turn, write its observations and masks."""
    for i in range(lo, hi):
        row_reset(st, tm, rg, i, seeds[i], G, A, p_forget)
        seed_view(vg, i, seeds[i])
        start_episode(st, tm, rg, vg, redeals, i, masks, seat_mode, opponents, max_redeals,
                      max_flips, G, A, p_forget)
        steps[i] = 0
        row_encode(st, tm, i, row_seat(st, tm, i), obs, G)
        row_mask(st, tm, i, masks, G)


def venv_step_range(st: Array, tm: Array, rg: Array, vg: Array, actions: Array, steps: Array,
                    obs: Array, masks: Array, rewards: Array, terminated: Array, truncated: Array,
                    illegal: Array, final_obs: Array, final_scores: Array, final_bits: Array,
                    final_seed: Array, final_seat: Array, final_turns: Array,
                    final_flips: Array, redeals: Array, seat_mode: int, opponents: Array,
                    max_steps: int, penalty: float, scheme: int, max_redeals: int,
                    max_flips: int, G: tuple, A: tuple, p_forget: float | None, lo: int,
                    hi: int) -> None:
    """One learner step in envs ``lo..hi-1``, with same-step auto-reset.

    An action outside the learner's mask (``masks[i]``, written by the previous call)
    costs ``penalty`` and changes nothing. A legal one is applied, then the opponents
    act until the learner is on turn again or the game has ended. Reward (``scheme``):
    the learner's ``win`` share when the rules end the game, its ``score`` change over
    the step, or ``turns`` -1 when its action ended its turn. The episode terminates
    when the rules end the game and is truncated after ``max_steps`` learner steps (as
    Gymnasium's ``TimeLimit``, even on a terminal step) or at the game's own cap. Then
    the final observation and results (scores, result bits, game seed, seat, turns,
    flips) are written out and the slot's next game starts. Last, the learner's
    observation and mask are written.
    """
    n = opponents.shape[0]
    num_actions = masks.shape[1]
    for i in range(lo, hi):
        a = actions[i]
        seat = np.int64(row_seat(st, tm, i))
        reward = 0.0
        if 0 <= a < num_actions and masks[i, a] != 0:
            illegal[i] = False
            before = np.int64(row_score(st, tm, i, seat, G))
            ended_turn = row_flip(st, tm, i, a, G)
            row_reveal(st, tm, rg, i, a, seat, G, p_forget)
            if row_ended(st, tm, i) == 0 and row_flips(st, tm, i) >= max_flips:
                row_truncate(st, tm, i)
            play_opponents(st, tm, rg, vg, i, masks, opponents, max_flips, G, p_forget)
            if scheme == REWARD_SCORE:
                reward = float(np.int64(row_score(st, tm, i, seat, G)) - before)
            elif scheme == REWARD_TURNS and ended_turn:
                reward = -1.0
            if scheme == REWARD_WIN and row_ended(st, tm, i) == OVER_RULES:
                reward = win_reward(row_result_bits(st, tm, i, G), seat, n)
        else:
            illegal[i] = True
            reward = penalty
        steps[i] += 1
        ended = row_ended(st, tm, i)
        term = ended == OVER_RULES
        trunc = steps[i] >= max_steps or (ended != 0 and not term)
        rewards[i] = reward
        terminated[i] = term
        truncated[i] = trunc
        if term or trunc:
            row_encode(st, tm, i, seat, final_obs, G)
            for j in range(n):
                final_scores[i, j] = row_score(st, tm, i, j, G)
            final_bits[i] = row_result_bits(st, tm, i, G) if term else 0
            final_seed[i] = rg[i, R_GAME_SEED]
            final_seat[i] = seat
            final_turns[i] = row_turns(st, tm, i)
            final_flips[i] = row_flips(st, tm, i)
            row_next_game(st, tm, rg, i, G, A, p_forget)
            start_episode(st, tm, rg, vg, redeals, i, masks, seat_mode, opponents, max_redeals,
                          max_flips, G, A, p_forget)
            steps[i] = 0
        row_encode(st, tm, i, row_seat(st, tm, i), obs, G)
        row_mask(st, tm, i, masks, G)


_LOOPS = (reset_range, first_illegal, first_illegal_live, step_range, masks_range,
          encode_range, random_range, play_opponents, start_episode, venv_reset_range,
          venv_step_range)
#: helpers of the single-agent loop, per game; the other loops scan games, without the GIL
_INNER = ("play_opponents", "start_episode")


def compile_row_loops(
    game_namespace: dict[str, Any], game: str, modules: Sequence[types.ModuleType]
) -> types.SimpleNamespace:
    """The engine's loops and the single-agent loop, compiled over one game's row kernels.

    Args:
        game_namespace: the ``globals()`` of the game's batched kernels module, which
            defines every name of :data:`ROW_KERNELS` as an njit function.
        game: the game's short name (names the loops' cache files).
        modules: the modules whose code the row kernels compile in (the game's kernels
            module among them): an edit of one of them drops the loops' cached code.

    Returns:
        A namespace with the loops, by name: the ``*_range`` ones run over slices of the
        batch (:class:`memtab_env.vector.engine_base.KernelRunner`).
    """
    missing = [name for name in ROW_KERNELS if name not in game_namespace]
    if missing:
        raise TypeError(
            f"{game_namespace.get('__name__')!r} lacks the row kernel(s) {missing} that the "
            f"batched loops call; a game's kernels module defines: {sorted(ROW_KERNELS)}"
        )
    namespace: dict[str, Any] = {name: game_namespace[name] for name in ROW_KERNELS}
    namespace.update({
        name: globals()[name]
        for name in ("np", "OPP_GREEDY", "R_AUX", "R_GAME_SEED", "REWARD_SCORE", "REWARD_TURNS",
                     "REWARD_WIN", "OVER_RULES", "opponent_stream", "reset_opponents",
                     "seat_learner", "seed_view", "win_reward")
    })  # fmt: skip
    namespace["__builtins__"] = builtins
    namespace["__name__"] = game_namespace["__name__"]
    kernels: dict[str, Any] = {"__name__": namespace["__name__"]}
    for source in _LOOPS:
        fn = types.FunctionType(source.__code__, namespace, source.__name__, source.__defaults__)
        fn.__qualname__ = f"{source.__name__}_{game}"  # the cache file's name
        fn.__module__ = namespace["__name__"]
        fn.__doc__ = source.__doc__
        kernel = njit(cache=True, nogil=source.__name__ not in _INNER)(fn)
        namespace[source.__name__] = kernel
        kernels[source.__name__] = kernel
    invalidate_stale_cache(kernels, [*modules, _batch_module, sys.modules[__name__]],
                           f"row_loops_{game}.deps")
    del kernels["__name__"]
    return types.SimpleNamespace(**kernels)
