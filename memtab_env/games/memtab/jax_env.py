"""MemTab as pure JAX functions: the rules of :mod:`memtab_env.games.memtab.rules_kernels`.

A second backend of the same rules, held equal to the numba kernels flip for flip by
``tests/test_jax_backend.py``. The state is a pytree of fixed-shape arrays, every
transition branch-free (``jnp.where`` over the flip index), so it jits and vmaps.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from memtab_env.games.memtab import rules_kernels as K
from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import MemTab, parse_layout
from memtab_env.jax.encoding import bit_set, one_hot, pack_bytes, raw
from memtab_env.jax.env import shuffle

P = K.NUM_POSITIONS
NUM_KINDS = K.NUM_KINDS
DOWN, UP, GONE, TABLEAU = K.DOWN, K.UP, K.GONE, K.TABLEAU
_POINTS = np.asarray(K.KIND_POINTS, np.int32)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class MemTabGameState:
    """The fields of the numba state row (:mod:`memtab_env.games.memtab.rules_kernels`).

    Attributes:
        layout: int8[28], kind dealt at each position.
        status: int8[28], 0 DOWN, 1 UP, 2 GONE, 3 TABLEAU.
        owner: int8[28], seat whose tableau holds the card, -1 otherwise.
        turn_flips: int32[3], positions flipped so far this turn, -1 for not yet.
        current: int32, seat on turn.
        flip: int32, index of the next flip within the turn (0, 1, 2).
        pairs: int32, pairs removed so far this turn.
        turn: int32, turns started (1-based).
        over: bool; instant: bool (two pairs in one turn); winner: int32 (-1 or the
            instant winner).
    """

    layout: jax.Array
    status: jax.Array
    owner: jax.Array
    turn_flips: jax.Array
    current: jax.Array
    flip: jax.Array
    pairs: jax.Array
    turn: jax.Array
    over: jax.Array
    instant: jax.Array
    winner: jax.Array


class MemTabJax:
    """MemTab's rules for one configuration (``num_players``, ``first_player``)."""

    name = "memtab"
    #: players the single-agent JAX view plays on the host (see its ``expert``)
    host_opponents = {"expert": "memtab_env.agents.expert:flips_from_seen"}

    def __init__(self, num_players: int = 2, first_player: int = 0) -> None:
        self.engine = MemTab(num_players=num_players, first_player=first_player)
        self.num_players = self.engine.num_players
        self.first_player = self.engine.first_player
        self.num_positions = P
        self.num_actions = P
        self.num_kinds = NUM_KINDS
        self.max_game_length = self.engine.info.max_game_length
        self.encoder = MemTabEncoder(self.engine)  # the layout and bounds of observations
        self.obs_size = self.encoder.size
        self._deck = jnp.asarray(np.repeat(np.arange(NUM_KINDS, dtype=np.int8), 2))

    # -- construction ---------------------------------------------------------------
    def parse_layout(self, layout: Any) -> np.ndarray:
        """Kind ids (int8[28]) from a record's card codes or kind ids (checked)."""
        return parse_layout(layout)

    def deal(self, key: jax.Array) -> jax.Array:
        """A uniform permutation of the deck (kind ids by position)."""
        return shuffle(key, self._deck)

    def init(self, layout: jax.Array, first_player: jax.Array) -> MemTabGameState:
        return MemTabGameState(
            layout=jnp.asarray(layout, jnp.int8),
            status=jnp.zeros(P, jnp.int8),
            owner=jnp.full(P, -1, jnp.int8),
            turn_flips=jnp.full(3, -1, jnp.int32),
            current=jnp.asarray(first_player, jnp.int32),
            flip=jnp.int32(0),
            pairs=jnp.int32(0),
            turn=jnp.int32(1),
            over=jnp.bool_(False),
            instant=jnp.bool_(False),
            winner=jnp.int32(-1),
        )

    # -- queries --------------------------------------------------------------------
    def kinds(self, gs: MemTabGameState) -> jax.Array:
        return gs.layout.astype(jnp.int32)

    def face_down(self, gs: MemTabGameState) -> jax.Array:
        return gs.status == DOWN

    def legal(self, gs: MemTabGameState) -> jax.Array:
        return (gs.status == DOWN) & ~gs.over

    def scores(self, gs: MemTabGameState) -> jax.Array:
        """int32[n]: red values minus black values in each tableau."""
        tab = gs.status == TABLEAU
        points = jnp.where(tab, jnp.asarray(_POINTS)[gs.layout], 0)
        seat = gs.owner[:, None] == jnp.arange(self.num_players)
        return jnp.sum(jnp.where(seat, points[:, None], 0), axis=0).astype(jnp.int32)

    def winners(self, gs: MemTabGameState) -> jax.Array:
        """bool[n]: the instant winner, else every top scorer."""
        sc = self.scores(gs)
        top = sc == sc.max()
        instant = jnp.arange(self.num_players) == gs.winner
        return jnp.where(gs.instant, instant, top)

    def visible(self, gs: MemTabGameState, remembered: jax.Array) -> jax.Array:
        """bool[28]: positions whose kind an observation shows (face up, in a tableau,
        face down and remembered)."""
        st = gs.status
        return (st == UP) | (st == TABLEAU) | ((st == DOWN) & remembered)

    # -- the transition -------------------------------------------------------------
    def step(self, gs: MemTabGameState, action: jax.Array) -> tuple[MemTabGameState, jax.Array]:
        """Flip ``action`` (which must be legal); returns the new state and whether the
        flip ended the turn. The same transition as ``rules_kernels.step``."""
        n = self.num_players
        pos = jnp.arange(P)
        hit = pos == action
        status, owner, layout = gs.status, gs.owner, gs.layout
        player = gs.current
        kind = layout[action]
        flip = gs.flip
        turn_flips = gs.turn_flips.at[flip].set(action)
        first = turn_flips[0]
        # flip 2 (index 1): a match with flip 1 removes both
        match12 = (flip == 1) & (layout[first] == kind)
        # flip 3 (index 2): into the tableau, or off with its twin there
        twin = (status == TABLEAU) & (owner == player) & (layout == kind)
        match3 = (flip == 2) & twin.any()
        new_here = jnp.where(flip < 2, jnp.where(match12, GONE, UP),
                             jnp.where(match3, GONE, TABLEAU)).astype(jnp.int8)
        status = jnp.where(hit, new_here, status)
        status = jnp.where(match12 & (pos == first), jnp.int8(GONE), status)
        status = jnp.where(match3 & twin, jnp.int8(GONE), status)
        owner = jnp.where(match3 & twin, jnp.int8(-1), owner)
        owner = jnp.where(hit & (flip == 2) & ~match3, player.astype(jnp.int8), owner)
        pairs = gs.pairs + match12 + match3
        # end of the turn: unmatched flips go back face down, the next turn starts
        end = flip == 2
        status = jnp.where(end & (status == UP), jnp.int8(DOWN), status)
        instant = end & (pairs >= 2)
        down = jnp.sum(status == DOWN)
        next_player = jnp.where(pairs == 0, (player + 1) % n, player)
        over = instant | (end & (down <= 2))
        new = MemTabGameState(
            layout=layout,
            status=status,
            owner=owner,
            turn_flips=jnp.where(end & ~instant, jnp.full(3, -1, jnp.int32), turn_flips),
            current=jnp.where(end & ~instant, next_player, player).astype(jnp.int32),
            flip=jnp.where(end, jnp.where(instant, 2, 0), flip + 1).astype(jnp.int32),
            pairs=jnp.where(end & ~instant, 0, pairs).astype(jnp.int32),
            turn=gs.turn + (end & ~instant),
            over=over,
            instant=instant,
            winner=jnp.where(instant, player, gs.winner).astype(jnp.int32),
        )
        return new, end

    # -- observation ----------------------------------------------------------------
    def encode(self, gs: MemTabGameState, observer: jax.Array, remembered: jax.Array) -> jax.Array:
        """The flat int8 observation of ``observer``: the layout of
        :class:`memtab_env.games.memtab.observation.MemTabEncoder`, value for value.

        Each tableau is a bit set of kinds (a tableau never holds both cards of a kind:
        the second one takes the first away), so no step reduces over positions x kinds;
        :func:`memtab_env.jax.encoding.pack_bytes` lays out the bytes."""
        n = self.num_players
        kind = gs.layout
        rel = jnp.where(gs.status == TABLEAU, (gs.owner.astype(jnp.int32) - observer) % n, -1)
        bit = jnp.left_shift(jnp.int32(1), kind.astype(jnp.int32))
        held = jnp.bitwise_or.reduce(jnp.where(rel == jnp.arange(n)[:, None], bit, 0), axis=1)
        tableaux = jnp.right_shift(held[:, None], jnp.arange(NUM_KINDS)) & 1  # [n, kinds], observer first
        scores = jnp.sum(tableaux * jnp.asarray(_POINTS), axis=1)
        live = ~gs.over
        bounds = self.encoder.field("scores")
        return pack_bytes([
            one_hot(gs.status, 4),
            one_hot(kind, NUM_KINDS, self.visible(gs, remembered)),
            bit_set(held, NUM_KINDS),
            raw(scores, bounds.low, bounds.high),
            one_hot(jnp.where(live, gs.flip, -1)[None], 3),
            one_hot(jnp.where(live, (gs.current - observer) % n, -1)[None], n),
        ])

    # -- the greedy opponent --------------------------------------------------------
    def greedy_target(self, gs: MemTabGameState, seen: jax.Array, legal: jax.Array) -> jax.Array:
        """bool[28]: the flips the greedy rule prefers (:mod:`agents.memtab_agents`), from the kinds
        ``seen`` (-1 unknown) of the player on turn; the caller falls back to the lowest
        unknown, then the lowest legal flip."""
        known = legal & (seen >= 0)
        s = jnp.maximum(seen, 0)
        seen_1h = known[:, None] & (s[:, None] == jnp.arange(NUM_KINDS))
        counts = seen_1h.sum(axis=0)  # known face-down cards of each kind
        pair_known = known & (counts[s] >= 2)
        up = gs.status == UP
        up_kind = seen[jnp.argmax(up)]  # the one face-up card at flip index 1
        twin_of_up = known & (seen == up_kind) & up.any()
        mine = (gs.status == TABLEAU) & (gs.owner == gs.current)
        mine_kinds = jnp.any(mine[:, None] & (gs.layout[:, None] == jnp.arange(NUM_KINDS)), axis=0)
        twin_in_tableau = known & mine_kinds[s]
        return jnp.where(gs.flip == 0, pair_known,
                         jnp.where(gs.flip == 1, twin_of_up, twin_in_tableau))
