"""The single-agent loop of every game's batched view, written once over the game's row
kernels: the learner's action, then the opponents until it is on turn again, rewards,
truncation, same-step auto-reset and the redeals of ``SingleAgentEnv.reset``.

A game's batched kernels module gives its rules as *row kernels*: njit functions over
row ``i`` of its state matrices, with the names and signatures of :data:`ROW_KERNELS`.
``S`` is the tuple of the game's state matrices and ``G`` the tuple of its constants
(deck, board, player count, memory model...); the loop passes both through untouched,
so every game keeps its own state layout. ``p_forget`` is the decay probability or
``None``, as everywhere in :mod:`memtab_env.vector.batch_kernels`.

:func:`single_agent_kernels` compiles the loop for one game: the functions below are
the loop's source, and each game gets its own copy of them whose global names resolve
to that game's row kernels (a function built from the same code object over the game's
namespace). numba then compiles the row kernels into the loop, inlined, exactly as if
the loop were written out in the game's module, and caches it on disk under a name of
its own per game (numba cannot cache a closure over other kernels: it hashes the
closure's cells, and a kernel pickles with a fresh id in every process).
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
    "row_reset": "(S, rg, i, seed, G, p_forget): explicit reset of slot i: its seed "
                 "stream and its first game, dealt with game seed ``seed``",
    "row_next_game": "(S, rg, i, G, p_forget): the slot's next game (auto-reset, redeal)",
    "row_flip": "(S, rg, i, a, G, p_forget) -> bool: apply the legal action ``a`` of the "
                "seat on turn (and the game's own caps); True when it ended that seat's turn",
    "row_ended": "(S, i) -> int: 0 live, 1 over by the rules, 2 truncated by a cap",
    "row_turn": "(S, i) -> int: the seat on turn",
    "row_seat": "(S, i) -> int: the learner's seat, kept in the row",
    "row_set_seat": "(S, i, seat): keep the learner's seat",
    "row_score": "(S, i, seat, G) -> int: the seat's score (the ``score`` reward's)",
    "row_result_bits": "(S, i, G) -> int: a finished game's result, bit 1 + seat for "
                       "each winner (bit 0 the game's own flag)",
    "row_greedy": "(S, i, scratch, G) -> int: the ``greedy`` agent's action for the seat "
                  "on turn",
    "row_random": "(S, vg, i, column, scratch, G) -> int: the ``random`` agent's action, "
                  "drawn from the generator at ``vg[i, column:]``",
    "row_encode": "(S, i, observer, out, G): ``observer``'s observation into ``out[i]``",
    "row_mask": "(S, i, masks, G): the legal actions of the seat on turn into ``masks[i]``",
    "row_flips": "(S, i) -> int: flips (reveals) of the game so far",
    "row_turns": "(S, i) -> int: turns of the game so far, as the game counts them",
}  # fmt: skip

OVER_RULES = 1


def _unbound(*args: Any) -> Any:
    raise TypeError(
        "the single-agent loop's source runs only as compiled by single_agent_kernels, over "
        "a game's row kernels"
    )


# the names the loop's source calls; single_agent_kernels resolves them to a game's kernels
row_reset = row_next_game = row_flip = row_ended = row_turn = row_seat = row_set_seat = _unbound
row_score = row_result_bits = row_greedy = row_random = row_encode = row_mask = _unbound
row_flips = row_turns = _unbound


# =====================================================================================
# the loop's source (compiled per game by single_agent_kernels)
# =====================================================================================
def play_opponents(S: tuple, rg: Array, vg: Array, i: int, scratch: Array, opponents: Array,
                   G: tuple, p_forget: float | None) -> None:
    """Opponents act until the learner is on turn or the game has ended.
    ``opponents[k]`` is the policy code of the seat ``k`` places after the learner
    (``n`` codes, index 0 unused); ``scratch`` is a (B, A) int8 buffer they may use."""
    n = opponents.shape[0]
    seat = np.int64(row_seat(S, i))
    while row_ended(S, i) == 0 and np.int64(row_turn(S, i)) != seat:
        k = (np.int64(row_turn(S, i)) - seat + n) % n
        if opponents[k] == OPP_GREEDY:
            a = row_greedy(S, i, scratch, G)
        else:
            a = row_random(S, vg, i, opponent_stream(k), scratch, G)
        row_flip(S, rg, i, a, G, p_forget)


def start_episode(S: tuple, rg: Array, vg: Array, redeals: Array, i: int, scratch: Array,
                  seat_mode: int, opponents: Array, max_redeals: int, G: tuple,
                  p_forget: float | None) -> None:
    """``SingleAgentEnv.reset`` in the fresh game of slot ``i``: seat the learner, reset
    the opponents and let them play up to its first turn. A game that they end before
    the learner's first action is set aside and the slot's next game is dealt, with the
    opponents reset again; ``redeals[i]`` counts those deals. After ``max_redeals`` it
    stops with ``redeals[i] = max_redeals + 1``, which the vector env reports as the
    scalar view's error."""
    n = opponents.shape[0]
    row_set_seat(S, i, seat_learner(vg, i, seat_mode, n))
    redeals[i] = 0
    while True:
        reset_opponents(vg, i, opponents, n)
        play_opponents(S, rg, vg, i, scratch, opponents, G, p_forget)
        if row_ended(S, i) == 0:
            return
        if redeals[i] == max_redeals:
            redeals[i] = max_redeals + 1
            return
        redeals[i] += 1
        row_next_game(S, rg, i, G, p_forget)


def venv_reset_range(S: tuple, rg: Array, vg: Array, seeds: Array, steps: Array, obs: Array,
                     masks: Array, redeals: Array, seat_mode: int, opponents: Array,
                     max_redeals: int, G: tuple, p_forget: float | None, lo: int, hi: int) -> None:
    """Reset slots ``lo..hi-1`` with their seeds, seat the learners, let the opponents
    play up to the learner's turn, write its observations and masks."""
    for i in range(lo, hi):
        row_reset(S, rg, i, seeds[i], G, p_forget)
        seed_view(vg, i, seeds[i])
        start_episode(S, rg, vg, redeals, i, masks, seat_mode, opponents, max_redeals, G,
                      p_forget)
        steps[i] = 0
        row_encode(S, i, row_seat(S, i), obs, G)
        row_mask(S, i, masks, G)


def venv_step_range(S: tuple, rg: Array, vg: Array, actions: Array, steps: Array, obs: Array,
                    masks: Array, rewards: Array, terminated: Array, truncated: Array,
                    illegal: Array, final_obs: Array, final_scores: Array, final_bits: Array,
                    final_seed: Array, final_seat: Array, final_turns: Array,
                    final_flips: Array, redeals: Array, seat_mode: int, opponents: Array,
                    max_steps: int, penalty: float, scheme: int, max_redeals: int, G: tuple,
                    p_forget: float | None, lo: int, hi: int) -> None:
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
    A = masks.shape[1]
    for i in range(lo, hi):
        a = actions[i]
        seat = np.int64(row_seat(S, i))
        reward = 0.0
        if 0 <= a < A and masks[i, a] != 0:
            illegal[i] = False
            before = np.int64(row_score(S, i, seat, G))
            ended_turn = row_flip(S, rg, i, a, G, p_forget)
            play_opponents(S, rg, vg, i, masks, opponents, G, p_forget)
            if scheme == REWARD_SCORE:
                reward = float(np.int64(row_score(S, i, seat, G)) - before)
            elif scheme == REWARD_TURNS and ended_turn:
                reward = -1.0
            if scheme == REWARD_WIN and row_ended(S, i) == OVER_RULES:
                reward = win_reward(row_result_bits(S, i, G), seat, n)
        else:
            illegal[i] = True
            reward = penalty
        steps[i] += 1
        ended = row_ended(S, i)
        term = ended == OVER_RULES
        trunc = steps[i] >= max_steps or (ended != 0 and not term)
        rewards[i] = reward
        terminated[i] = term
        truncated[i] = trunc
        if term or trunc:
            row_encode(S, i, seat, final_obs, G)
            for j in range(n):
                final_scores[i, j] = row_score(S, i, j, G)
            final_bits[i] = row_result_bits(S, i, G) if term else 0
            final_seed[i] = rg[i, R_GAME_SEED]
            final_seat[i] = seat
            final_turns[i] = row_turns(S, i)
            final_flips[i] = row_flips(S, i)
            row_next_game(S, rg, i, G, p_forget)
            start_episode(S, rg, vg, redeals, i, masks, seat_mode, opponents, max_redeals, G,
                          p_forget)
            steps[i] = 0
        row_encode(S, i, row_seat(S, i), obs, G)
        row_mask(S, i, masks, G)


_LOOP = (play_opponents, start_episode, venv_reset_range, venv_step_range)
#: the loop functions the vector env calls: they loop over games and release the GIL
_RANGE_KERNELS = ("venv_reset_range", "venv_step_range")


def single_agent_kernels(
    game_namespace: dict[str, Any], game: str, modules: Sequence[types.ModuleType]
) -> types.SimpleNamespace:
    """The single-agent loop compiled over one game's row kernels.

    Args:
        game_namespace: the ``globals()`` of the game's batched kernels module, which
            defines every name of :data:`ROW_KERNELS` as an njit function.
        game: the game's short name (names the loop's cache files).
        modules: the modules whose code the row kernels compile in (the game's kernels
            module among them): an edit of one of them drops the loop's cached code.

    Returns:
        A namespace with ``venv_reset_range`` and ``venv_step_range`` (run over slices
        of the batch by :class:`memtab_env.vector.engine_base.KernelRunner`), and
        ``play_opponents`` and ``start_episode``.
    """
    missing = [name for name in ROW_KERNELS if name not in game_namespace]
    if missing:
        raise TypeError(
            f"{game_namespace.get('__name__')!r} lacks the row kernel(s) {missing} that the "
            f"single-agent loop calls; a game's kernels module defines: {sorted(ROW_KERNELS)}"
        )
    namespace: dict[str, Any] = {name: game_namespace[name] for name in ROW_KERNELS}
    namespace.update({
        name: globals()[name]
        for name in ("np", "OPP_GREEDY", "R_GAME_SEED", "REWARD_SCORE", "REWARD_TURNS",
                     "REWARD_WIN", "OVER_RULES", "opponent_stream", "reset_opponents",
                     "seat_learner", "seed_view", "win_reward")
    })  # fmt: skip
    namespace["__builtins__"] = builtins
    namespace["__name__"] = game_namespace["__name__"]
    kernels: dict[str, Any] = {"__name__": namespace["__name__"]}
    for source in _LOOP:
        fn = types.FunctionType(source.__code__, namespace, source.__name__, source.__defaults__)
        fn.__qualname__ = f"{source.__name__}_{game}"  # the cache file's name
        fn.__module__ = namespace["__name__"]
        fn.__doc__ = source.__doc__
        kernel = njit(cache=True, nogil=source.__name__ in _RANGE_KERNELS)(fn)
        namespace[source.__name__] = kernel
        kernels[source.__name__] = kernel
    invalidate_stale_cache(kernels, [*modules, _batch_module, sys.modules[__name__]],
                           f"single_agent_{game}.deps")
    del kernels["__name__"]
    return types.SimpleNamespace(**kernels)
