"""Trained Stable-Baselines3 policies as agents: :class:`SB3Agent`.

``SB3Agent(path)`` (also ``agents.make("model.zip")`` or ``agents.make("sb3",
path="model.zip")``) loads a model saved by ``model.save(...)`` and plays it through the
agent protocol, so it can sit in any seat of the AEC env, be an opponent of the
Gymnasium view (``gymnasium.make("MemTab-v0", opponents=SB3Agent("model.zip"))``) and
take part in evaluations.

Models are data: a Stable-Baselines3 zip contains pickled Python objects, and unpickling
runs code, so the agent never unpickles by default. It rebuilds the policy from the
weights (``torch.load(weights_only=True)``) and the plain settings of the zip
(:mod:`memtab_env.agents.model_data`), for the policy classes of SB3, sb3-contrib and this
package. A file that cannot be loaded that way is refused; ``trust_pickle=True`` (the
explicit opt-in, ``--trust-pickle`` on the command line) loads it with SB3's own loader,
which runs whatever the file holds: only for files you trust.

Algorithms: ``MaskablePPO`` and ``RecurrentPPO`` (sb3-contrib), ``PPO``, ``A2C`` and
``DQN`` (Stable-Baselines3). The algorithm is read from the zip's policy class (its
module and, for custom policies such as :mod:`memtab_env.agents.set_policy`, its base classes), or
given with ``algo=``.

Observation: the policy sees exactly what the Gymnasium view gives a learner, the flat
observation as float32 (``obs["observation"].astype(np.float32)``); a model trained on the
view's ``obs_mode="dict"`` gets the dict with the same keys. The model's observation
space must match the game (its length gives the number of players).

Legal flips only: the policy's action distribution (Q-values for DQN) is restricted to
the legal flips of the observation's ``action_mask``. ``deterministic=True`` (default)
plays the most probable legal flip (highest Q for DQN), which is the policy's own choice
whenever that choice is legal (MaskablePPO, trained with masks, always is);
``deterministic=False`` samples among the legal flips with the policy's probabilities
renormalised, from the agent's seeded generator. A policy is never allowed an illegal
flip, and the agent counts how often the unrestricted choice would have been illegal
(``illegal_choices``).

RecurrentPPO: the LSTM state is carried from one ``act`` to the next within a game and
reset by ``reset``. The agent only acts on its own turns, so the LSTM sees the sequence of
its own observations, exactly as in the Gymnasium view it was trained on.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from memtab_env.agents.belief import action_mask, flat_observation

ALGOS = ("MaskablePPO", "PPO", "A2C", "RecurrentPPO", "DQN")

#: policy-class module -> algorithm, for the built-in policy classes
_POLICY_MODULES = {
    "sb3_contrib.common.maskable.policies": "MaskablePPO",
    "sb3_contrib.common.recurrent.policies": "RecurrentPPO",
    "stable_baselines3.dqn.policies": "DQN",
    "stable_baselines3.common.policies": "PPO",
}


#: old module path -> where it lives now: zips saved before the baselines moved under
#: memtab_env name their policy classes ``agents.set_policy...``
MOVED_MODULES = {"agents": "memtab_env.agents"}


def _current_module(module: str) -> str:
    head, dot, rest = module.partition(".")
    return MOVED_MODULES[head] + dot + rest if head in MOVED_MODULES else module


class _MovedModuleUnpickler(pickle.Unpickler):
    """Unpickles class references of a moved module from where it lives now."""

    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(_current_module(module), name)


def moved_objects(path: str | Path) -> dict[str, Any]:
    """``custom_objects`` for Stable-Baselines3's ``load`` (which unpickles: for a run's
    own checkpoints and ``trust_pickle`` only): the entries of the zip's
    ``data`` whose pickles name a module of :data:`MOVED_MODULES` (a policy class,
    ``policy_kwargs`` with a features extractor), unpickled from the current module."""
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("data"))
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not (isinstance(value, dict) and ":serialized:" in value):
            continue
        raw = base64.b64decode(value[":serialized:"].encode())
        if any(f"{old}.".encode() in raw for old in MOVED_MODULES):
            out[key] = _MovedModuleUnpickler(io.BytesIO(raw)).load()
    return out


def detect_algo(path: str | Path) -> str:
    """The algorithm that saved the zip at ``path`` (one of :data:`ALGOS`). Unpickles the
    zip's policy class when it is not a built-in one: for ``trust_pickle`` loading only
    (:func:`memtab_env.agents.model_data.detect_algo` reads it as data)."""
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("data"))
    pc = data.get("policy_class", {})
    module = pc.get("__module__")
    if module in _POLICY_MODULES:
        return _POLICY_MODULES[module]
    # a custom policy class: unpickle the class reference (loading the model would do
    # it anyway) and look at its bases
    from stable_baselines3.common.save_util import json_to_data

    cls = moved_objects(path).get("policy_class") or \
        json_to_data(json.dumps({"policy_class": pc})).get("policy_class")
    if isinstance(cls, type):
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
        from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
        from stable_baselines3.common.policies import ActorCriticPolicy
        from stable_baselines3.dqn.policies import DQNPolicy

        for base, algo in (
            (MaskableActorCriticPolicy, "MaskablePPO"),
            (RecurrentActorCriticPolicy, "RecurrentPPO"),
            (DQNPolicy, "DQN"),
            (ActorCriticPolicy, "PPO"),
        ):
            if issubclass(cls, base):
                return algo
    raise ValueError(
        f"cannot tell which algorithm saved {path} (policy class {module}); pass algo= one of {list(ALGOS)}"
    )


def _algo_class(algo: str) -> Any:
    if algo == "MaskablePPO":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "RecurrentPPO":
        from sb3_contrib import RecurrentPPO

        return RecurrentPPO
    import stable_baselines3 as sb3

    if algo in ("PPO", "A2C", "DQN"):
        return getattr(sb3, algo)
    raise ValueError(f"unknown algo {algo!r}; known: {list(ALGOS)}")


class SB3Agent:
    """A saved Stable-Baselines3 policy playing by the agent protocol (module doc).

    Args:
        path: the ``.zip`` written by ``model.save``. Loading it unpickles code: only
            load files you trust.
        algo: ``"MaskablePPO"``, ``"PPO"``, ``"A2C"``, ``"RecurrentPPO"`` or ``"DQN"``;
            read from the zip when omitted.
        deterministic: play the most probable legal flip (else sample among legal ones).
        seed: seed of the generator used when ``deterministic`` is False.
        device: torch device for the policy (default ``"cpu"``).
        trust_pickle: load with Stable-Baselines3's own loader, which unpickles (runs code
            from the file). Off by default: the policy is rebuilt from its weights and
            plain settings, and a file that needs unpickling is refused.
    """

    def __init__(
        self,
        path: str | Path,
        algo: str | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        device: str = "cpu",
        trust_pickle: bool = False,
    ) -> None:
        from memtab_env.agents import model_data

        from memtab_env import untrusted

        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no Stable-Baselines3 model at {path}")
        untrusted.check_regular(path, model_data.ModelFileError)
        if algo is not None and algo not in ALGOS:
            raise ValueError(f"unknown algo {algo!r}; known: {list(ALGOS)}")
        self.path = path
        self.trust_pickle = bool(trust_pickle)
        if self.trust_pickle:
            self.algo = algo or detect_algo(path)
            model = _algo_class(self.algo).load(str(path), device=device, custom_objects=moved_objects(path))
            self.policy, self.observation_space = model.policy, model.observation_space
        else:
            self.policy, found = model_data.load_policy(path, device=device)
            if algo is not None and algo != found and {algo, found} != {"PPO", "A2C"}:
                raise ValueError(f"{path} holds a {found} policy, not {algo}")
            self.algo = algo or found  # PPO and A2C share their policy classes
            self.observation_space = self.policy.observation_space
        self.policy.set_training_mode(False)
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)
        self.name = f"sb3:{path.name}"
        self.illegal_choices = 0
        #: the scores (probabilities, Q-values for DQN) of the last deterministic choice,
        #: which it maximised among the legal flips; None after a sampled one
        self.last_scores: np.ndarray | None = None
        self._lstm: tuple[Any, Any] | None = None
        self._episode_start = True

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._lstm = None
        self._episode_start = True

    # -- observation ------------------------------------------------------------------
    def _model_obs(self, observation: Any) -> Any:
        from gymnasium import spaces

        space = self.observation_space
        flat = flat_observation(observation).astype(np.float32)
        if isinstance(space, spaces.Dict):
            if not isinstance(observation, dict):
                raise ValueError("this model was trained on dict observations; pass the dict")
            out = {}
            for key, sub in space.spaces.items():
                value = flat if key == "observation" else np.asarray(observation[key])
                out[key] = value.astype(sub.dtype)
            return out
        if space.shape != flat.shape:
            raise ValueError(
                f"the model expects observations of shape {space.shape}, got {flat.shape} "
                "(trained for another number of players or another game?)"
            )
        return flat

    def _scores(self, observation: Any) -> np.ndarray:
        """Action probabilities (Q-values for DQN) over all actions, float64."""
        import torch as th

        obs_t, _ = self.policy.obs_to_tensor(self._model_obs(observation))
        with th.no_grad():
            if self.algo == "DQN":
                return self.policy.q_net(obs_t)[0].cpu().numpy().astype(np.float64)
            if self.algo == "RecurrentPPO":
                if self._lstm is None:
                    shape = self.policy.lstm_hidden_state_shape
                    zeros = th.zeros(shape, device=self.policy.device)
                    self._lstm = (zeros, zeros.clone())
                starts = th.tensor([1.0 if self._episode_start else 0.0], device=self.policy.device)
                dist, self._lstm = self.policy.get_distribution(obs_t, self._lstm, starts)
            else:
                dist = self.policy.get_distribution(obs_t)
            return dist.distribution.probs[0].cpu().numpy().astype(np.float64)

    def act(self, observation: Any) -> int:
        legal = action_mask(observation)
        if not legal.any():
            raise ValueError("no legal flip: the action_mask is all zeros")
        scores = self._scores(observation)
        self._episode_start = False
        legal = legal[: scores.size]
        if not legal[int(np.argmax(scores))]:
            self.illegal_choices += 1
        if self.deterministic or self.algo == "DQN":
            masked = np.where(legal, scores, -np.inf)
            self.last_scores = masked
            return int(np.argmax(masked))
        self.last_scores = None
        p = np.where(legal, np.maximum(scores, 0.0), 0.0)
        if p.sum() <= 0.0:
            p = legal.astype(np.float64)
        return int(self.rng.choice(scores.size, p=p / p.sum()))
