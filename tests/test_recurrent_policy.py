"""agents/recurrent_policy.py: the LSTM policy reads the legal flips from the observation
and never samples another, in rollouts, in predict and in the PPO update's log-probs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from sb3_contrib import RecurrentPPO

import memtab_env  # noqa: F401
from agents.recurrent_policy import ObsMaskedLstmPolicy, legal_status


@pytest.mark.parametrize("env_id,game,options", [
    ("MemTab-v0", "memtab", {}),
    ("Pelmanism-v0", "pelmanism", {"deck": "pairs:6"}),
])
def test_masked_lstm_policy_only_plays_legal_flips(env_id, game, options):
    env = gym.make(env_id, memory="none", opponents="random", illegal_action="raise", **options)
    model = RecurrentPPO(ObsMaskedLstmPolicy, env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                         policy_kwargs=dict(legal_status=legal_status(game, **options),
                                            lstm_hidden_size=16, net_arch=[16]))
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
    from agents.set_policy import SetFeatures

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
