"""agents/recurrent_policy.py: the LSTM policy reads the legal flips from the observation
and never samples another, in rollouts, in predict and in the PPO update's log-probs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from memtab_env.agents.recurrent_policy import ObsMaskedLstmPolicy, SlotMemoryPolicy, legal_status
from memtab_env.agents.set_policy import token_layout
from sb3_contrib import RecurrentPPO

import memtab_env  # noqa: F401


def _policy(kind: str, game: str, **options):
    """(policy class, policy_kwargs) of a small ObsMaskedLstmPolicy or SlotMemoryPolicy."""
    if kind == "lstm":
        return ObsMaskedLstmPolicy, dict(legal_status=legal_status(game, **options),
                                         lstm_hidden_size=16, net_arch=[16])
    return SlotMemoryPolicy, dict(legal_status=legal_status(game, **options), slot_size=4,
                                  set_dim=8, set_layers=1, layout=token_layout(game, **options))


@pytest.mark.parametrize("kind", ["lstm", "slots"])
@pytest.mark.parametrize("env_id,game,options", [
    ("MemTab-v0", "memtab", {}),
    ("Pelmanism-v0", "pelmanism", {"deck": "pairs:6"}),
])
def test_masked_lstm_policy_only_plays_legal_flips(env_id, game, options, kind):
    env = gym.make(env_id, memory="none", opponents="random", illegal_action="raise", **options)
    cls, kwargs = _policy(kind, game, **options)
    model = RecurrentPPO(cls, env, n_steps=64, batch_size=64, n_epochs=1, seed=0, policy_kwargs=kwargs)
    # learning raises if a rollout sends an illegal flip (illegal_action="raise")
    model.learn(256)
    obs, info = env.reset(seed=1)
    state, start, played = None, np.ones(1, dtype=bool), 0
    for _ in range(200):
        action, state = model.predict(obs, state=state, episode_start=start, deterministic=False)
        assert info["action_mask"][int(action)] == 1
        obs, _, term, trunc, info = env.step(int(action))
        played += 1
        start = np.array([term or trunc])
        if term or trunc:
            obs, info = env.reset()
    # the update's log-probabilities: an illegal action has (numerically) zero probability
    policy = model.policy
    obs_t, _ = policy.obs_to_tensor(obs)
    zeros = th.zeros(policy.lstm_hidden_state_shape)
    lstm = (zeros, zeros.clone())
    dist, _ = policy.get_distribution(obs_t, lstm, th.ones(1))
    probs = dist.distribution.probs[0].detach().numpy()
    mask = info["action_mask"].astype(bool)
    assert probs[~mask].max(initial=0.0) < 1e-12 and probs[mask].sum() == pytest.approx(1.0)
    assert played == 200


def test_legal_status_is_refused_for_the_board_game():
    with pytest.raises(ValueError, match="MemTab and Pelmanism only"):
        legal_status("memory_board")


def test_action_skip_adds_the_set_scores_to_the_logits():
    """With action_skip, the logits are the set network's scores plus the LSTM head's: with
    the head zeroed, the policy is exactly the masked softmax of the scores."""
    from memtab_env.agents.set_policy import SetFeatures

    env = gym.make("MemTab-v0", memory="none", opponents="random", illegal_action="raise")
    model = RecurrentPPO(ObsMaskedLstmPolicy, env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                         policy_kwargs=dict(legal_status=legal_status("memtab"), action_skip=True,
                                            features_extractor_class=SetFeatures,
                                            features_extractor_kwargs=dict(dim=8, layers=1),
                                            lstm_hidden_size=16, net_arch=[16]))
    model.learn(128)
    policy = model.policy
    with th.no_grad():
        policy.action_net.weight.zero_()
        policy.action_net.bias.zero_()
    obs, info = env.reset(seed=2)
    obs_t, _ = policy.obs_to_tensor(obs)
    zeros = th.zeros(policy.lstm_hidden_state_shape)
    with th.no_grad():
        dist, _ = policy.get_distribution(obs_t, (zeros, zeros.clone()), th.ones(1))
        scores = policy.features_extractor(obs_t)[:, :28][0].numpy()
    mask = info["action_mask"].astype(bool)
    want = np.where(mask, np.exp(scores - scores[mask].max()), 0.0)
    np.testing.assert_allclose(dist.distribution.probs[0].numpy(), want / want.sum(), rtol=1e-4, atol=1e-7)
    with pytest.raises(ValueError, match="action_skip needs the set features extractor"):
        RecurrentPPO(ObsMaskedLstmPolicy, env, policy_kwargs=dict(legal_status=legal_status("memtab"),
                                                                  action_skip=True))


def _memtab_none_observations(seed: int, steps: int = 30) -> np.ndarray:
    """The learner's flat observations of one MemTab game under memory none."""
    env = gym.make("MemTab-v0", memory="none", opponents="random", learner_seat=0)
    obs, info = env.reset(seed=seed)
    out = [obs]
    rng = np.random.default_rng(seed)
    while len(out) < steps:
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
        out.append(obs)
    return np.stack(out)


def _sequence_logits(policy, observations: np.ndarray) -> th.Tensor:
    """Logits of the policy over one game's observations, the memory carried through."""
    obs_t = th.as_tensor(observations)
    zeros = th.zeros(policy.lstm_hidden_state_shape)
    starts = th.zeros(len(observations))
    starts[0] = 1.0
    with th.no_grad():
        dist, _ = policy.get_distribution(obs_t, (zeros, zeros.clone()), starts)
    return dist.distribution.logits


def _slot_model(seed: int = 0):
    env = gym.make("MemTab-v0", memory="none", opponents="random")
    cls, kwargs = _policy("slots", "memtab")
    return RecurrentPPO(cls, env, n_steps=32, batch_size=32, n_epochs=1, seed=seed, policy_kwargs=kwargs)


def test_slot_memory_policy_is_equivariant_over_a_whole_game():
    """One cell per position with shared weights, then the set network: permuting the
    positions of every observation of a game permutes every step's logits (the memory
    travels with its position)."""
    model = _slot_model()
    with th.no_grad():  # a random, non-trivial output head
        model.policy.mlp_extractor.logit.weight.normal_()
    obs = _memtab_none_observations(seed=5)
    perm = np.random.default_rng(1).permutation(28)
    permuted = obs.copy()
    for lo, width in ((0, 4), (4 * 28, 14)):  # status 28 x 4, card 28 x 14
        block = obs[:, lo : lo + 28 * width].reshape(len(obs), 28, width)
        permuted[:, lo : lo + 28 * width] = block[:, perm].reshape(len(obs), -1)
    a, b = _sequence_logits(model.policy, obs), _sequence_logits(model.policy, permuted)
    legal = a > -1e7
    assert legal.sum() > 0 and th.equal(legal[:, perm], b > -1e7)
    th.testing.assert_close(a[:, perm][legal[:, perm]], b[legal[:, perm]], rtol=1e-4, atol=1e-4)
    # the memory matters: the same last observation without its history gives other logits
    alone = _sequence_logits(model.policy, obs[-1:])
    assert not th.allclose(alone[0][legal[-1]], a[-1][legal[-1]], atol=1e-3)


def test_slot_memory_starts_as_a_latch():
    """A fresh cell writes when its position shows a card and keeps it: a card shown once,
    then hidden for 30 steps, is still distinguishable by kind, and positions never shown
    stay small."""
    from memtab_env.agents.recurrent_policy import SlotLstm

    layout = token_layout("memtab")
    cell = SlotLstm(layout, slot_size=16)
    size, card0 = layout["size"], layout["card"][0]
    x = th.zeros(31, 1, size)
    x[:, 0, 0 : 4 * 28 : 4] = 1.0  # every position face down
    for q, kind in ((3, 0), (9, 1), (12, 0)):
        x[0, 0, card0 + 14 * q + kind] = 1.0  # shown once, at the first step
    zeros = th.zeros(1, 1, 28 * 16)
    with th.no_grad():
        out, _ = cell(x, (zeros, zeros.clone()))
    memory = out[:, 0, size:].reshape(31, 28, 16)
    first, last = memory[0], memory[-1]
    cos = th.nn.functional.cosine_similarity
    for q in (3, 9, 12):
        assert cos(first[q], last[q], dim=0) > 0.9 and last[q].abs().mean() > 0.3
    assert cos(last[3], last[12], dim=0) > 0.99  # same kind, same memory
    assert cos(last[3], last[9], dim=0) < 0.9  # another kind, another memory
    assert last[[0, 1, 2, 20]].abs().mean() < 0.4 * last[[3, 9, 12]].abs().mean()


def test_slot_memory_policy_saves_and_loads(tmp_path):
    model = _slot_model()
    model.learn(64)
    model.save(tmp_path / "slots.zip")
    loaded = RecurrentPPO.load(tmp_path / "slots.zip")
    assert isinstance(loaded.policy, SlotMemoryPolicy)
    obs = _memtab_none_observations(seed=7, steps=12)
    th.testing.assert_close(_sequence_logits(loaded.policy, obs), _sequence_logits(model.policy, obs))
