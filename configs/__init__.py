"""Training configs shipped with memtab-env (``memtab train --config quick`` reads
``quick.yaml`` from here); installed as ``memtab_env.configs``."""
