"""``TriplesVectorEnv``: the single-agent Triples view for B games at once, over the
shared loop (``gymnasium.make_vec("Triples-v0", vectorization_mode="vector_entry_point")``)."""

from __future__ import annotations

from memtab_env.vector.vector_env_base import BatchedVectorView


class TriplesVectorEnv(BatchedVectorView):
    """B single-agent Triples games; arguments as ``MemTabVectorEnv`` with the game's
    options (``num_kinds``, ``num_players``, ``first_player``). The batch plays the
    ``random`` opponent only (the game has no other)."""

    game_name = "triples"
    game_options = ("first_player", "num_kinds", "num_players")
    opponent_names = ("random",)
