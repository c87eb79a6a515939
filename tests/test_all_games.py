"""Every registered game passes the same conformance checks through the shared env layer."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import memtab_env
from memtab_env.play import make_raw_env
from memtab_env.record import replay
from memtab_env.registry import GAMES, load
from tests.helpers import needs_pz_registry

NAMES = sorted(GAMES)


def module(name):
    return importlib.import_module(GAMES[name].aec_module)


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_checkers(name):
    mod = module(name)
    api_test(mod.env(), num_cycles=300)
    api_test(mod.raw_env(memory="none"), num_cycles=300)
    seed_test(lambda: mod.env(memory="decay:0.2"), num_cycles=300)
    render_test(lambda render_mode=None: mod.env(render_mode=render_mode))


@needs_pz_registry
@pytest.mark.parametrize("name", NAMES)
def test_registered_ids(name):
    spec = GAMES[name]
    env = pettingzoo.make("aec", spec.pettingzoo_id)
    env.reset(seed=0)
    assert env.unwrapped.game_spec is spec
    genv = gym.make(spec.env_id)
    assert genv.spec.max_episode_steps == spec.max_episode_steps


@pytest.mark.parametrize("name", NAMES)
def test_gymnasium_and_sb3_checkers(name):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(GAMES[name].env_id)
    check_env(env.unwrapped)
    sb3_check_env(gym.make(GAMES[name].env_id, obs_mode="dict").unwrapped)


@pytest.mark.parametrize("name", NAMES)
def test_specs_table_matches_the_code(name):
    mod = module(name)
    doc = mod.__doc__
    raw = mod.raw_env()
    for section in ("Description", "Rules", "Specs", "Observation", "Action", "Rewards",
                    "Episode End", "Arguments", "Registered Configurations", "Version History"):
        assert re.search(rf"^{section}\n-+$", doc, re.M), f"missing section {section}"
    n_actions = raw.action_space(raw.possible_agents[0]).n
    assert f"Discrete({n_actions})" in doc
    parallel = re.search(r"Parallel API\s+(\w+)", doc).group(1)
    assert (parallel == "Yes") == raw.metadata["is_parallelizable"]
    shape = raw.observation_space(raw.possible_agents[0])["observation"].shape[0]
    assert f"({shape},)" in doc, f"observation shape ({shape},) not in the Specs table"
    assert raw.metadata["name"] == mod.__name__.rsplit(".", 1)[1]
    assert GAMES[name].pettingzoo_id in doc and GAMES[name].env_id in doc


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("memory", ["perfect", "none", "window:3"])
def test_random_games_end_in_bounds_and_replay(name, memory):
    env = make_raw_env(name, num_players=2, memory=memory)
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        steps = 0
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert obs["action_mask"].any(), "empty mask before the end"
            assert not (obs["remembered_mask"] & ~env.game.face_down(env.game_state)).any()
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        assert steps <= env.game.info.max_game_length
        rec = env.record()
        assert rec["result"]["over"] and rec["env_id"] == GAMES[name].env_id
        flips = [a for a in rec["actions"] if a["action"] < env.game.info.num_positions]
        assert flips and all(a["card"] == rec["layout"][a["action"]] for a in flips)
        replay(rec)


def test_every_game_has_a_rules_page_in_the_readme():
    text = open("README.md").read()
    for spec in GAMES.values():
        assert spec.env_id in text and spec.pettingzoo_id in text


@pytest.mark.parametrize("name", NAMES)
def test_every_game_is_one_folder(name):
    """A game's parts live in its folder ``memtab_env/games/<name>/`` and load from its
    registry row; the folder's ``__init__`` (the rules summary) exports the engine."""
    spec = GAMES[name]
    folder = f"memtab_env.games.{name}"
    parts = {"engine": spec.engine, "encoder": spec.encoder, "renderer": spec.renderer,
             "vector_entry_point": spec.vector_entry_point, "batched_engine": spec.batched_engine,
             "sb3_vec_env": spec.sb3_vec_env, "jax_rules": spec.jax_rules}
    optional = {"sb3_vec_env": "stable_baselines3", "jax_rules": "jax"}
    modules = {folder, *(f"{folder}.{m}" for m in ("rules", "observation", "render", "batched",
                                                   "vector_env", "sb3_vec_env", "jax_env"))}
    for field, path in parts.items():
        if path is None:
            continue
        assert path.partition(":")[0] in modules, (field, path)
        if field in optional and importlib.util.find_spec(optional[field]) is None:
            continue
        assert isinstance(load(path), type), (field, path)
    package = importlib.import_module(folder)
    assert f"docs/rules/{name}.md" in package.__doc__  # the rules page it sums up
    engine_cls = spec.engine.rpartition(":")[2]
    assert getattr(package, engine_cls) is load(f"{folder}.rules:{engine_cls}")


def test_no_game_owns_a_generic_module_name():
    """The modules each game once owned under generic or game-prefixed names are gone:
    shared folders hold what every game shares."""
    root = Path(memtab_env.__file__).parent
    for gone in ("render.py", "render_pelmanism.py", "render_memory_board.py", "vector/kernels.py",
                 "vector/engine.py", "vector/gym_vector.py", "vector/pelmanism.py",
                 "vector/pelmanism_kernels.py", "vector/pelmanism_gym.py", "vector/board.py",
                 "vector/board_kernels.py", "jax/memtab.py", "jax/pelmanism.py",
                 "observations/memtab.py", "observations/pelmanism.py", "observations/memory_board.py",
                 "games/memtab_kernels.py", "games/pelmanism_values.py"):
        assert not (root / gone).exists(), gone
    assert not (root.parent / "agents" / "basic.py").exists()


def test_package_version():
    assert memtab_env.__version__


TINY_BOARD = {
    "name": "tiny", "rows": 2, "cols": 4,
    "landscapes": [
        {"letter": "Y", "name": "farmland", "pictures": ["tractor", "scarecrow"]},
        {"letter": "B", "name": "river", "pictures": ["fish", "duck"]},
    ],
    "grid": ["YYBB", "YYBB"],
    "trunks": {"1": 2, "2": 2, "3": 1, "4": 1},
}


@pytest.mark.parametrize("env_id,options,opponent", [
    ("MemoryBoard-v0", {"board": TINY_BOARD, "num_players": 3}, "greedy"),
    ("Pelmanism-v0", {"deck": "pairs:5", "num_players": 2}, "greedy"),
    ("Pelmanism-v0", {"deck": "quartets:3", "num_players": 4}, "greedy"),
])
def test_named_opponents_get_the_env_game_options(env_id, options, opponent):
    """A built-in opponent named in the Gymnasium view plays the env's own board or deck
    (a greedy board agent built for the default board could not read a custom board's
    observations)."""
    env = gym.make(env_id, opponents=opponent, learner_seat="random", **options)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = term or trunc
        assert term and info["winners"]
        replay(env.unwrapped.record())
