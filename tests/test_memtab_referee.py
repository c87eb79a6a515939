"""Thousands of random games through ``pettingzoo.make("aec", "memtab/MemTab-v0")``, each
checked flip by flip against the independent referee in ``tests/referee.py``: every
revealed card, every change of player, the end, scores, winners and final rewards."""

from __future__ import annotations

import numpy as np
import pytest

import memtab_env  # noqa: F401 - registers the ids
from tests.helpers import make_aec
from tests.referee import Referee


@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5, 6])
def test_env_matches_the_referee(num_players):
    env = make_aec("memtab/MemTab-v0", num_players=num_players)
    rng = np.random.default_rng(100 + num_players)
    for game in range(300):
        env.reset(seed=game * 7 + num_players)
        rec = env.unwrapped.record()
        ref = Referee(rec["layout"], num_players)
        final = {}
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            if term or trunc:
                final[agent] = reward
                env.step(None)
                continue
            seat = int(agent.split("_")[1])
            assert seat == ref.player
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            assert legal == ref.legal()
            action = int(rng.choice(legal))
            card = ref.flip(action)
            env.step(action)
            assert env.unwrapped.record()["actions"][-1] == {
                "player": seat, "action": action, "card": card}
        rec = env.unwrapped.record()
        assert ref.over and rec["result"]["over"]
        assert rec["result"]["scores"] == ref.scores()
        assert rec["result"]["winners"] == ref.winners()
        assert rec["result"]["instant_win"] == ref.instant
        assert [final[f"player_{p}"] for p in range(num_players)] == pytest.approx(ref.rewards())
        assert rec["result"]["rewards"] == pytest.approx(ref.rewards())
