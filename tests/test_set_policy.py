"""The set network of ``policy: set`` (agents/set_policy.py): permutation equivariance of
the logits and invariance of the value, for MemTab and Pelmanism observations taken from
real games, and the layout checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from memtab_env.agents.set_policy import MemTabSetNet, token_layout

from memtab_env import agents
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
    with pytest.raises(ValueError, match="no set layout for game 'chess'"):
        token_layout("chess")


TINY_BOARD = {  # rows swapped, the board is the same: a symmetry of its neighbour graph
    "name": "tiny", "rows": 2, "cols": 4,
    "landscapes": [
        {"letter": "Y", "name": "farmland", "pictures": ["tractor", "scarecrow"]},
        {"letter": "B", "name": "river", "pictures": ["fish", "duck"]},
    ],
    "grid": ["YYBB", "YYBB"],
    "trunks": {"1": 2, "2": 2, "3": 1, "4": 1},
}


def test_board_network_is_equivariant_under_the_board_symmetries():
    """Memory: The Board Game: two logits per space (flip, place) in action order, then end
    and pass. Swapping the rows of a board whose rows are alike permutes the spaces'
    logits and leaves end, pass and the value unchanged."""
    th.manual_seed(0)
    options = {"num_players": 2, "board": TINY_BOARD}
    layout = token_layout("memory_board", **options)
    obs = observations("memory_board", **options)
    net = MemTabSetNet(layout["size"], dim=16, layers=2, layout=layout).eval()
    p = layout["positions"]
    perm = np.array([4, 5, 6, 7, 0, 1, 2, 3])  # space (r, c) <- (1 - r, c)
    permuted = obs.copy()
    for lo, hi in [layout["status"], layout["card"], *layout["extra_tokens"]]:
        block = obs[:, lo:hi].reshape(len(obs), p, -1)
        permuted[:, lo:hi] = block[:, perm].reshape(len(obs), -1)
    with th.no_grad():
        logits, value = net(th.as_tensor(obs))
        logits_p, value_p = net(th.as_tensor(permuted))
    assert logits.shape == (len(obs), 2 * p + 2)
    want = np.concatenate([logits.numpy()[:, :p][:, perm], logits.numpy()[:, p : 2 * p][:, perm],
                           logits.numpy()[:, 2 * p :]], 1)
    np.testing.assert_allclose(logits_p.numpy(), want, atol=1e-5)
    np.testing.assert_allclose(value_p.numpy(), value.numpy(), atol=1e-5)
    # a permutation that is not a symmetry (it breaks neighbours) changes the logits
    other = np.array([0, 2, 1, 3, 4, 6, 5, 7])
    broken = obs.copy()
    for lo, hi in [layout["status"], layout["card"], *layout["extra_tokens"]]:
        block = obs[:, lo:hi].reshape(len(obs), p, -1)
        broken[:, lo:hi] = block[:, other].reshape(len(obs), -1)
    with th.no_grad():
        logits_b, _ = net(th.as_tensor(broken))
    want_b = np.concatenate([logits.numpy()[:, :p][:, other], logits.numpy()[:, p : 2 * p][:, other],
                             logits.numpy()[:, 2 * p :]], 1)
    assert not np.allclose(logits_b.numpy(), want_b, atol=1e-5)
