"""A fourth game, defined in ``tests/triples_game/`` and one registry row, gets every env
of the package from the shared layer: the AEC env, the Gymnasium view, the batched
vector env, the batched engine and the SB3 adapter, with no file of the package changed.
It passes the same checks as the three shipped games (the conformance tests of
``tests/test_all_games.py`` and the step-for-step differential tests of
``tests/test_batched_equals_scalar.py`` and ``tests/test_batched_engine_equals_scalar.py``,
called for it while its row is registered)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest
from memtab_env.agents import REGISTRY

import memtab_env
from memtab_env.errors import IllegalActionError, InvalidOptionError
from memtab_env.registry import GAMES, load
from tests import test_all_games
from tests.test_batched_engine_equals_scalar import compare_engine
from tests.test_batched_equals_scalar import compare
from tests.triples_game import SPEC
from tests.triples_game.rules import GONE, Triples

PACKAGE = Path(memtab_env.__file__).parent


@pytest.fixture(scope="module", autouse=True)
def triples_registered() -> Iterator[None]:
    """The game's registry row (and the generic uniform agent as its ``random``),
    registered with Gymnasium and PettingZoo as ``import memtab_env`` does."""
    import pettingzoo

    GAMES["triples"] = SPEC
    REGISTRY[("triples", "random")] = "memtab_env.agents.memory_board_agents:MemoryBoardRandomAgent"
    memtab_env._register()
    yield
    del GAMES["triples"], REGISTRY[("triples", "random")]
    del gymnasium.registry[SPEC.env_id]
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None:
        registry.pop(SPEC.pettingzoo_id, None)


def test_no_file_of_the_package_names_the_game() -> None:
    named = [p for p in PACKAGE.rglob("*.py") if "triples" in p.read_text(encoding="utf-8").lower()]
    assert named == []


def test_scripted_turns() -> None:
    game = Triples(num_kinds=2, num_players=2)
    st = game.from_layout(["T0", "T1", "T0", "T1", "T0", "T1"])
    for pos in (0, 1):
        assert not game.apply_inplace(st, pos).turn_over
    t = game.apply_inplace(st, 2)  # T0 T1 T0: no triple, face down again, next seat
    assert t.turn_over and t.next_player == 1 and (st.status == 0).all()
    game.apply_inplace(st, 1)
    with pytest.raises(IllegalActionError, match=r"flipped: \[0, 2, 3, 4, 5\]"):
        game.apply_inplace(st, 1)  # face up already
    with pytest.raises(IllegalActionError, match=r"in \[0, 5\], got 6"):
        game.apply_inplace(st, 6)
    game.apply_inplace(st, 3)
    t = game.apply_inplace(st, 5)  # a triple: taken, seat 1 plays again
    assert t.removed == [1, 3, 5] and t.next_player == 1 and st.triples.tolist() == [0, 1]
    assert (st.status[[1, 3, 5]] == GONE).all() and not st.over
    for pos in (0, 2, 4):
        t = game.apply_inplace(st, pos)
    assert t.game_over and st.over and game.winners(st) == [1] and game.scores(st).tolist() == [0, 2]
    with pytest.raises(InvalidOptionError, match="every kind 3 times"):
        game.from_layout([0, 0, 0, 0, 1, 1])


@pytest.mark.parametrize("check", ["test_pettingzoo_checkers", "test_registered_ids",
                                   "test_gymnasium_and_sb3_checkers",
                                   "test_specs_table_matches_the_code"])
def test_the_conformance_checks_of_every_game(check: str) -> None:
    getattr(test_all_games, check)("triples")


@pytest.mark.parametrize("memory", ["perfect", "none", "decay:0.3", "window:5"])
@pytest.mark.parametrize(("num_players", "seat", "reward"), [(1, 0, "turns"), (2, 1, "win"),
                                                             (3, "random", "score"),
                                                             (4, 3, "win")])
def test_batched_equals_scalar(memory: str, num_players: int, seat: object, reward: str) -> None:
    ended = compare(SPEC.env_id, 4, 150, seed=3, num_kinds=3, memory=memory, opponents="random",
                    num_players=num_players, learner_seat=seat, reward=reward)
    assert ended


@pytest.mark.parametrize(("memory", "reward"), [("perfect", "win"), ("none", "score"),
                                                ("decay:0.3", "turns"), ("window:5", "win")])
def test_batched_engine_equals_aec(memory: str, reward: str) -> None:
    assert compare_engine("triples", 3, 200, 5, memory, reward, num_kinds=3, num_players=2) > 0


def test_the_batch_refuses_an_opponent_it_cannot_play() -> None:
    with pytest.raises(InvalidOptionError, match=r"opponent 'greedy' cannot be played exactly"):
        gymnasium.make_vec(SPEC.env_id, num_envs=2, vectorization_mode="vector_entry_point",
                           opponents="greedy")


def test_maskable_ppo_trains_on_its_sb3_adapter() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import VecMonitor

    venv = VecMonitor(load(GAMES["triples"].sb3_vec_env)(num_envs=8, seed=0, num_kinds=3))
    assert get_action_masks(venv).shape == (8, 9)
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1,
                                    seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    model.learn(total_timesteps=512)
    assert len(model.ep_info_buffer) > 0
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(venv))
    _, _, _, infos = venv.step(actions)
    assert not any("illegal_action" in info for info in infos)
