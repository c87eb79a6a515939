"""Reference-counting calls that numba leaves in each game's compiled batched loops.

Run: ``python benchmarks/loop_refcounts.py [--games memtab,pelmanism,memory_board]``

The batched engines' loops (:mod:`memtab_env.vector.row_loops`) inline each game's row
kernels, and numba reference counts every array passed into an inlined kernel. It prunes
those counts only where it can pair them, so a kernel written one way can cost two
counting calls (an atomic add each) per flip more than the same rules written another
way (``docs/adding_a_game.md``). Timings on a shared machine swing by a quarter between
runs; this count does not. It compiles the loops ``step_range`` (the engine's step) and
``venv_step_range`` (the single-agent view's step) afresh, without numba's cache, and
counts the ``NRT_incref`` and ``NRT_decref`` call sites in their optimised LLVM IR, with
the arrays they count. Compare two checkouts by running it in each: a rules kernel that
adds counting shows as more calls on ``st`` or ``tm``.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from typing import Any

import numpy as np


def _function_body(ir: str, name: str) -> str:
    match = re.search(r"define [^\n]*" + name + r"[^\n]*\{(.*?)\n\}", ir, re.S)
    if match is None:
        raise RuntimeError(f"no function {name!r} in the compiled module")
    return match.group(1)


def count(loop: Any, name: str) -> tuple[int, int, Counter[str]]:
    """``(increfs, decrefs, calls per array)`` of a compiled loop, recompiled uncached for
    the argument types it was first called with."""
    from numba import njit

    fresh = njit(loop.py_func)
    signature = loop.signatures[0]
    fresh.compile(signature)
    body = _function_body(fresh.inspect_llvm(signature), name)
    calls = re.findall(r"call void @NRT_(incref|decref)\(ptr %arg\.([A-Za-z_]+)", body)
    per_array = Counter(f"{array}:{kind}" for kind, array in calls)
    increfs = sum(1 for kind, _ in calls if kind == "incref")
    return increfs, len(calls) - increfs, per_array


def profile(game: str) -> list[tuple[str, int, int, Counter[str]]]:
    import gymnasium

    from memtab_env.registry import game_spec, load

    spec = game_spec(game)
    engine = load(spec.batched_engine)(4, parallel=False)
    engine.reset(seed=0)
    engine.step(engine.random_actions())
    venv = gymnasium.make_vec(spec.env_id, num_envs=4, opponents="random",
                              vectorization_mode="vector_entry_point").unwrapped
    venv.reset(seed=0)
    masks = venv.action_masks()
    venv.step(np.argmax(masks, axis=1))
    loops = engine.kernels.loops
    return [(name, *count(getattr(loops, name), name))
            for name in ("step_range", "venv_step_range")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="memtab,pelmanism,memory_board",
                        help="comma-separated games with a batched engine")
    args = parser.parse_args(argv)
    print(f"{'game':<14}{'loop':<18}{'increfs':>8}{'decrefs':>8}  on st / tm")
    for game in args.games.split(","):
        for name, inc, dec, per_array in profile(game):
            rows = " / ".join(f"{per_array[a + ':incref']}+{per_array[a + ':decref']}"
                              for a in ("st", "tm"))
            print(f"{game:<14}{name:<18}{inc:>8}{dec:>8}  {rows}")


if __name__ == "__main__":
    main()
