"""Baseline agents for Memory: The Board Game: ``random`` and ``greedy``.

Both follow the agent protocol of :mod:`agents` (``reset(seed=None)``, ``act(observation)
-> int``), where ``observation`` is the AEC observation dict of the acting player
(``"observation"``: the flat int8 vector of
:class:`memtab_env.games.memory_board.observation.MemoryBoardEncoder`, ``"action_mask"``,
``"remembered_mask"``). Action ids: :mod:`memtab_env.games.memory_board.rules`.

``greedy`` is deterministic and reads only its observations. Its memory: the picture of
every face-down card it has ever been shown (cards never move, so a picture once seen at
a space stays true while the card lies there); under the ``perfect`` memory model that is
every card ever revealed. Its policy, with spaces compared by number:

second flip
    the lowest face-down space known to hold the picture of the card face up now; else
    the lowest face-down space not known; else the lowest face-down space.
turn start, main play
    1. a *known pair* (two face-down spaces known to hold the same picture): flip the
       lowest space that belongs to a known pair (its twin follows at the second flip);
    2. a *worthwhile return*: let ``best`` be the largest group of collected cards it can
       place now (connected by sides, on free spaces of their landscapes, at most 4) and
       ``trunk(k)`` the trunk a return of ``k`` cards earns with the supply as it is; if
       ``trunk(best)`` is the largest trunk left in the supply (a 4-trunk while 4-trunks
       last, ...) and not 0, return: place the first space of that group;
    3. otherwise flip the lowest face-down space not known (the lowest face-down space
       if every card is known).
returning
    place the next space of the group (the smallest group that earns ``trunk(best)``;
    the group search is deterministic, so it continues the group it started), or end the
    return once it is reached.
final round
    return as above if it earns a trunk (> 0); otherwise pass (collected cards break
    ties, so it keeps them).
children's returns
    return as above (passing is not allowed there).

A group is searched by extending connected sets of free spaces from the lowest seed
space up, within the collected cards of each landscape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.boards import MAX_RETURN, Board, load_board
from memtab_env.errors import InvalidOptionError
from memtab_env.games.memory_board.observation import MemoryBoardEncoder
from memtab_env.games.memory_board.rules import MemoryBoard

# status one-hot columns and phase / stage indices of the encoder
_DOWN, _UP, _FREE = 0, 1, 2
_P_CHOOSE, _P_FLIP2 = 0, 1
_S_MAIN, _S_FINAL, _S_CHILDREN = 0, 1, 2


def _mask(observation: Any) -> np.ndarray:
    if isinstance(observation, dict) and "action_mask" in observation:
        return np.asarray(observation["action_mask"]).astype(bool)
    raise InvalidOptionError(
        "a memory_board agent needs the AEC observation dict with 'observation' and "
        f"'action_mask'; got {type(observation).__name__}"
    )


class MemoryBoardRandomAgent:
    """Uniform over the legal actions (the observation's ``action_mask``); seeded by reset."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Any) -> int:
        legal = np.flatnonzero(_mask(observation))
        if legal.size == 0:
            raise ValueError("no legal action: the action_mask is all zeros")
        return int(legal[self.rng.integers(legal.size)])  # = rng.choice(legal), 3x faster


def trunk_for(k: int, supply: np.ndarray) -> int:
    """The trunk a return of ``k`` cards earns: size k, else the largest smaller size left."""
    for size in range(min(k, MAX_RETURN), 0, -1):
        if supply[size - 1] > 0:
            return size
    return 0


def best_group(
    board: Board,
    free: np.ndarray,
    budget: np.ndarray,
    start: list[int],
    limit: int = MAX_RETURN,
) -> list[int]:
    """The largest connected group (by sides) of at most ``limit`` spaces that contains
    ``start`` (already placed) and adds free spaces whose landscapes the ``budget`` (cards
    per landscape) can cover. Deterministic: seeds and extensions in space order; the
    first group of the largest size found is returned, ``start`` first."""
    land = board.landscape
    best: list[int] = list(start)
    seen: set[frozenset[int]] = set()

    def grow(group: list[int], left: np.ndarray) -> bool:
        nonlocal best
        if len(group) > len(best):
            best = list(group)
        if len(group) >= limit:
            return True
        members = set(group)
        options = sorted({t for s in group for t in board.neighbours[s] if t not in members and free[t]})
        for t in options:
            if left[land[t]] <= 0:
                continue
            key = frozenset(members | {t})
            if key in seen:
                continue
            seen.add(key)
            left[land[t]] -= 1
            done = grow([*group, t], left)
            left[land[t]] += 1
            if done:
                return True
        return False

    left = budget.astype(np.int64).copy()
    if start:
        grow(list(start), left)
        return best
    for s in np.flatnonzero(free).tolist():
        if left[land[s]] <= 0:
            continue
        left[land[s]] -= 1
        done = grow([s], left)
        left[land[s]] += 1
        if done:
            break
    return best


class MemoryBoardGreedyAgent:
    """Pair finder with its own perfect memory that returns cards for the largest trunk.

    The exact policy is in the module docstring.

    Args:
        board: the board of the env (``None`` for the default board); the number of
            players is read from the size of the first observation.
    """

    def __init__(self, board: Any = None) -> None:
        self.board = load_board(board)
        self._encoders: dict[int, MemoryBoardEncoder] = {}
        self.seen = np.full(self.board.num_spaces, -1, dtype=np.int64)

    def reset(self, seed: int | None = None) -> None:
        self.seen[:] = -1

    def _encoder(self, size: int) -> MemoryBoardEncoder:
        for n in range(MemoryBoard.MIN_PLAYERS, MemoryBoard.MAX_PLAYERS + 1):
            if n not in self._encoders:
                self._encoders[n] = MemoryBoardEncoder(MemoryBoard(num_players=n, board=self.board))
            if self._encoders[n].size == size:
                return self._encoders[n]
        raise InvalidOptionError(
            f"an observation of size {size} does not fit board {self.board.name!r} with 1 to 4 "
            "players; pass the env's board: MemoryBoardGreedyAgent(board=...)"
        )

    def act(self, observation: Any) -> int:
        legal = _mask(observation)
        if not legal.any():
            raise ValueError("no legal action: the action_mask is all zeros")
        obs = np.asarray(observation["observation"])
        v = self._encoder(obs.size).views(obs)
        p = self.board.num_spaces
        status = v["status"].argmax(axis=1)
        shown = v["picture"].any(axis=1)
        self.seen[shown] = v["picture"][shown].argmax(axis=1)
        down = status == _DOWN
        phase = int(v["phase"].argmax())
        stage = int(v["stage"].argmax())
        flips = legal[:p]

        if phase == _P_FLIP2:
            up = np.flatnonzero(status == _UP)
            twin = flips & (self.seen == self.seen[up[0]]) if up.size else flips & False
            return self._first(twin, flips & (self.seen < 0), flips)

        supply = v["supply"]
        free = (status == _FREE) & legal[p : 2 * p] if phase == _P_CHOOSE else status == _FREE
        budget = v["collected"][0]
        start = np.flatnonzero(v["returning"]).tolist()
        if phase > _P_FLIP2:  # returning: continue the group
            return self._continue(free, budget, start, supply, legal)

        if stage == _S_MAIN:
            known = down & (self.seen >= 0)
            counts = np.bincount(self.seen[known], minlength=self.board.num_kinds)
            pairs = known & (counts[np.maximum(self.seen, 0)] >= 2)
            if pairs.any():
                first = int(np.flatnonzero(pairs)[0])
                return first
            group = self._plan(free, budget, [], supply)
            top = trunk_for(MAX_RETURN, supply)
            if group and top > 0 and trunk_for(len(group), supply) == top:
                return p + group[0]
            return self._first(flips & (self.seen < 0), flips)
        group = self._plan(free, budget, [], supply)
        if group and (stage == _S_CHILDREN or trunk_for(len(group), supply) > 0):
            return p + group[0]
        if legal[2 * p + 1]:
            return 2 * p + 1
        return self._first(legal)  # pragma: no cover - placing is always possible here

    def _plan(self, free: np.ndarray, budget: np.ndarray, start: list[int], supply: np.ndarray) -> list[int]:
        """The smallest group (from ``start``) that earns the best trunk reachable."""
        group = best_group(self.board, free, budget, start)
        if len(group) <= len(start):
            return group
        trunk = trunk_for(len(group), supply)
        size = next(k for k in range(1, len(group) + 1) if trunk_for(k, supply) == trunk)
        size = max(size, len(start))
        if size < len(group):
            group = best_group(self.board, free, budget, start, limit=size)
        return group

    def _continue(
        self,
        free: np.ndarray,
        budget: np.ndarray,
        start: list[int],
        supply: np.ndarray,
        legal: np.ndarray,
    ) -> int:
        p = self.board.num_spaces
        group = self._plan(free, budget, start, supply)
        for s in group[len(start) :]:
            if legal[p + s]:
                return p + s
        return 2 * p  # end the return

    @staticmethod
    def _first(*masks: np.ndarray) -> int:
        for m in masks:
            hits = np.flatnonzero(m)
            if hits.size:
                return int(hits[0])
        raise ValueError("no legal action: the action_mask is all zeros")
