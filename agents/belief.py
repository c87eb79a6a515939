"""An agent's own memory of a MemTab game, built only from the observations it receives.

Every remembering MemTab agent (``greedy``, ``expert``, ``search``) keeps one
:class:`MemTabBelief` and feeds it each observation dict it is asked to act on. The belief
never reads hidden state: it parses the flat observation with the env's own encoder
(:class:`memtab_env.games.memtab.observation.MemTabEncoder`, views ``status``, ``card``,
``tableaux``, ``flip``, ``turn``) and keeps what it has seen.

What it keeps
-------------
``seen[pos]``
    the kind (0..13) of the card at ``pos`` once any observation has shown it (face up,
    in a tableau, or face down and remembered by the env's memory model), else -1.
    Cards never move, so a kind once seen stays true for that position for the whole
    game, even when later observations stop showing it (memory ``none``, ``window:k``,
    ``decay:p``). This is the agent's *own* perfect memory of what it was shown.
``status``, ``tab``, ``owner``, ``flip``
    the table as the latest observation shows it; ``tab[s, k]`` says whether relative seat
    ``s`` (0 = this agent, 1 = the next seat, ...) holds kind ``k``; ``owner`` gives a
    relative seat for every tableau position (when two tableaux hold the same kind the
    two positions are assigned in seat order: they are interchangeable).

An agent observes only when it acts (as in the AEC env), so what it has *seen* is what
its observations at its own flips showed. Under ``perfect`` that is every card ever
revealed; under ``none`` it is still every card revealed (each observation shows what was
revealed since the agent's previous action, the belief remembers the rest); under
``window:k`` / ``decay:p`` some reveals by others may never be shown to it.

What it deduces
---------------
Cards leave the table only in pairs, so a kind with one known card gone is gone for good
(both copies). Kinds that nobody has seen but that left the game (a pair matched by
another player's flips 1 and 2 between two of this agent's observations) are not known:
there are ``m`` such pairs, each of a kind with no card seen at all. :meth:`pool` gives
the expected number of each kind among the face-down positions whose card is not known,
and :meth:`sample_layout` draws a full deal consistent with everything seen: the ``m``
unseen gone kinds uniformly among the kinds never seen (every such choice leaves equally
many deals), then a uniform permutation of the remaining cards over the unknown
face-down positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import DOWN, GONE, NUM_KINDS, NUM_POSITIONS, TABLEAU, UP, MemTab

_ENCODERS: dict[int, MemTabEncoder] = {}
#: size of the flat observation is BASE + PER_PLAYER * n
_BASE = NUM_POSITIONS * 4 + NUM_POSITIONS * NUM_KINDS + 3
_PER_PLAYER = NUM_KINDS + 2


def encoder_for(num_players: int) -> MemTabEncoder:
    """The env's MemTab encoder for ``num_players`` (cached)."""
    enc = _ENCODERS.get(num_players)
    if enc is None:
        enc = _ENCODERS[num_players] = MemTabEncoder(MemTab(num_players=num_players))
    return enc


def num_players_of(flat: np.ndarray) -> int:
    """Number of players of a flat MemTab observation, from its length."""
    n, rest = divmod(int(flat.shape[-1]) - _BASE, _PER_PLAYER)
    if rest or not 1 <= n <= MemTab.MAX_PLAYERS:
        raise ValueError(
            f"not a MemTab observation: length {flat.shape[-1]} is not "
            f"{_BASE} + {_PER_PLAYER} * n for 1 <= n <= {MemTab.MAX_PLAYERS}"
        )
    return n


def flat_observation(observation: Any) -> np.ndarray:
    """The flat int8 vector of an AEC observation dict (or of a bare vector)."""
    if isinstance(observation, dict):
        observation = observation["observation"]
    return np.asarray(observation)


def action_mask(observation: Any) -> np.ndarray:
    """Bool mask of legal flips: the dict's ``action_mask``, else the face-down positions."""
    if isinstance(observation, dict) and "action_mask" in observation:
        return np.asarray(observation["action_mask"]).astype(bool)
    flat = flat_observation(observation)
    views = encoder_for(num_players_of(flat)).views(flat)
    return views["status"][:, DOWN].astype(bool)


class MemTabBelief:
    """What one agent knows of the current MemTab game; see the module docstring."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.num_players = 0
        self.seen = np.full(NUM_POSITIONS, -1, dtype=np.int8)
        self.status = np.zeros(NUM_POSITIONS, dtype=np.int8)
        self.owner = np.full(NUM_POSITIONS, -1, dtype=np.int8)
        self.tab = np.zeros((1, NUM_KINDS), dtype=bool)
        self.flip = 0
        self.turn = 0
        self.observations = 0

    # -- update -----------------------------------------------------------------------
    def update(self, observation: Any) -> None:
        """Add what ``observation`` (AEC dict or flat vector) shows.

        A game that starts again without :meth:`reset` (a position that was gone or in a
        tableau shows face down again, or a fresh table after a game was seen) resets the
        belief first.
        """
        flat = flat_observation(observation)
        n = num_players_of(flat)
        views = encoder_for(n).views(flat)
        status = views["status"].argmax(axis=1).astype(np.int8)
        if self.observations and (
            n != self.num_players
            or bool(((self.status >= GONE) & (status == DOWN)).any())
            or (bool((status == DOWN).all()) and bool((self.status != DOWN).any()))
        ):
            self.reset()
        self.num_players = n
        self.observations += 1
        card = views["card"]
        shown = card.any(axis=1)
        self.seen[shown] = card[shown].argmax(axis=1)
        self.status = status
        self.tab = views["tableaux"].astype(bool)
        flip = views["flip"]
        self.flip = int(flip.argmax()) if flip.any() else -1
        turn = views["turn"]
        self.turn = int(turn.argmax()) if turn.any() else -1
        # relative owner of every tableau position (same-kind positions in seat order)
        self.owner[:] = -1
        in_tableau = status == TABLEAU
        for k in np.unique(self.seen[in_tableau & (self.seen >= 0)]).tolist():
            pos = np.flatnonzero(in_tableau & (self.seen == k))
            seats = np.flatnonzero(self.tab[:, k])
            for p, s in zip(pos.tolist(), seats.tolist(), strict=False):
                self.owner[p] = s

    # -- queries ----------------------------------------------------------------------
    @property
    def down(self) -> np.ndarray:
        """Bool mask of face-down positions."""
        return self.status == DOWN

    @property
    def known_down(self) -> np.ndarray:
        """Bool mask of face-down positions whose kind this agent has seen."""
        return (self.status == DOWN) & (self.seen >= 0)

    @property
    def unknown_down(self) -> np.ndarray:
        """Bool mask of face-down positions whose kind this agent has never seen."""
        return (self.status == DOWN) & (self.seen < 0)

    def kinds_view(self) -> np.ndarray:
        """int8[28]: the kind at each position when known (face down and seen, face up,
        in a tableau), -1 otherwise (unknown, and every gone position)."""
        view = self.seen.copy()
        view[self.status == GONE] = -1
        return view

    def _accounting(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(base pool counts, kinds that may be unseen gone pairs, m such pairs)."""
        known = self.seen >= 0
        counts = np.bincount(self.seen[known], minlength=NUM_KINDS)
        gone_known = np.zeros(NUM_KINDS, dtype=bool)
        gone_known[self.seen[known & (self.status == GONE)]] = True
        base = np.where(gone_known, 0, 2 - counts).astype(np.int64)
        never_seen = counts == 0
        n_gone = int(np.count_nonzero(self.status == GONE))
        m = (n_gone - 2 * int(np.count_nonzero(gone_known))) // 2
        m = max(0, min(m, int(np.count_nonzero(never_seen))))
        return base, never_seen, m

    def pool(self) -> np.ndarray:
        """float64[14]: expected number of each kind among the unknown face-down cards."""
        base, never_seen, m = self._accounting()
        pool = base.astype(np.float64)
        z = int(np.count_nonzero(never_seen))
        if m and z:
            pool[never_seen] -= 2.0 * m / z
        return np.maximum(pool, 0.0)

    def sample_layout(self, rng: np.random.Generator) -> np.ndarray:
        """int8[28]: a deal consistent with everything seen (gone unknowns get a kind too)."""
        base, never_seen, m = self._accounting()
        layout = self.seen.copy()
        gone_pairs = rng.choice(np.flatnonzero(never_seen), size=m, replace=False)
        rest = base.copy()
        rest[gone_pairs] -= 2
        unknown_down = np.flatnonzero((self.status == DOWN) & (self.seen < 0))
        cards = np.repeat(np.arange(NUM_KINDS, dtype=np.int8), np.maximum(rest, 0))
        if cards.size != unknown_down.size:  # inconsistent input; keep a legal deal
            cards = np.resize(cards, unknown_down.size)
        layout[unknown_down] = rng.permutation(cards)
        # gone positions never seen: whatever completes the deck (they play no part)
        unknown_gone = np.flatnonzero(layout < 0)
        placed = np.bincount(layout[layout >= 0], minlength=NUM_KINDS)
        missing = np.repeat(np.arange(NUM_KINDS, dtype=np.int8), np.maximum(2 - placed, 0))
        layout[unknown_gone] = np.resize(missing, unknown_gone.size)
        return layout

    def up_positions(self) -> np.ndarray:
        """Positions flipped earlier in the current turn and still face up."""
        return np.flatnonzero(self.status == UP)
