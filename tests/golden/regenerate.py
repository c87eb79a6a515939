"""Check or rewrite the golden trajectory hashes (``tests/golden/trajectories.json``).

    python -m tests.golden.regenerate            # compare only; exit 1 on any difference
    python -m tests.golden.regenerate --accept   # record new cases, drop retired ones

``--accept`` never overwrites the hash of an existing case: a changed hash under the same
env id means the env's streams changed without a version bump, which is refused with what
to do (bump the version in ``memtab_env/registry.py``, so the changed cases get new keys,
and write a CHANGELOG line). ``--rehash`` overwrites changed hashes too; it is only for a
change of the hashing itself (``trajectories.py``), never of an env. Cases of a backend
that cannot run here (JAX not installed) are kept as they are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.golden.trajectories import (
    GOLDEN_FILE,
    JAX_BACKENDS,
    cases,
    compare,
    compute,
    jax_available,
    load_golden,
    write_golden,
)


def main(argv: list[str] | None = None, path: Path = GOLDEN_FILE) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.regenerate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accept", action="store_true",
                        help="write new cases and drop cases that no longer exist")
    parser.add_argument("--rehash", action="store_true",
                        help="with --accept: also overwrite changed hashes (the hashing changed, no env)")
    args = parser.parse_args(argv)
    if args.rehash and not args.accept:
        parser.error("--rehash only goes with --accept")
    golden = load_golden(path) if path.exists() else {}
    runnable = [c for c in cases() if jax_available() or c.backend not in JAX_BACKENDS]
    computed = compute(runnable)
    kept = {k: v for k, v in golden.items() if not jax_available() and k.split("/")[1] in JAX_BACKENDS}
    result = compare({**kept, **computed}, golden)
    if result.ok:
        print(f"{path}: all {len(golden)} trajectory hashes unchanged")
        return 0
    print(result.message())
    if not args.accept:
        return 1
    if result.changed and not args.rehash:
        print(f"\nrefused: {len(result.changed)} case(s) changed under the same env id; nothing written",
              file=sys.stderr)
        return 2
    write_golden({**kept, **computed}, path)
    print(f"\nwrote {path}: {len(result.new)} new, {len(result.missing)} dropped, "
          f"{len(result.changed)} rehashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
