"""The training command's options: ``--config``, ``--set KEY=VALUE``, ``--resume``,
``--evaluate``, ``--out`` and one ``--<field> VALUE`` per :class:`~memtab_env.train.config.Config`
field (kebab-case, ``--total-timesteps``; the field's own spelling ``--total-timesteps`` is a
hidden alias), read as YAML and checked as a config file's keys are."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import yaml

from memtab_env.train.config import Config, ConfigError, check_keys, field_docs, shipped_configs


def build_parser(prog: str | None = None, description: str | None = None) -> argparse.ArgumentParser:
    """``--config``, ``--env``, ``--set KEY=VALUE``, ``--resume``, ``--evaluate``, ``--out``
    and one ``--<field> VALUE`` option per :class:`Config` field (values are read as YAML)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description,
        allow_abbrev=False,  # a misspelt option must fail, not match a prefix
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="YAML file keyed by env id, or the name of a shipped config "
                        f"({', '.join(shipped_configs())})")
    parser.add_argument("--env", help="env id to read from the config file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a field (repeatable); VALUE is read as YAML")
    parser.add_argument("--resume", nargs="?", const="latest", metavar="RUN_DIR",
                        help="continue a run from its last checkpoint (default: the latest run)")
    parser.add_argument("--evaluate", metavar="MODEL_ZIP",
                        help="only evaluate a saved model (config from its folder or --config)")
    parser.add_argument("--out", "--eval-out", dest="out", metavar="JSON",
                        help="with --evaluate: where to write the JSON (default: next to a run's "
                        "model.zip, else <runs_dir>/evaluations/<model>_eval.json)")
    group = parser.add_argument_group("config fields (each overrides the file)")
    docs = field_docs()
    for f in dataclasses.fields(Config):
        flag = f"--{f.name.replace('_', '-')}"
        group.add_argument(flag, dest=f"field_{f.name}", metavar="VALUE", help=docs.get(f.name, ""))
        if flag != f"--{f.name}":  # the config key's own spelling, kept working but not listed
            group.add_argument(f"--{f.name}", dest=f"field_{f.name}", help=argparse.SUPPRESS)
    return parser


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Field overrides from ``--set KEY=VALUE`` and ``--<field> VALUE`` (YAML values)."""
    out: dict[str, Any] = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(raw)
    for f in dataclasses.fields(Config):
        raw = getattr(args, f"field_{f.name}")
        if raw is not None:
            out[f.name] = yaml.safe_load(raw)
    check_keys(list(out), "the command line")
    return out
