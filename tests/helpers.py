"""Shared test helpers: hand-built layouts and scripted games."""

from __future__ import annotations

from typing import Any

import numpy as np
import pettingzoo
import pytest

from memtab_env.games.memtab.rules import CARD_CODES, CODE_TO_KIND, NUM_POSITIONS

#: PettingZoo's registry (``pettingzoo.make``) exists from 1.27; the floor is older
HAS_PZ_REGISTRY = hasattr(pettingzoo, "register")
needs_pz_registry = pytest.mark.skipif(
    not HAS_PZ_REGISTRY, reason=f"PettingZoo {pettingzoo.__version__} has no registry (1.27+)")


def make_aec(pettingzoo_id: str, **kwargs: Any) -> Any:
    """``pettingzoo.make("aec", id)`` where PettingZoo has a registry, else the game
    module's ``env()`` (what the registry entry points to)."""
    if HAS_PZ_REGISTRY:
        return pettingzoo.make("aec", pettingzoo_id, **kwargs)
    from memtab_env.registry import game_spec, load

    return load(f"{game_spec(pettingzoo_id).aec_module}:env")(**kwargs)


def layout_with(**fixed: str) -> list[str]:
    """A full MemTab layout with the given cards at the given positions (``p5="R4"``),
    the remaining cards filling the other positions in kind order."""
    layout: list[str | None] = [None] * NUM_POSITIONS
    counts = {c: 2 for c in CARD_CODES}
    for key, code in fixed.items():
        pos = int(key.lstrip("p"))
        layout[pos] = code
        counts[code] -= 1
        assert counts[code] >= 0, f"more than two {code}"
    rest = [c for c in CARD_CODES for _ in range(counts[c])]
    for i in range(NUM_POSITIONS):
        if layout[i] is None:
            layout[i] = rest.pop(0)
    return layout  # type: ignore[return-value]


def kinds(layout: list[str]) -> np.ndarray:
    return np.array([CODE_TO_KIND[c] for c in layout], dtype=np.int8)


def random_legal_game(game, rng: np.random.Generator, state=None):
    """Play random legal flips to the end; yield (state_before, action, transition)."""
    if state is None:
        state = game.new_game(rng)
    while not game.is_over(state):
        action = int(rng.choice(np.flatnonzero(game.legal_mask(state))))
        before = state.copy()
        t = game.apply_inplace(state, action)
        yield before, action, t, state
