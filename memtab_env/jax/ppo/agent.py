"""A trained JAX PPO policy (a checkpoint zip) as an agent of the AEC env."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from memtab_env.errors import InvalidOptionError
from memtab_env.jax.ppo.checkpoints import load
from memtab_env.jax.ppo.networks import make_view


class JaxPPOAgent:
    """A trained JAX PPO policy (a :func:`save` zip) as an agent (``reset``/``act`` on AEC
    observation dicts), CPU inference, one game at a time. It sees an observation each
    time it acts, as in training; ``deterministic`` plays the most likely legal flip.

    ``recall`` keeps a perfect record of the cards its observations showed and acts on the
    observation memory ``perfect`` would give (:class:`memtab_env.observations.recall.PerfectRecall`;
    exactly that observation where the env's memory is ``none``): how a memoryless policy
    trained under ``perfect`` plays a track whose env forgets. ``window`` (k) acts on the
    observation memory ``window:k`` would give (:class:`memtab_env.observations.recall.WindowRecall`;
    exactly that observation where the env's memory is ``none`` or ``perfect`` and the game
    loop reports every flip to :meth:`watch`, as :func:`memtab_env.play.play_game` does):
    how a policy trained under ``window:k`` plays such a track."""

    def __init__(self, path: str | Path, deterministic: bool = True, seed: int | None = None,
                 algo: str = "jax_ppo", recall: bool = False, window: int | None = None) -> None:
        if algo != "jax_ppo":
            raise InvalidOptionError(f"{path} is a JAX PPO checkpoint: algo must be 'jax_ppo', got {algo!r}")
        with jax.default_device(jax.devices("cpu")[0]):
            self.policy, self.config = load(path)
        view = make_view(self.config)
        self._shapes = ((view.obs_size,), (view.num_actions,))
        self.deterministic = deterministic
        #: the logits of the last deterministic choice (illegal flips masked), which it
        #: maximised; None after a sampled one
        self.last_scores: np.ndarray | None = None
        self.name = f"jax-ppo:{Path(path).stem}"
        self._recall: Any = None
        if recall is not False and recall is not True:
            raise InvalidOptionError(f"recall must be true or false, got {recall!r}")
        if recall and window is not None:
            raise InvalidOptionError(f"recall (a perfect record) and window={window!r} (a window of the "
                                     "latest reveals) exclude each other: give one")
        if recall or window is not None:
            from memtab_env.observations.recall import PerfectRecall, WindowRecall
            from memtab_env.registry import make_encoder

            encoder = make_encoder(self.config.env_id, **self.config.env_options)
            try:
                self._recall = PerfectRecall(encoder) if recall else WindowRecall(encoder, window)
            except ValueError as exc:
                raise InvalidOptionError(str(exc)) from None
        self._step = eqx.filter_jit(type(self.policy).step)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._h = self.policy.initial_state()
        self._start = True
        if self._recall is not None:
            self._recall.reset()
        self._key = jax.random.key(0 if seed is None else seed)

    def watch(self, revealed: Any) -> None:
        """The positions an action (of any player) revealed, in order; kept only with
        ``window``, which needs the order of reveals."""
        if self._recall is not None and hasattr(self._recall, "watch"):
            self._recall.watch(revealed)

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if (obs.shape, mask.shape) != self._shapes:
            raise InvalidOptionError(
                f"{self.name} was trained on {self.config.env_id} with {self.config.env_options}: it "
                f"takes an observation of shape {self._shapes[0]} and a mask of shape "
                f"{self._shapes[1]}, got {obs.shape} and {mask.shape} (another game, number of "
                "players or deck)")
        if not mask.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        if self._recall is not None:
            obs = self._recall.observe(obs)
        self._h, logits, _ = self._step(self.policy, self._h, jnp.asarray(obs),
                                        jnp.bool_(self._start), jnp.asarray(mask))
        self._start = False
        if self.deterministic:
            self.last_scores = np.asarray(logits, np.float64)
            return int(jnp.argmax(logits))
        self.last_scores = None
        self._key, sub = jax.random.split(self._key)
        return int(jax.random.categorical(sub, logits))
