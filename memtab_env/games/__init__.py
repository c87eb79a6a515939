"""The games, one folder each: :mod:`memtab_env.games.memtab`,
:mod:`memtab_env.games.pelmanism` and :mod:`memtab_env.games.memory_board`.

A game's folder holds all of its parts (rules engine, observation encoder, renderer,
batched engine and kernels, vector env, SB3 VecEnv, JAX rules where there is one); its
``__init__`` sums up the rules and exports the engine. :mod:`memtab_env.games.base` is
the engines' shared base (:class:`~memtab_env.games.base.Game`). The registry
(:mod:`memtab_env.registry`) names each game's parts for the code that every game shares.
"""
