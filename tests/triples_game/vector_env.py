"""``TriplesVectorEnv``: the single-agent Triples view for B games at once, over the
shared loop (``gymnasium.make_vec("Triples-v0", vectorization_mode="vector_entry_point")``)."""

from __future__ import annotations

from typing import Any

from memtab_env.vector.vector_env_base import BatchedVectorView
from tests.triples_game.batched import BatchedTriples


class TriplesVectorEnv(BatchedVectorView):
    """B single-agent Triples games; arguments as ``MemTabVectorEnv`` with the game's
    options (``num_kinds``, ``num_players``, ``first_player``). The batch plays the
    ``random`` opponent only (the game has no other)."""

    game_name = "triples"
    game_options = ("first_player", "num_kinds", "num_players")
    render_hint = "tests.triples_game.render"
    opponent_names = ("random",)

    def _make_engine(self, num_envs: int, memory: str, reward: str, parallel: bool | int | None,
                     game_options: dict[str, Any]) -> BatchedTriples:
        return BatchedTriples(num_envs, memory=memory, reward=reward, parallel=parallel,
                              **game_options)
