"""The set network of ``policy: set`` (agents/set_policy.py): permutation equivariance of
the logits and invariance of the value, for MemTab and Pelmanism observations taken from
real games, and the layout checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th

import agents
from agents.set_policy import MemTabSetNet, token_layout
from memtab_env.play import make_raw_env


def observations(game: str, **options) -> np.ndarray:
    """Observations of the player on turn along one random game."""
    env = make_raw_env(game, **options)
    env.reset(seed=3)
    player = agents.make("random", game=game)
    player.reset(seed=4)
    out = []
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        out.append(obs["observation"].astype(np.float32))
        env.step(player.act(obs))
    return np.stack(out[:: max(1, len(out) // 12)])


def permute(obs: np.ndarray, layout: dict, perm: np.ndarray) -> np.ndarray:
    """``obs`` with the positions relabelled: position i of the result is ``perm[i]``."""
    out = obs.copy()
    p = layout["positions"]
    for name in ("status", "card"):
        lo, hi = layout[name]
        block = obs[:, lo:hi].reshape(len(obs), p, -1)
        out[:, lo:hi] = block[:, perm].reshape(len(obs), -1)
    return out


CASES = [
    ("memtab", {"num_players": 2}),
    ("memtab", {"num_players": 4}),
    ("pelmanism", {"num_players": 2, "deck": "pairs:8"}),
    ("pelmanism", {"num_players": 3, "deck": "standard"}),
]


@pytest.mark.parametrize("game,options", CASES, ids=lambda v: str(v))
def test_logits_are_equivariant_and_value_invariant(game, options):
    th.manual_seed(0)
    layout = token_layout(game, **options)
    obs = observations(game, **options)
    assert obs.shape[1] == layout["size"]
    net = MemTabSetNet(layout["size"], dim=16, layers=2, layout=layout).eval()
    perm = np.random.default_rng(0).permutation(layout["positions"])
    with th.no_grad():
        logits, value = net(th.as_tensor(obs))
        logits_p, value_p = net(th.as_tensor(permute(obs, layout, perm)))
    assert logits.shape == (len(obs), layout["positions"])
    np.testing.assert_allclose(logits_p.numpy(), logits.numpy()[:, perm], atol=1e-5)
    np.testing.assert_allclose(value_p.numpy(), value.numpy(), atol=1e-5)
    # and the network does look at the cards: a different observation, other logits
    assert not np.allclose(logits.numpy()[0], logits.numpy()[-1])


def test_memtab_layout_is_inferred_from_the_observation_length():
    for n in (1, 2, 6):
        layout = token_layout("memtab", num_players=n)
        net = MemTabSetNet(layout["size"])
        assert net.num_players == n and net.positions == 28


def test_a_layout_for_another_observation_is_refused():
    layout = token_layout("pelmanism", deck="pairs:8", num_players=2)
    with pytest.raises(ValueError, match="observations of 182 values, got 190"):
        MemTabSetNet(190, layout=layout)
    with pytest.raises(ValueError, match="no set layout for game 'memory_board'"):
        token_layout("memory_board")
