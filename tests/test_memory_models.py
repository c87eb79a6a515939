"""Memory models: exact semantics on scripted reveal sequences, seeding, and parsing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtab_env.errors import InvalidOptionError
from memtab_env.memory import Memory, MemorySpec, parse_memory

ALL_DOWN = np.ones(8, dtype=bool)


def feed(mem, events):
    for actor, revealed in events:
        mem.on_action(actor, revealed)


def test_perfect_remembers_every_reveal_while_face_down():
    m = Memory("perfect", 2, 8)
    feed(m, [(0, [1]), (0, [2]), (1, [5])])
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [1, 2, 5]
    assert np.flatnonzero(m.remembered(1, ALL_DOWN)).tolist() == [1, 2, 5]
    fd = ALL_DOWN.copy()
    fd[2] = False  # taken: no longer face down, not "remembered"
    assert np.flatnonzero(m.remembered(1, fd)).tolist() == [1, 5]


def test_none_keeps_the_own_last_flip_and_what_others_revealed_since():
    m = Memory("none", 3, 8)
    feed(m, [(0, [1]), (0, [2]), (1, [3]), (1, [4]), (2, [5])])
    # player 0's last flip revealed 2, then others revealed 3, 4, 5; its flip 1 is forgotten
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [2, 3, 4, 5]
    # player 1: its last flip (4), then 5
    assert np.flatnonzero(m.remembered(1, ALL_DOWN)).tolist() == [4, 5]
    # player 2 just acted: only what its flip revealed
    assert np.flatnonzero(m.remembered(2, ALL_DOWN)).tolist() == [5]
    feed(m, [(0, [6])])
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [6]
    assert np.flatnonzero(m.remembered(2, ALL_DOWN)).tolist() == [5, 6]


def test_none_counts_a_card_revealed_again_from_its_latest_reveal():
    m = Memory("none", 2, 8)
    feed(m, [(1, [3]), (0, [4]), (1, [3])])
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [3, 4]
    feed(m, [(0, [5])])  # 3's latest reveal is older than 0's last flip now
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [5]


def test_window_keeps_the_k_latest_reveals():
    m = Memory("window:2", 2, 8)
    feed(m, [(0, [1]), (0, [2]), (1, [3])])
    assert np.flatnonzero(m.remembered(0, ALL_DOWN)).tolist() == [2, 3]
    feed(m, [(1, [1])])  # 1 revealed again: latest two are 3 and 1
    assert np.flatnonzero(m.remembered(1, ALL_DOWN)).tolist() == [1, 3]
    m0 = Memory("window:0", 2, 8)
    feed(m0, [(0, [1])])
    assert not m0.remembered(0, ALL_DOWN).any()


def test_decay_extremes_and_determinism():
    keep = Memory("decay:0", 2, 8, seed=1)
    lose = Memory("decay:1", 2, 8, seed=1)
    for m in (keep, lose):
        feed(m, [(0, [1]), (1, [2]), (0, [3])])
    assert np.flatnonzero(keep.remembered(0, ALL_DOWN)).tolist() == [1, 2, 3]
    # with p = 1 everything older than the latest flip is forgotten
    assert np.flatnonzero(lose.remembered(1, ALL_DOWN)).tolist() == [3]

    def run(seed):
        m = Memory("decay:0.4", 3, 8, seed=seed)
        rng = np.random.default_rng(0)
        out = []
        for i in range(40):
            m.on_action(i % 3, [int(rng.integers(8))])
            out.append(np.stack([m.remembered(o, ALL_DOWN) for o in range(3)]))
        return np.stack(out)

    a, b, c = run(7), run(7), run(8)
    assert np.array_equal(a, b), "same seed, same forgetting"
    assert not np.array_equal(a, c)
    # observers forget independently
    assert not np.array_equal(a[:, 0], a[:, 1])


def test_decay_rate_matches_p():
    p = 0.25
    m = Memory(f"decay:{p}", 1, 2, seed=3)
    kept = 0
    trials = 4000
    for _ in range(trials):
        m.on_action(0, [0])  # 0 known now
        m.on_action(0, [1])  # one flip: 0 survives with prob 1 - p
        kept += bool(m.remembered(0, np.array([True, False]))[0])
    assert abs(kept / trials - (1 - p)) < 4 * np.sqrt(p * (1 - p) / trials)


@pytest.mark.parametrize("spec,parsed", [
    ("perfect", MemorySpec("perfect")), ("none", MemorySpec("none")),
    ("decay:0.1", MemorySpec("decay", 0.1)), ("window:6", MemorySpec("window", 6)),
])
def test_parse(spec, parsed):
    assert parse_memory(spec) == parsed
    assert str(parse_memory(spec)) == spec


@pytest.mark.parametrize("spec", ["", "full", "decay", "decay:x", "decay:1.5", "decay:-0.1",
                                  "window", "window:-1", "window:2.5", "perfect:1", 3])
def test_parse_rejects_with_allowed_values(spec):
    with pytest.raises(InvalidOptionError, match="perfect"):
        parse_memory(spec)


def _reference_known(spec: str, n: int, p: int, history) -> np.ndarray:
    """What every observer remembers, straight from the definitions in docs/rulings.md (sets of
    reveals, no shared bookkeeping with memtab_env.memory)."""
    kind, _, arg = spec.partition(":")
    reveals: list[tuple[int, int]] = []  # (actor, position) in order
    starts: dict[int, int] = {}  # actor -> index of its latest action's first reveal
    for actor, revealed in history:
        starts[actor] = len(reveals)
        reveals += [(actor, q) for q in revealed]
    known = np.zeros((n, p), dtype=bool)
    latest = {q: i for i, (_, q) in enumerate(reveals)}  # a card counts from its latest reveal
    for o in range(n):
        for q, i in latest.items():
            if kind == "perfect":
                known[o, q] = True
            elif kind == "none":
                known[o, q] = i >= starts.get(o, 0)
            else:  # window:k
                known[o, q] = i >= len(reveals) - int(arg)
    return known


def _reference_decay(p_forget: float, n: int, p: int, history, seed: int) -> list[np.ndarray]:
    """What every observer remembers under ``decay:p`` after each action, from the
    definition with numpy's own generators: observer o draws from
    ``default_rng(SeedSequence(seed).spawn(n)[o])``, one uniform per remembered card in
    position order at every reveal (a card is forgotten when its uniform is below p, when
    p > 0), then every observer remembers the card revealed."""
    streams = [np.random.default_rng(c) for c in np.random.SeedSequence(seed).spawn(n)]
    known = np.zeros((n, p), dtype=bool)
    out = []
    for _actor, revealed in history:
        for q in revealed:
            for o in range(n):
                idx = np.flatnonzero(known[o])
                if p_forget > 0.0 and idx.size:
                    known[o, idx[streams[o].random(idx.size) < p_forget]] = False
            known[:, q] = True
        out.append(known.copy())
    return out


@given(st.sampled_from([0.0, 0.05, 0.3, 0.7, 1.0]), st.integers(1, 4), st.integers(0, 2**62),
       st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 9), max_size=2)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_decay_draws_as_numpy_generators_on_any_history(p_forget, n, seed, history):
    """The decay kernel's forgetting streams are numpy's PCG64 draws, double for double."""
    history = [(a % n, r) for a, r in history]
    m = Memory(f"decay:{p_forget}", n, 10, seed=seed)
    for t, want in enumerate(_reference_decay(p_forget, n, 10, history, seed)):
        m.on_action(*history[t])
        np.testing.assert_array_equal(m.known, want)


@given(st.sampled_from(["perfect", "none", "window:0", "window:1", "window:3", "window:7"]),
       st.integers(1, 4),
       st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 9), max_size=2)), max_size=40))
@settings(max_examples=300, deadline=None)
def test_memory_matches_the_definitions_on_any_history(spec, n, history):
    """Memory keeps reveal times and thresholds; it must remember exactly what the
    definitions say, after every action (several reveals per action included)."""
    history = [(a % n, r) for a, r in history]
    m = Memory(spec, n, 10)
    for t in range(len(history)):
        m.on_action(*history[t])
        want = _reference_known(spec, n, 10, history[: t + 1])
        np.testing.assert_array_equal(m.known, want)
        for o in range(n):
            values, threshold = m.source(o)
            np.testing.assert_array_equal(values > threshold, want[o])
