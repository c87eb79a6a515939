"""Pelmanism as pure JAX functions: the rules of :mod:`memtab_env.games.pelmanism.rules`.

A second backend of the same rules, held equal to the engine flip for flip by
``tests/test_jax_backend.py``; every deck, 1 to 6 players, the ``max_turns`` house rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from memtab_env.games.pelmanism.observation import PelmanismEncoder
from memtab_env.games.pelmanism.rules import DOWN, GONE, UP, Pelmanism
from memtab_env.jax.encoding import one_hot, pack_bytes, raw
from memtab_env.jax.env import shuffle


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PelmanismGameState:
    """The fields of :class:`memtab_env.games.pelmanism.rules.PelmanismState` as arrays.

    Attributes:
        layout: int8[P], card id dealt at each position; kinds: int8[P], their kinds.
        status: int8[P], 0 DOWN, 1 UP (flipped first this turn), 2 GONE (taken).
        owner: int8[P], -1 or the seat that took the card.
        pairs: int32[n], pairs taken by each seat.
        first: int32, position flipped first this turn, -1 before the first flip.
        current: int32 seat on turn; flip: int32, 0 or 1; turns: int32 turns completed.
        over: bool.
    """

    layout: jax.Array
    kinds: jax.Array
    status: jax.Array
    owner: jax.Array
    pairs: jax.Array
    first: jax.Array
    current: jax.Array
    flip: jax.Array
    turns: jax.Array
    over: jax.Array


class PelmanismJax:
    """Pelmanism's rules for one configuration (the engine's options)."""

    name = "pelmanism"

    def __init__(self, deck: str = "standard", num_players: int = 2, first_player: int = 0,
                 max_turns: int | None = None) -> None:
        self.engine = Pelmanism(deck=deck, num_players=num_players, first_player=first_player,
                                max_turns=max_turns)
        e = self.engine
        self.num_players = e.num_players
        self.first_player = e.first_player
        self.max_turns = e.max_turns
        self.num_positions = e.num_positions
        self.num_actions = e.num_positions
        self.num_kinds = e.num_kinds
        self.max_game_length = e.info.max_game_length
        self.encoder = PelmanismEncoder(e)  # the layout and bounds of observations
        self.obs_size = self.encoder.size
        self._cards = jnp.asarray(e.deck.cards)
        self._card_kind = jnp.asarray(e.deck.card_kind)

    # -- construction ---------------------------------------------------------------
    def parse_layout(self, layout: Any) -> np.ndarray:
        """Card ids (int8[P]) from a record's card codes or card ids (checked)."""
        return self.engine.parse_layout(layout)

    def deal(self, key: jax.Array) -> jax.Array:
        return shuffle(key, self._cards)

    def init(self, layout: jax.Array, first_player: jax.Array) -> PelmanismGameState:
        p, n = self.num_positions, self.num_players
        layout = jnp.asarray(layout, jnp.int8)
        return PelmanismGameState(
            layout=layout,
            kinds=self._card_kind[layout.astype(jnp.int32)],
            status=jnp.zeros(p, jnp.int8),
            owner=jnp.full(p, -1, jnp.int8),
            pairs=jnp.zeros(n, jnp.int32),
            first=jnp.int32(-1),
            current=jnp.asarray(first_player, jnp.int32),
            flip=jnp.int32(0),
            turns=jnp.int32(0),
            over=jnp.bool_(False),
        )

    # -- queries --------------------------------------------------------------------
    def kinds(self, gs: PelmanismGameState) -> jax.Array:
        return gs.kinds.astype(jnp.int32)

    def face_down(self, gs: PelmanismGameState) -> jax.Array:
        return gs.status == DOWN

    def legal(self, gs: PelmanismGameState) -> jax.Array:
        return (gs.status == DOWN) & ~gs.over

    def scores(self, gs: PelmanismGameState) -> jax.Array:
        return gs.pairs

    def winners(self, gs: PelmanismGameState) -> jax.Array:
        return gs.pairs == gs.pairs.max()

    def visible(self, gs: PelmanismGameState, remembered: jax.Array) -> jax.Array:
        """bool[P]: face up now, taken (taken pairs lie face up), or face down and
        remembered."""
        st = gs.status
        return (st == UP) | (st == GONE) | ((st == DOWN) & remembered)

    # -- the transition -------------------------------------------------------------
    def step(self, gs: PelmanismGameState, action: jax.Array
             ) -> tuple[PelmanismGameState, jax.Array]:
        """Flip ``action`` (which must be legal); returns the new state and whether the
        flip ended the turn. The same transition as ``Pelmanism.apply_inplace``."""
        n = self.num_players
        hit = jnp.arange(self.num_positions) == action
        player = gs.current
        second = gs.flip == 1
        first = gs.first
        match = second & (gs.kinds[jnp.maximum(first, 0)] == gs.kinds[action])
        is_first = jnp.arange(self.num_positions) == first
        status = jnp.where(hit & ~second, jnp.int8(UP), gs.status)
        status = jnp.where(second & match & (hit | is_first), jnp.int8(GONE), status)
        status = jnp.where(second & ~match & is_first, jnp.int8(DOWN), status)
        owner = jnp.where(second & match & (hit | is_first), player.astype(jnp.int8), gs.owner)
        pairs = gs.pairs + (second & match) * (jnp.arange(n) == player)
        turns = gs.turns + second
        cleared = ~jnp.any(status == DOWN)
        over = second & match & cleared
        if self.max_turns is not None:  # the house rule: scored as it stands
            over = over | (second & (turns >= self.max_turns))
        new = PelmanismGameState(
            layout=gs.layout,
            kinds=gs.kinds,
            status=status,
            owner=owner,
            pairs=pairs.astype(jnp.int32),
            first=jnp.where(second, -1, action).astype(jnp.int32),
            current=jnp.where(second & ~over & ~match, (player + 1) % n, player).astype(jnp.int32),
            flip=jnp.where(second, 0, 1).astype(jnp.int32),
            turns=turns.astype(jnp.int32),
            over=over,
        )
        return new, second

    # -- observation ----------------------------------------------------------------
    def encode(self, gs: PelmanismGameState, observer: jax.Array, remembered: jax.Array
               ) -> jax.Array:
        """The flat int8 observation of ``observer``: the layout of
        :class:`memtab_env.games.pelmanism.observation.PelmanismEncoder`, value for value."""
        n = self.num_players
        order = (jnp.arange(n) + observer) % n
        live = ~gs.over
        pairs = self.encoder.field("pairs")
        return pack_bytes([
            one_hot(gs.status, 3),
            one_hot(gs.kinds, self.num_kinds, self.visible(gs, remembered)),
            raw(gs.pairs[order], pairs.low, pairs.high),
            one_hot(jnp.where(live, gs.flip, -1)[None], 2),
            one_hot(jnp.where(live, (gs.current - observer) % n, -1)[None], n),
        ])

    # -- the greedy opponent --------------------------------------------------------
    def greedy_target(self, gs: PelmanismGameState, seen: jax.Array, legal: jax.Array
                      ) -> jax.Array:
        """bool[P]: the flips the greedy rule prefers (:mod:`agents.pelmanism_agents`)."""
        known = legal & (seen >= 0)
        s = jnp.maximum(seen, 0)
        counts = (known[:, None] & (s[:, None] == jnp.arange(self.num_kinds))).sum(axis=0)
        pair_known = known & (counts[s] >= 2)
        up = gs.status == UP
        up_kind = seen[jnp.argmax(up)]
        twin_of_up = known & (seen == up_kind)
        return jnp.where(up.any(), twin_of_up, pair_known)
