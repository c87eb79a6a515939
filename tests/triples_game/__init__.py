"""Triples, a fourth game that lives in the tests: one folder and one registry row
(:data:`SPEC`) give it every env of the package (``docs/adding_a_game.md``)."""

from __future__ import annotations

from memtab_env.registry import GameSpec

#: the game's registry row (``memtab_env.registry.GAMES["triples"]`` while a test uses it)
SPEC = GameSpec(
    name="triples",
    env_id="Triples-v0",
    engine="tests.triples_game.rules:Triples",
    encoder="tests.triples_game.observation:TriplesEncoder",
    renderer="tests.triples_game.render:TriplesRenderer",
    aec_module="tests.triples_game.triples_v0",
    max_episode_steps=2000,
    vector_entry_point="tests.triples_game.vector_env:TriplesVectorEnv",
    batched_engine="tests.triples_game.batched:BatchedTriples",
    sb3_vec_env="tests.triples_game.sb3_vec_env:TriplesSB3VecEnv",
)
