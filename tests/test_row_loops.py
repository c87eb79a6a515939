"""The single-agent loop is compiled once per game over that game's row kernels: two games
get two loops (no mix-up in numba's cache), each loaded from the cache in the next
process and compiled again when its game's kernels change; a game that lacks a row
kernel gets an error naming it. (Every real game's loop is held to its scalar view step
for step by ``tests/test_batched_equals_scalar.py``.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memtab_env.vector import row_loops as sak

#: a one-seat toy game: slot i's row holds [seat, value, ended]; the observation is
#: value * FACTOR, so two copies with other factors are two games
TOY = textwrap.dedent('''
    import sys

    import numpy as np
    from numba import njit

    from memtab_env.vector.row_loops import compile_row_loops

    FACTOR = {factor}


    @njit(cache=True)
    def row_reset(st, tm, rg, i, seed, G, A, p_forget):
        st[i, 1] = np.int64(seed) % 7
        st[i, 2] = 0


    @njit(cache=True)
    def row_next_game(st, tm, rg, i, G, A, p_forget):
        st[i, 1] += 1


    @njit(cache=True)
    def row_flip(st, tm, i, a, G):
        st[i, 1] += a
        return True


    @njit(cache=True)
    def row_reveal(st, tm, rg, i, a, actor, G, p_forget):
        pass


    @njit(cache=True)
    def row_ended(st, tm, i):
        return st[i, 2]


    @njit(cache=True)
    def row_turn(st, tm, i):
        return 0


    @njit(cache=True)
    def row_seat(st, tm, i):
        return st[i, 0]


    @njit(cache=True)
    def row_set_seat(st, tm, i, seat):
        st[i, 0] = seat


    @njit(cache=True)
    def row_score(st, tm, i, seat, G):
        return st[i, 1]


    @njit(cache=True)
    def row_result_bits(st, tm, i, G):
        return 2


    @njit(cache=True)
    def row_greedy(st, tm, i, scratch, G):
        return 0


    @njit(cache=True)
    def row_random(st, tm, vg, i, column, scratch, G):
        return 0


    @njit(cache=True)
    def row_encode(st, tm, i, observer, out, G):
        out[i, 0] = st[i, 1] * FACTOR


    @njit(cache=True)
    def row_mask(st, tm, i, masks, G):
        for a in range(masks.shape[1]):
            masks[i, a] = 1


    @njit(cache=True)
    def row_flips(st, tm, i):
        return 0


    @njit(cache=True)
    def row_turns(st, tm, i):
        return 0


    @njit(cache=True)
    def row_truncate(st, tm, i):
        st[i, 2] = 2


    loops = compile_row_loops(globals(), "{name}", [sys.modules[__name__]])
''')
CALL = textwrap.dedent('''
    import numpy as np
    import toy_a, toy_b

    def reset(game):
        st = np.zeros((3, 3), np.int64)
        obs = np.zeros((3, 1), np.float32)
        z = np.zeros(3, np.int64)
        game.loops.venv_reset_range(
            st, np.zeros((3, 0), np.int32), np.zeros((3, 1), np.uint64),
            np.zeros((3, 8), np.uint64), np.array([1, 2, 3], np.uint64), z.copy(), obs,
            np.zeros((3, 2), np.int8), z.copy(), 0, np.zeros(1, np.int64), 100, 10**6, (0,), (),
            None, 0, 3)
        s = game.loops.venv_reset_range.stats
        return obs[:, 0].astype(int).tolist(), sum(s.cache_hits.values())

    print(reset(toy_a), reset(toy_b))
''')


def _run(folder: Path) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    env.pop("NUMBA_DISABLE_JIT", None)
    env["NUMBA_CACHE_DIR"] = str(folder / "numba_cache")  # the loops' caches: this test's own
    return subprocess.run([sys.executable, "-c", CALL], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600, check=True).stdout.strip()


def test_each_game_gets_its_own_loop_cached_and_recompiled_when_it_changes(tmp_path: Path) -> None:
    (tmp_path / "toy_a.py").write_text(TOY.format(factor=10, name="toy_a"))
    (tmp_path / "toy_b.py").write_text(TOY.format(factor=100, name="toy_b"))
    assert _run(tmp_path) == "([10, 20, 30], 0) ([100, 200, 300], 0)"  # compiled
    assert _run(tmp_path) == "([10, 20, 30], 1) ([100, 200, 300], 1)"  # both from the cache
    (tmp_path / "toy_b.py").write_text(TOY.format(factor=1000, name="toy_b"))
    # toy_b's loop compiled in its old row kernels: dropped and compiled again
    assert _run(tmp_path) == "([10, 20, 30], 1) ([1000, 2000, 3000], 0)"


def test_a_game_without_a_row_kernel_is_refused_by_name() -> None:
    namespace = {"__name__": "half_a_game", "row_reset": None}
    with pytest.raises(TypeError, match=r"'half_a_game' lacks the row kernel\(s\) \['row_next_game'"):
        sak.compile_row_loops(namespace, "half", [])


def test_the_loop_source_runs_only_compiled_over_a_game() -> None:
    with pytest.raises(TypeError, match="compiled by compile_row_loops"):
        sak.venv_reset_range(np.zeros((1, 3)), np.zeros((1, 0)), None, None, np.zeros(1),
                             np.zeros(1), None, None, np.zeros(1), 0, np.zeros(1), 1, 10, (),
                             (), None, 0, 1)


def test_the_guide_lists_every_row_kernel_with_its_signature() -> None:
    guide = (Path(__file__).parents[1] / "docs" / "adding_a_game.md").read_text(encoding="utf-8")
    for name, meaning in sak.ROW_KERNELS.items():
        signature = meaning.split(":", 1)[0].split(" ->", 1)[0]
        assert f"`{name}`" in guide, name
        assert f"`{signature}" in guide, (name, signature)
