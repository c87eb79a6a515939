"""The batched single-agent view is the scalar one, step for step, for every game.

``gymnasium.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point", **options)``
against B scalar ``gymnasium.make(id, **options)`` envs, slot ``i`` seeded ``seed + i``
(``reset(seed=seed)`` on the vector env), both sent the same actions (random legal
flips, now and then an illegal one): observations, action masks, rewards, terminations,
truncations, illegal-action flags, final observations and results (scores, winners,
flips, game seeds, learner seats) must be equal after every step and across auto-resets (the scalar env
is reset without a seed when its episode ends, as the vector env's next episode is).

Every registered game with a ``vector_entry_point`` is checked under every memory model,
with ``random`` and ``greedy`` opponents (and a mix), 1 to 4 players, a fixed and a random
learner seat, and every reward scheme. A game registered without one fails :func:`test_every_game_is_batched`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest

import memtab_env  # noqa: F401 - registers the games
from memtab_env.errors import InvalidOptionError
from memtab_env.registry import GAMES

MEMORIES = ("perfect", "none", "decay:0.3", "window:5")
#: the reward scheme of each memory model's cases: every scheme is compared
REWARDS = ("win", "score", "turns", "win")
#: small configurations per game, so that many episodes end within the test
GAME_OPTIONS: dict[str, dict[str, Any]] = {
    "memtab": {},
    "pelmanism": {"deck": "pairs:6"},
    "memory_board": {"max_turns": 30},
}


def _actions(masks: np.ndarray, rng: np.random.Generator, illegal_rate: float) -> np.ndarray:
    """A uniform legal action per env, now and then an illegal one."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        bad = np.flatnonzero(m == 0)
        if bad.size and rng.random() < illegal_rate:
            out[i] = rng.choice(bad)
        else:
            out[i] = rng.choice(np.flatnonzero(m))
    return out


def compare(env_id: str, num_envs: int, steps: int, seed: int, **options: Any) -> list[Any]:
    """Step both views side by side; returns the scalar states of the episodes that
    ended (terminated or truncated)."""
    venv = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                              **options)
    envs = [gymnasium.make(env_id, **options) for _ in range(num_envs)]
    obs, info = venv.reset(seed=seed)
    for i, env in enumerate(envs):
        o, inf = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs[i], o, err_msg=f"reset, env {i}")
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
        assert info["learner_seat"][i] == inf["learner_seat"], f"reset, env {i}"
    rng = np.random.default_rng(seed)
    ended = []
    for t in range(steps):
        actions = _actions(venv.action_masks(), rng, 0.05)
        obs, rew, term, trunc, info = venv.step(actions)
        for i, env in enumerate(envs):
            where = f"step {t}, env {i}"
            o, r, te, tr, inf = env.step(int(actions[i]))
            assert (r, te, tr) == (rew[i], term[i], trunc[i]), where
            assert inf["illegal_action"] == info["illegal_action"][i], where
            if te or tr:
                ended.append(env.unwrapped.aec.game_state)
                np.testing.assert_array_equal(info["final_obs"][i], o, err_msg=where)
                fi = info["final_info"]
                aec = env.unwrapped.aec
                assert fi["flips"][i] == sum(bool(t.revealed) for t in aec._transitions), where
                assert fi["game_seed"][i] == aec.game_seed, where
                assert fi["learner_seat"][i] == inf["learner_seat"], where
                if te:
                    assert fi["scores"][i].tolist() == inf["scores"], where
                    assert np.flatnonzero(fi["winners"][i]).tolist() == inf["winners"], where
                o, inf = env.reset()
                assert info["learner_seat"][i] == inf["learner_seat"], where
            np.testing.assert_array_equal(obs[i], o, err_msg=where)
            np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"],
                                          err_msg=where)
    venv.close()
    return ended


def _cases() -> list[Any]:
    cases = []
    for name in GAMES:
        for memory in MEMORIES:
            for opponents in ("random", "greedy"):
                for n in (1, 2, 3, 4):
                    if n == 1 and opponents == "greedy":
                        continue  # no opponent: the random case covers it
                    seat = "random" if n == 3 else n - 1
                    cases.append(pytest.param(name, memory, opponents, n, seat,
                                              id=f"{name}-{memory}-{opponents}-{n}p-seat{seat}"))
        cases.append(pytest.param(name, "decay:0.2", ["greedy", "random"], 3, 1,
                                  id=f"{name}-mixed-opponents"))
    return cases


@pytest.mark.parametrize(("name", "memory", "opponents", "num_players", "seat"), _cases())
def test_batched_equals_scalar(name: str, memory: str, opponents: Any, num_players: int,
                               seat: Any) -> None:
    spec = GAMES[name]
    if spec.vector_entry_point is None:
        pytest.skip(f"{spec.env_id} has no batched view (test_every_game_is_batched fails)")
    reward = REWARDS[MEMORIES.index(memory) % len(REWARDS)] if memory in MEMORIES else "score"
    options = dict(GAME_OPTIONS[name], memory=memory, opponents=opponents,
                   num_players=num_players, learner_seat=seat, reward=reward)
    assert compare(spec.env_id, 4, 150, seed=7, **options)


#: 2 x 8 spaces, two landscapes, 8 pairs: random play reaches the endgame
SMALL_BOARD = {
    "name": "small",
    "rows": 2,
    "cols": 8,
    "landscapes": [
        {"letter": "Y", "name": "farmland", "pictures": ["tractor", "scarecrow", "hay", "corn"]},
        {"letter": "B", "name": "river", "pictures": ["fish", "duck", "frog", "boat"]},
    ],
    "grid": ["YYYYBBBB", "YYYYBBBB"],
}


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("variant", ["standard", "children"])
@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("opponents", ["random", "greedy"])
def test_board_game_endgames(memory: str, variant: str, num_players: int, opponents: str) -> None:
    """Returns, the final round and the children's returns: games on a small board end."""
    from memtab_env.games.memory_board.rules import MAIN

    ended = compare("MemoryBoard-v0", 4, 150, seed=3, board=SMALL_BOARD, variant=variant,
                    memory=memory, num_players=num_players, learner_seat=num_players - 1,
                    reward="score", opponents=opponents)
    assert sum(st.over and st.stage != MAIN for st in ended) >= 4


def test_every_game_is_batched() -> None:
    missing = [s.env_id for s in GAMES.values() if s.vector_entry_point is None]
    assert not missing, f"games without a batched view: {missing}"


@pytest.mark.parametrize("name", list(GAMES))
def test_batch_refuses_opponents_it_cannot_play(name: str) -> None:
    spec = GAMES[name]
    if spec.vector_entry_point is None:
        pytest.skip(f"{spec.env_id} has no batched view")
    with pytest.raises(InvalidOptionError, match="'nobody'.*allowed"):
        gymnasium.make_vec(spec.env_id, num_envs=2, vectorization_mode="vector_entry_point",
                           opponents="nobody", **GAME_OPTIONS[name])


@pytest.mark.parametrize("seed", range(6))
def test_redeal_cap_is_the_scalar_one(seed: int) -> None:
    """A one-pair deck: the first seat takes it, so a learner drawn to the second seat
    never plays; both views give up after the same number of redeals, with one error."""
    options = dict(deck="pairs:1", num_players=2, learner_seat="random", opponents="random")
    env = gymnasium.make("Pelmanism-v0", **options)
    venv = gymnasium.make_vec("Pelmanism-v0", num_envs=1, vectorization_mode="vector_entry_point",
                              **options)
    try:
        obs, info = env.reset(seed=seed)
    except InvalidOptionError as exc:
        with pytest.raises(InvalidOptionError) as got:
            venv.reset(seed=seed)
        assert str(exc) in str(got.value)
        assert "100 deals in a row" in str(exc)
        return
    vobs, vinfo = venv.reset(seed=seed)
    np.testing.assert_array_equal(vobs[0], obs)
    assert vinfo["learner_seat"][0] == info["learner_seat"] == 0
