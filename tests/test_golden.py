"""Golden playthroughs: seeded games dumped to text and compared line by line.

A change in rules, observations, memory models, rewards or rendering shows up as a diff.
Regenerate only on purpose: ``MEMTAB_REGEN_GOLDEN=1 pytest tests/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from memtab_env import memtab_v0

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "memtab_2p_perfect_seed7": dict(num_players=2, memory="perfect", seed=7),
    "memtab_3p_none_seed11": dict(num_players=3, memory="none", seed=11),
    "memtab_2p_decay_seed5": dict(num_players=2, memory="decay:0.3", seed=5),
}


def playthrough(num_players: int, memory: str, seed: int) -> str:
    env = memtab_v0.raw_env(num_players=num_players, memory=memory, render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [f"# MemTab-v0 num_players={num_players} memory={memory} seed={seed}",
             f"layout {' '.join(env.record()['layout'])}"]
    for agent in env.agent_iter():
        obs, rew, term, trunc, _ = env.last()
        if term or trunc:
            lines.append(f"{agent} final reward {rew:+.3f}")
            env.step(None)
            continue
        for a in env.possible_agents:
            o = env.observe(a)
            digest = hashlib.sha1(o["observation"].tobytes()).hexdigest()[:12]
            lines.append(f"  obs {a} {digest} remembered {np.flatnonzero(o['remembered_mask']).tolist()}")
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        last = env.record()["actions"][-1]
        lines.append(f"{agent} flips {action} -> {last['card']}")
        lines.extend(env.render().splitlines())
    res = env.record()["result"]
    lines.append(f"result scores={res['scores']} winners={res['winners']} "
                 f"instant_win={res['instant_win']} rewards={res['rewards']}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name):
    path = GOLDEN / f"{name}.txt"
    text = playthrough(**CASES[name])
    if os.environ.get("MEMTAB_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing {path}; regenerate with MEMTAB_REGEN_GOLDEN=1"
    expected = path.read_text().splitlines()
    got = text.splitlines()
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        assert e == g, f"{path.name} line {i + 1} differs:\n  golden: {e}\n  now:    {g}"
    assert len(expected) == len(got)
