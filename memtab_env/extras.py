"""Which optional extra of memtab-env provides a module, for error messages.

The core package (envs, engines, records, agents without trained policies) needs none;
``pyproject.toml`` lists the extras. :func:`missing_message` turns the
``ModuleNotFoundError`` of a missing optional module into one line that names the extra
and the command that installs it from the checkout.
"""

from __future__ import annotations

#: top-level module -> the extra that installs it
MODULE_EXTRAS = {
    "torch": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "tensorboard": "train",
    "scipy": "eval",
    "openskill": "eval",
    "matplotlib": "eval",
    "ray": "ray",
    "popgym": "bench",
    "pygame": "bench",
    "moviepy": "video",
    "rl_zoo3": "zoo",
    "jax": "jax",
    "jaxlib": "jax",
    "optax": "jax",
    "equinox": "jax",
    "memax": "jax",
    "gymnax": "gymnax",
    "flax": "gymnax",
    "six": "gymnax",
    "pgx": "dev",
    "torchrl": "dev",
}


def extra_for(exc: BaseException) -> str | None:
    """The extra that provides the module ``exc`` (a ``ModuleNotFoundError``) misses."""
    name = getattr(exc, "name", None) or ""
    return MODULE_EXTRAS.get(name.split(".")[0])


def missing_message(exc: BaseException, what: str, extra: str | None = None) -> str:
    """``what needs MODULE, which the EXTRA extra installs: pip install -e ".[EXTRA]"``
    (the torch line first for the extras that bring PyTorch); ``extra`` names the extra
    when the caller knows better (training needs scipy from ``train``)."""
    extra = extra or extra_for(exc)
    module = getattr(exc, "name", "?")
    if extra is None:
        return f"{what}: {exc}"
    torch = "pip install torch==2.13.0 && " if extra in ("train", "zoo") else ""
    return (f"{what} needs {module}, which the {extra!r} extra installs: in the memtab-env checkout, "
            f'{torch}pip install -e ".[{extra}]"')
