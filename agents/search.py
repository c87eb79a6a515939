"""``search``: determinized Monte Carlo search for MemTab.

At every searched flip the agent

1. updates its own memory (:class:`memtab_env.agents.belief.MemTabBelief`) from the observation;
2. draws ``simulations`` deals consistent with everything it has seen
   (:meth:`~agents.belief.MemTabBelief.sample_layout`: known cards where they are, kinds
   gone for good deduced, the unseen cards uniformly over the unknown face-down
   positions) from its own seeded generator;
3. for every candidate flip and every deal, makes the flip in the engine's own numba
   kernel (:func:`memtab_env.games.memtab.rules_kernels.step`, so the rules exist once) and
   plays on, every player (itself included) playing the expert's policy
   (:func:`memtab_env.agents._memtab_policy.policy_choose`; in ``fast`` mode, which only skips the
   expectimax of a turn's first flip: a known pair, else an unknown card); each
   simulated player knows the cards this agent knows now plus every card revealed in
   the simulation, never the deal itself. After ``horizon`` more turn starts (default
   2: the rest of its turn, the next turn and the one after) the table is valued with
   the policy's race valuation (:func:`memtab_env.agents._memtab_policy.race_value`: the chance
   that this agent is the first to win instantly); with ``horizon=0`` every deal is
   played to the end and scored (win share, 1/k for k winners, plus 0.001 times the
   score lead);
4. flips the candidate with the best mean value.

Candidates: one per kind among the known face-down cards (two known cards of one kind
are the same move) and one for "an unknown card" (all unknown positions are alike under
the belief; the lowest is flipped). Every candidate is played on the same deals (common
random numbers). By default the second and third flips of a turn are searched
(``search_flips=(1, 2)``); the first flip is played by the expert policy (a known pair,
else nearly always an unknown card: searching it measured no gain). With ``shortcuts``
(default) an instant win and the known twin of the first flip are played at once, and
a decision with a single candidate is not searched.

Budget: ``simulations`` deals per searched decision (each played once per candidate);
the default 64 takes 10-40 ms per searched decision on one core (a two-player game,
about 0.1-0.2 s). Fewer deals are weaker: with 32 the search was no better than
``expert`` (0.50 over 400 games); more than 64 measured no further gain (bias of the
rollout policy and of the leaf valuation, not noise, limits it).

Measured (two players, perfect memory, seats rotated, shared wins counted 1/k)::

    memtab simulate --agents search,expert --games 400 --rotate --seed S

gives 0.613 (S = 0), 0.586 (S = 100000) and 0.598 (S = 200000): 0.599 over 1200 games
(standard error 0.014); against ``greedy`` 0.714 (400 games).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from memtab_env.agents._memtab_policy import DEFAULT_WEIGHTS, policy_choose, race_value
from memtab_env.agents.belief import MemTabBelief, action_mask
from numba import njit

from memtab_env.games.memtab import rules_kernels as K

DOWN, UP, GONE, TABLEAU = K.DOWN, K.UP, K.GONE, K.TABLEAU
_NP = K.NUM_POSITIONS
_NK = K.NUM_KINDS
_STATUS = K.STATUS
_OWNER = K.OWNER
_PTS = K.KIND_POINTS.astype(np.int64)

#: policy weights of the rollouts, the leaf valuation and the unsearched flips: the
#: expert's, with a higher ``base_rate`` (0.5 instead of 0.3), which measured better for
#: the search (0.600 against 0.583 over the same 800 games against ``expert``; 0.7 gave
#: 0.543), while 0.3 remains better for ``expert`` itself against ``greedy``
SEARCH_WEIGHTS = DEFAULT_WEIGHTS.copy()
SEARCH_WEIGHTS[0] = 0.5


@njit(cache=True)
def _flip(s, known, pos, n):
    """Flip ``pos`` in the simulated game with the engine's kernel; everyone sees it."""
    K.step(s, pos, n)
    known[pos] = True


@njit(cache=True)
def _result(s, n):
    """Value of the finished simulated game for seat 0."""
    if s[K.INSTANT]:
        return 1.0 if s[K.WINNER] == 0 else 0.0
    scores = np.zeros(n, dtype=np.int64)
    K.scores(s, n, scores)
    if n == 1:
        return float(scores[0])
    best = scores[0]
    other = -1000
    for p in range(1, n):
        if scores[p] > best:
            best = scores[p]
        if scores[p] > other:
            other = scores[p]
    k = 0
    for p in range(n):
        if scores[p] == best:
            k += 1
    share = 1.0 / k if scores[0] == best else 0.0
    return share + 0.001 * (scores[0] - other)


@njit(cache=True)
def _evaluate(s, known, n, w):
    """Heuristic value for seat 0 of an unfinished simulated game at a turn start."""
    kd = np.zeros(_NK, dtype=np.int64)
    pool = np.zeros(_NK, dtype=np.float64)
    tab = np.zeros((n, _NK), dtype=np.bool_)
    U = 0
    pts = 0.0
    for p in range(_NP):
        st = s[_STATUS + p]
        k = s[p]
        if st == DOWN:
            if known[p]:
                kd[k] += 1
            else:
                pool[k] += 1.0
                U += 1
        elif st == TABLEAU:
            tab[s[_OWNER + p], k] = True
            if s[_OWNER + p] == 0:
                pts += _PTS[k]
    if n == 1:
        return pts
    return race_value(kd, pool, U, tab, 0, s[K.CURRENT], n, w)


@njit(cache=True)
def _rollout(s, known, n, w, horizon):
    """Play the simulated game on (every player: the fast policy) for ``horizon`` turn
    starts (0: to the end) and return its value for seat 0."""
    kind = np.empty(_NP, dtype=np.int8)
    status = np.empty(_NP, dtype=np.int8)
    owner = np.empty(_NP, dtype=np.int8)
    pool = np.zeros(_NK, dtype=np.float64)
    ends = 0
    while s[K.OVER] == 0:
        if s[K.FLIP] == 0 and horizon > 0:
            if ends >= horizon:
                return _evaluate(s, known, n, w)
            ends += 1
        for k in range(_NK):
            pool[k] = 0.0
        for p in range(_NP):
            st = s[_STATUS + p]
            status[p] = st
            owner[p] = s[_OWNER + p]
            if st == DOWN and not known[p]:
                kind[p] = -1
                pool[s[p]] += 1.0
            elif st == GONE:
                kind[p] = -1
            else:
                kind[p] = s[p]
        pos = policy_choose(kind, status, owner, s[K.CURRENT], n, s[K.FLIP], pool, w, True)
        _flip(s, known, pos, n)
    return _result(s, n)


@njit(cache=True)
def search_values(layouts, root, known, n, candidates, w, horizon):
    """Rollout value (for seat 0, on turn) of each candidate flip on each deal:
    float64[D, C], for the deals ``layouts`` (int8[D, 28]) completing the engine state
    row ``root`` (its layout part is overwritten) and the known-card mask ``known``."""
    out = np.zeros((layouts.shape[0], candidates.size), dtype=np.float64)
    for d in range(layouts.shape[0]):
        for c in range(candidates.size):
            s = root.copy()
            s[:_NP] = layouts[d]
            k2 = known.copy()
            _flip(s, k2, candidates[c], n)
            out[d, c] = _rollout(s, k2, n, w, horizon)
    return out


class SearchAgent:
    """Determinized Monte Carlo search over deals consistent with what it has seen.

    Args:
        simulations: the budget: deals sampled per searched decision (each is played
            once from every candidate flip).
        seed: seed of the agent's own generator (``reset(seed)`` reseeds it).
        horizon: turn starts simulated after the candidate flip before the table is
            valued with the policy's race valuation (0: play every deal to the end).
        search_flips: the flip indices (0, 1, 2 within a turn) that are searched; the
            others are played by the expert policy.
        shortcuts: play instant wins and known twins at once, without searching.
        weights: weights of the policy (``agents._memtab_policy``) used for the rollouts,
            the leaf valuation and the unsearched flips.
    """

    def __init__(
        self,
        simulations: int = 64,
        seed: int | None = None,
        horizon: int = 2,
        search_flips: tuple[int, ...] = (1, 2),
        shortcuts: bool = True,
        weights: np.ndarray | None = None,
    ) -> None:
        if int(simulations) < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        if int(horizon) < 0:
            raise ValueError(f"horizon must be >= 0, got {horizon}")
        if not set(search_flips) <= {0, 1, 2}:
            raise ValueError(f"search_flips are flip indices 0, 1, 2; got {search_flips}")
        self.simulations = int(simulations)
        self.horizon = int(horizon)
        self.search_flips = tuple(int(f) for f in search_flips)
        self.shortcuts = bool(shortcuts)
        self.weights = SEARCH_WEIGHTS.copy() if weights is None else np.asarray(weights, float)
        self.rng = np.random.default_rng(seed)
        self.belief = MemTabBelief()
        #: mean value of every candidate at the last searched decision (for inspection)
        self.last_values: dict[int, float] = {}

    def reset(self, seed: int | None = None) -> None:
        self.belief.reset()
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def candidates(self, legal: np.ndarray) -> np.ndarray:
        """One legal flip per class of equivalent flips (see the module doc)."""
        seen = self.belief.kinds_view()
        cands = []
        kinds_done: set[int] = set()
        first_unknown = -1
        for p in np.flatnonzero(legal).tolist():
            k = int(seen[p])
            if k < 0:
                if first_unknown < 0:
                    first_unknown = p
            elif k not in kinds_done:
                kinds_done.add(k)
                cands.append(p)
        if first_unknown >= 0:
            cands.append(first_unknown)
        return np.array(sorted(cands), dtype=np.int64)

    def _shortcut(self, legal: np.ndarray) -> int | None:
        b = self.belief
        seen = b.kinds_view()
        known = legal & (seen >= 0)
        up = b.up_positions()
        if b.flip == 1 and up.size == 1:
            twins = np.flatnonzero(known & (seen == seen[up[0]]))
            if twins.size:
                return int(twins[0])
        if b.flip == 2 and up.size == 0 and b.num_players > 1:
            wins = np.flatnonzero(known & b.tab[0][np.maximum(seen, 0)])
            if wins.size:
                return int(wins[0])
        return None

    def _root_state(self) -> np.ndarray:
        """An engine state row (``rules_kernels``) of the table as this agent sees it,
        seats relative to it (it is seat 0, on turn); the layout is filled per deal."""
        b = self.belief
        up = b.up_positions()
        flip = max(b.flip, 0)
        s = K.new_state(np.zeros(_NP, dtype=np.int8), 0)
        s[_STATUS : _STATUS + _NP] = b.status
        s[_OWNER : _OWNER + _NP] = b.owner
        if flip == 1 and up.size:
            s[K.TURN_FLIPS] = up[0]
        elif flip == 2 and up.size == 2:
            s[K.TURN_FLIPS : K.TURN_FLIPS + 2] = up
        s[K.FLIP] = flip
        s[K.PAIRS] = 1 if flip == 2 and up.size == 0 else 0
        return s

    def _expert(self, legal: np.ndarray) -> int:
        b = self.belief
        pos = int(
            policy_choose(
                b.kinds_view(),
                b.status,
                b.owner,
                0,
                b.num_players,
                max(b.flip, 0),
                b.pool(),
                self.weights,
                False,
            )
        )
        return pos if legal[pos] else int(np.flatnonzero(legal)[0])

    def act(self, observation: Any) -> int:
        b = self.belief
        b.update(observation)
        legal = action_mask(observation)
        if not legal.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        self.last_values = {}
        if self.shortcuts:
            pos = self._shortcut(legal)
            if pos is not None:
                return pos
        if max(b.flip, 0) not in self.search_flips:
            return self._expert(legal)
        cands = self.candidates(legal)
        if cands.size == 1:
            return int(cands[0])
        layouts = np.stack([b.sample_layout(self.rng) for _ in range(self.simulations)])
        values = search_values(
            layouts,
            self._root_state(),
            b.kinds_view() >= 0,
            b.num_players,
            cands,
            self.weights,
            self.horizon,
        )
        mean = values.mean(axis=0)
        self.last_values = dict(zip(cands.tolist(), mean.tolist(), strict=True))
        return int(cands[int(np.argmax(mean))])
