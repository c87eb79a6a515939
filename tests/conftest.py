"""Test-session settings.

The tests play one game at a time, and the trained policies they load are small
networks: PyTorch's intra-op threads only contend for the CPU (on a busy 2-core machine
a test that plays 400 games with a policy took minutes instead of seconds). One thread,
as ``train.py`` and the benchmark's workers use.
"""

from __future__ import annotations


def pytest_configure(config) -> None:  # noqa: ARG001 - pytest hook signature
    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with the dev extra
        return
    torch.set_num_threads(1)
