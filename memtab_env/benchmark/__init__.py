"""The old import path of :mod:`memtab_env.protocol` (the benchmark protocol: tracks,
evaluation, results, leaderboard), kept so that code written against it still runs.

``import memtab_env.benchmark.tracks`` gives the very module ``memtab_env.protocol.tracks``
(one module object under two names, so ``isinstance`` checks and module state agree).
The speed scripts live in the repository's ``benchmarks/`` folder, which is not a package.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

from memtab_env.protocol import *  # noqa: F403
from memtab_env.protocol import __all__  # noqa: F401

_OLD, _NEW = __name__, "memtab_env.protocol"


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``memtab_env.benchmark.X`` as the module ``memtab_env.protocol.X``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_OLD + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(_NEW + spec.name[len(_OLD):])
        spec.loader_state = module.__spec__  # the import system sets __spec__ to the alias's
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = module.__spec__.loader_state  # its own spec back: nothing to run


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
