"""Hypothesis properties of the MemTab engine, memory models and observations."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memtab_env.games.memtab.observation import MemTabEncoder
from memtab_env.games.memtab.rules import DOWN, GONE, NUM_KINDS, TABLEAU, UP, MemTab
from memtab_env.memory import Memory

players = st.integers(1, 6)
seeds = st.integers(0, 2**32 - 1)
memories = st.sampled_from(["perfect", "none", "decay:0.3", "window:5", "window:0", "decay:1"])


@settings(max_examples=60, deadline=None)
@given(n=players, seed=seeds)
def test_invariants_hold_after_every_flip(n, seed):
    g = MemTab(n)
    rng = np.random.default_rng(seed)
    s = g.new_game(rng)
    turns_started = 1
    while not s.over:
        mask = g.legal_mask(s)
        assert mask.any(), "mask empty before the end"
        before = s.copy()
        a = int(rng.choice(np.flatnonzero(mask)))
        new, t = g.apply(s, a)
        assert s == before, "apply changed its input"
        s = new
        # cards conserved: 28 positions, every kind twice, gone cards leave in pairs
        assert np.bincount(s.layout, minlength=NUM_KINDS).tolist() == [2] * NUM_KINDS
        gone = s.status == GONE
        assert all(np.count_nonzero(gone & (s.layout == k)) in (0, 2) for k in range(NUM_KINDS))
        # never two of a kind in one tableau
        for p in range(n):
            held = s.layout[(s.status == TABLEAU) & (s.owner == p)]
            assert len(set(held.tolist())) == len(held)
        assert ((s.owner >= 0) == (s.status == TABLEAU)).all()
        # face-up cards exist only mid-turn: never at a turn's start
        if s.flip == 0:
            assert np.count_nonzero(s.status == UP) == 0
        if t.turn_over and not s.over:
            turns_started += 1
            assert np.count_nonzero(s.status == UP) == 0
            assert np.count_nonzero(s.status == DOWN) >= 3
    assert turns_started <= g.info.max_turns
    assert s.turn - 1 <= g.info.max_turns
    assert not g.legal_mask(s).any()


def _play_actions(layout, n, actions, memory):
    """Replay ``actions`` on ``layout``; return every observer's observation after each flip."""
    g = MemTab(n)
    enc = MemTabEncoder(g)
    s = g.from_layout(layout)
    mem = Memory(memory, n, 28, seed=123)
    out = []
    for a in actions:
        t = g.apply_inplace(s, a)
        mem.on_action(t.player, [p for p, _ in t.revealed])
        out.append([enc.encode(s, o, mem.remembered(o, g.face_down(s))) for o in range(n)])
    return out


@settings(max_examples=60, deadline=None)
@given(n=players, seed=seeds, memory=memories)
def test_unseen_cards_never_leak_into_observations(n, seed, memory):
    """Two deals that differ only in cards never revealed give identical observations."""
    g = MemTab(n)
    rng = np.random.default_rng(seed)
    s = g.new_game(rng)
    layout = s.layout.copy()
    actions = []
    while not s.over:
        a = int(rng.choice(np.flatnonzero(g.legal_mask(s))))
        actions.append(a)
        g.apply_inplace(s, a)
    never = sorted(set(range(28)) - set(actions))
    other = layout.copy()
    other[never] = rng.permutation(layout[never])
    if len(never) >= 2:  # make sure the two deals really differ
        other[never] = np.roll(layout[never], 1)
    a_obs = _play_actions(layout, n, actions, memory)
    b_obs = _play_actions(other, n, actions, memory)
    for step, (xa, xb) in enumerate(zip(a_obs, b_obs, strict=True)):
        for o in range(n):
            assert np.array_equal(xa[o], xb[o]), f"leak at step {step}, observer {o}"


@settings(max_examples=40, deadline=None)
@given(n=players, seed=seeds, memory=memories)
def test_observation_stays_in_its_space_and_never_shows_more_than_perfect(n, seed, memory):
    g = MemTab(n)
    enc = MemTabEncoder(g)
    rng = np.random.default_rng(seed)
    s = g.new_game(rng)
    mem = Memory(memory, n, 28, seed=seed)
    perfect = Memory("perfect", n, 28)
    while not s.over:
        a = int(rng.choice(np.flatnonzero(g.legal_mask(s))))
        t = g.apply_inplace(s, a)
        for m in (mem, perfect):
            m.on_action(t.player, [p for p, _ in t.revealed])
        fd = g.face_down(s)
        for o in range(n):
            r = mem.remembered(o, fd)
            assert not (r & ~perfect.remembered(o, fd)).any()
            assert not (r & ~fd).any()
            x = enc.encode(s, o, r)
            assert x.dtype == np.int8 and x.shape == (enc.size,)
            assert (x >= enc.low).all() and (x <= enc.high).all()
            card = enc.views(x)["card"]
            # a card is shown exactly where it is up, in a tableau, or remembered
            shown = card.any(axis=1)
            want = (s.status == UP) | (s.status == TABLEAU) | r
            assert np.array_equal(shown, want)
            assert (card.argmax(axis=1)[shown] == s.layout[shown]).all()
