"""The MemTab baseline agents: protocol, registry, legality, the exact greedy rule, the
belief every remembering agent keeps, the expert's tactics, the search, the SB3 loader and
the human agent (driven by scripted input). Strength: ``test_agent_strength.py``."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pytest
from memtab_env.agents._memtab_policy import DEFAULT_WEIGHTS, policy_choose
from memtab_env.agents.belief import MemTabBelief
from memtab_env.agents.human import HumanAgent, HumanQuit, parse_position, render_observation
from memtab_env.agents.memtab_agents import GreedyAgent, greedy_flip
from memtab_env.agents.search import SearchAgent

from memtab_env import agents, memtab_v0
from memtab_env.errors import InvalidOptionError
from memtab_env.games.memtab import rules_kernels as K
from memtab_env.games.memtab.rules import CODE_TO_KIND, DOWN, GONE, TABLEAU, UP
from tests.helpers import layout_with

MEMORIES = ("perfect", "none", "decay:0.2", "window:6")
DISTINCT = ("R2", "R3", "R4", "R5", "R6", "R7", "R8", "B2")  # eight different kinds
PLAYERS = (1, 2, 3, 4, 5, 6)


def play(
    seats: list[Any],
    memory: str = "perfect",
    seed: int = 0,
    layout: list[str] | None = None,
    on_act: Any = None,
) -> memtab_v0.raw_env:
    """Play one game in the bare AEC env (it raises on an illegal flip); every flip is
    also checked against the acting player's action mask. Returns the finished env."""
    env = memtab_v0.raw_env(num_players=len(seats), memory=memory)
    for i, a in enumerate(seats):
        a.reset(seed=seed * 31 + i)
    env.reset(seed=seed, options={"layout": layout} if layout else None)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.agent_name_mapping[name]
        action = seats[seat].act(obs)
        assert isinstance(action, int)
        assert obs["action_mask"][action] == 1, f"{type(seats[seat]).__name__} flipped {action}"
        if on_act is not None:
            on_act(env, seat, obs, action)
        env.step(action)
    return env


# -- protocol and registry ---------------------------------------------------------------
def test_registry_lists_the_memtab_agents() -> None:
    names = agents.available("memtab")
    for name in ("random", "greedy", "expert", "search", "sb3", "human"):
        assert name in names
    assert agents.available("pelmanism") == ["greedy", "nomemory", "optimal", "ppo-pelmanism", "random"]
    assert agents.available("memory_board") == ["greedy", "random"]


@pytest.mark.parametrize("name", ["random", "greedy", "expert", "search", "human"])
def test_make_builds_protocol_agents(name: str) -> None:
    agent = agents.make(name)
    assert isinstance(agent, agents.Agent)


def test_make_unknown_name_lists_what_exists() -> None:
    with pytest.raises(InvalidOptionError, match="available: .*expert.*greedy"):
        agents.make("grandmaster")
    with pytest.raises(InvalidOptionError, match="known games"):
        agents.make("random", game="chess")


def test_make_passes_options() -> None:
    agent = agents.make("search", simulations=3, seed=1)
    assert isinstance(agent, SearchAgent) and agent.simulations == 3
    with pytest.raises(ValueError, match="simulations"):
        agents.make("search", simulations=0)


# -- every agent plays only legal flips --------------------------------------------------
_LEGAL_AGENTS = {
    "random": lambda: agents.make("random"),
    "greedy": lambda: agents.make("greedy"),
    "expert": lambda: agents.make("expert"),
    "search": lambda: agents.make("search", simulations=3, search_flips=(0, 1, 2)),
}


@pytest.mark.parametrize("name", sorted(_LEGAL_AGENTS))
@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("n", PLAYERS)
def test_agents_play_only_legal_flips(name: str, memory: str, n: int) -> None:
    # the agent under test in seat 0, and in every other seat either another copy of it
    # or a random player (so it meets tables it would not make itself)
    make = _LEGAL_AGENTS[name]
    for seed in (0, 1):
        others = [make() if seed == 0 else agents.make("random") for _ in range(n - 1)]
        env = play([make(), *others], memory=memory, seed=seed + 10 * n)
        assert env.record()["result"]["over"]


def test_scripted_human_plays_only_legal_flips() -> None:
    rng = np.random.default_rng(0)
    # a careless human: random positions, out-of-range numbers and garbage
    answers = (
        rng.choice(["x", "99", "-1", "3 9", str(rng.integers(28)), f"{rng.integers(4)} {rng.integers(7)}"])
        for _ in itertools.count()
    )
    human = HumanAgent(input_fn=lambda prompt: str(next(answers)), output_fn=lambda s: None)
    for memory in MEMORIES:
        env = play([human, agents.make("greedy"), agents.make("random")], memory=memory)
        assert env.record()["result"]["over"]


# -- greedy: the exact rule --------------------------------------------------------------
def fake_belief(
    n: int,
    flip: int,
    seen: dict[int, str],
    status: dict[int, int] | None = None,
    mine: tuple[str, ...] = (),
) -> MemTabBelief:
    b = MemTabBelief()
    b.num_players = n
    b.flip = flip
    for p, code in seen.items():
        b.seen[p] = CODE_TO_KIND[code]
    for p, st in (status or {}).items():
        b.status[p] = st
    b.tab = np.zeros((n, 14), dtype=bool)
    for code in mine:
        b.tab[0, CODE_TO_KIND[code]] = True
    return b


def greedy_on(b: MemTabBelief) -> int:
    return greedy_flip(b, b.status == DOWN)


@pytest.mark.parametrize(
    ("flip", "seen", "status", "mine", "expected"),
    [
        # flip 0: the lowest position among all cards of kinds known twice
        (0, {3: "R5", 9: "R5", 2: "B6", 20: "B6", 1: "R2"}, {}, (), 2),
        (0, {3: "R5", 9: "R5", 20: "B6", 25: "B6"}, {}, (), 3),
        # a pair of which one card is gone or face up is not a known pair
        (0, {3: "R5", 9: "R5", 0: "B6"}, {3: GONE}, (), 1),
        # no known pair: the lowest unknown
        (0, {0: "R5", 1: "R6", 5: "B2"}, {}, (), 2),
        # every face-down card known (no pair): the lowest face-down
        (0, dict(zip(range(20, 28), DISTINCT, strict=True)), {p: GONE for p in range(20)}, (), 20),
        # flip 1: the known twin of the face-up card, lowest first
        (1, {4: "B3", 11: "B3", 2: "R4"}, {4: UP}, (), 11),
        # twin unknown: the lowest unknown (a known card is not flipped)
        (1, {0: "B3", 1: "R4", 2: "R5"}, {0: UP}, (), 3),
        # flip 2: a known card of a kind in the own tableau, lowest first
        (2, {0: "R2", 1: "R3", 15: "B7", 9: "B7", 20: "R8"}, {0: UP, 1: UP, 15: TABLEAU}, ("B7",), 9),
        # no match for the tableau: the lowest unknown (not the known R8)
        (2, {0: "R2", 1: "R3", 20: "R8"}, {0: UP, 1: UP}, ("B7",), 2),
        # everything known, no match: the lowest face-down
        (2, dict(zip(range(20, 28), DISTINCT, strict=True)), {p: GONE for p in range(20)}, ("B7",), 20),
    ],
)
def test_greedy_rule(flip, seen, status, mine, expected) -> None:
    assert greedy_on(fake_belief(2, flip, seen, status, mine)) == expected


def reference_greedy(state: Any, known: set[int], seat: int) -> int:
    """The greedy rule written again from its definition, on the true state."""
    status, layout = state.status, state.layout
    down = [p for p in range(28) if status[p] == DOWN]
    kd = [p for p in down if p in known]
    unknown = [p for p in down if p not in known]
    if state.flip == 0:
        target = [p for p in kd if sum(layout[q] == layout[p] for q in kd) == 2]
    elif state.flip == 1:
        up = [p for p in range(28) if status[p] == UP]
        target = [p for p in kd if layout[p] == layout[up[0]]]
    else:
        mine = {int(layout[p]) for p in range(28) if status[p] == TABLEAU and state.owner[p] == seat}
        target = [p for p in kd if int(layout[p]) in mine]
    return min(target or unknown or down)


@pytest.mark.parametrize("memory", ["perfect", "none"])
@pytest.mark.parametrize("n", [2, 3])
def test_greedy_matches_its_definition_action_for_action(memory: str, n: int) -> None:
    # under "perfect" and "none" the greedy agent knows every card ever revealed
    for seed in range(15):
        revealed: set[int] = set()
        seats = [GreedyAgent()] + [agents.make("random") for _ in range(n - 1)]

        def check(env: Any, seat: int, obs: Any, action: int, revealed: set = revealed) -> None:
            if seat == 0:
                assert action == reference_greedy(env.game_state, revealed, 0)
            revealed.add(action)

        play(seats, memory=memory, seed=seed, on_act=check)


def test_greedy_plays_the_same_under_none_as_under_perfect() -> None:
    for seed in range(10):
        records = [
            play([GreedyAgent(), GreedyAgent()], memory=m, seed=seed).record() for m in ("perfect", "none")
        ]
        assert records[0]["actions"] == records[1]["actions"]


def test_greedy_scripted_game() -> None:
    # seats 0 and 1 reveal two known pairs (R5 at 6/9, B6 at 4/12) without matching; seat
    # 2 (greedy) takes the lowest known pair first, then the next one in its extra turn
    layout = layout_with(p4="B6", p6="R5", p9="R5", p12="B6", p0="R2", p1="R3", p2="B8", p3="R7")
    script = iter([4, 6, 0, 9, 12, 1])
    greedy = GreedyAgent()

    class Scripted:
        def reset(self, seed: Any = None) -> None: ...

        def act(self, obs: Any) -> int:
            return next(script, int(np.flatnonzero(obs["action_mask"])[0]))

    got: list[int] = []
    play(
        [Scripted(), Scripted(), greedy],
        layout=layout,
        on_act=lambda env, seat, obs, a: got.append(a) if seat == 2 else None,
    )
    # flip 0: known pairs B6 (4, 12) and R5 (6, 9): lowest is 4; flip 1: its twin 12;
    # flip 2: tableau empty, lowest unknown 2 (B8); extra turn: the R5 pair 6, 9; then
    # flip 2 with B8 in the tableau and its twin unknown: the lowest unknown, 3
    assert got[:6] == [4, 12, 2, 6, 9, 3]


# -- the belief ----------------------------------------------------------------------------
@pytest.mark.parametrize("memory", MEMORIES)
def test_belief_is_consistent_with_the_truth(memory: str) -> None:
    rng = np.random.default_rng(1)
    for seed in range(8):
        b = MemTabBelief()

        def check(env: Any, seat: int, obs: Any, action: int, b: MemTabBelief = b) -> None:
            if seat != 0:
                return
            b.update(obs)
            st = env.game_state
            known = b.seen >= 0
            assert (b.seen[known] == st.layout[known]).all()  # what it knows is true
            assert (b.status == st.status).all()
            # everything revealed is known to the agent under perfect and none
            if memory in ("perfect", "none"):
                shown = {e["action"] for e in env.action_entries()}
                assert all(known[p] for p in shown if st.status[p] in (DOWN, UP, TABLEAU))
            unknown = np.flatnonzero((st.status == DOWN) & ~known)
            assert b.pool().sum() == pytest.approx(unknown.size)
            for _ in range(3):
                lay = b.sample_layout(rng)
                assert (np.bincount(lay, minlength=14) == 2).all()  # a full deck
                assert (lay[known] == b.seen[known]).all()  # consistent with what it saw
                # kinds of the unknown face-down cards: the truth's multiset whenever no
                # unseen pair has left the game
                gone_unseen = int(((st.status == GONE) & ~known).sum())
                if gone_unseen == 0:
                    assert sorted(lay[unknown]) == sorted(st.layout[unknown])

        play([agents.make("random"), agents.make("greedy")], memory=memory, seed=seed, on_act=check)


def test_belief_resets_on_a_new_game_without_reset() -> None:
    b = MemTabBelief()
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=0)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    b.update(env.observe(env.agent_selection))
    assert (b.seen >= 0).sum() == 3
    env.reset(seed=1)
    b.update(env.observe(env.agent_selection))
    assert (b.seen >= 0).sum() == 0


# -- the expert's tactics (the policy kernel on hand-built tables) ----------------------
def table(
    n: int = 2,
    known: dict[int, str] | None = None,
    status: dict[int, int] | None = None,
    owner: dict[int, int] | None = None,
) -> tuple[np.ndarray, ...]:
    kind = np.full(28, -1, dtype=np.int8)
    st = np.zeros(28, dtype=np.int8)
    own = np.full(28, -1, dtype=np.int8)
    for p, code in (known or {}).items():
        kind[p] = CODE_TO_KIND[code]
    for p, s in (status or {}).items():
        st[p] = s
    for p, o in (owner or {}).items():
        own[p] = o
    # the unknown cards: every card not known, two of each kind in all
    counts = np.full(14, 2.0)
    for p in range(28):
        if kind[p] >= 0:
            counts[kind[p]] -= 1
    unknown_down = int(((st == DOWN) & (kind < 0)).sum())
    pool = counts * unknown_down / max(counts.sum(), 1)
    return kind, st, own, pool


def expert_flip(n: int, flip: int, **kw: Any) -> int:
    kind, st, own, pool = table(n, **kw)
    return int(policy_choose(kind, st, own, 0, n, flip, pool, DEFAULT_WEIGHTS, False))


def test_expert_takes_an_instant_win() -> None:
    # flips 1 and 2 matched (no card face up at flip 3); R5 in my tableau, its twin known
    pos = expert_flip(2, 2, known={8: "R5", 20: "R5", 3: "R8"}, status={8: TABLEAU}, owner={8: 0})
    assert pos == 20


def test_expert_sets_up_the_instant_win_with_a_known_pair() -> None:
    # a known pair (B2 at 5 and 17) and a known match of my tableau (R5 at 20): flip the pair
    kw = {"known": {8: "R5", 20: "R5", 5: "B2", 17: "B2"}, "status": {8: TABLEAU}, "owner": {8: 0}}
    assert expert_flip(2, 0, **kw) in (5, 17)


def test_expert_does_not_hand_the_next_player_an_instant_win() -> None:
    # flips 1 and 2 (R6 at 0, R7 at 1) did not match, but R6's twin is known at 5: a known
    # pair is left behind; the next player holds B4 (at 10) and knows its twin at 12. The
    # third card must break the pair (5) or take the next player's match (12); greedy would
    # take an unknown card and lose at once.
    kw = {
        "known": {0: "R6", 1: "R7", 5: "R6", 10: "B4", 12: "B4", 14: "R8"},
        "status": {0: UP, 1: UP, 10: TABLEAU},
        "owner": {10: 1},
    }
    assert expert_flip(2, 2, **kw) in (5, 12)


def test_expert_values_the_third_card() -> None:
    # nothing else at stake: a red 8 is worth taking, a black 8 is not
    kw = {"known": {0: "R2", 1: "R3", 5: "B8", 9: "R8"}, "status": {0: UP, 1: UP}}
    assert expert_flip(2, 2, **kw) == 9
    # pairing off a black card of my own tableau: +7 and an extra turn
    kw = {
        "known": {0: "R2", 1: "R3", 5: "B7", 8: "B7", 9: "R4"},
        "status": {0: UP, 1: UP, 8: TABLEAU},
        "owner": {8: 0},
    }
    assert expert_flip(2, 2, **kw) == 5


def test_expert_takes_the_known_twin() -> None:
    kw = {"known": {2: "B5", 13: "B5", 4: "R8"}, "status": {2: UP}}
    assert expert_flip(3, 1, **kw) == 13


# -- the search --------------------------------------------------------------------------
def _instant_win_layout() -> tuple[list[str], list[int]]:
    # seat 0 flips R5 (0) and R2 (1), takes R5 (3): R5 in its tableau, its twin known at 0.
    # seat 1 reveals R2 (2) and B3 (4), takes 5. Seat 0 can now flip the R2 pair (1, 2)
    # and take R5 at 0: two pairs in one turn.
    layout = layout_with(p0="R5", p1="R2", p2="R2", p3="R5", p4="B3", p5="B4", p6="B8")
    return layout, [0, 1, 3, 2, 4, 5]


@pytest.mark.parametrize("shortcuts", [True, False])
def test_search_finds_the_instant_win(shortcuts: bool) -> None:
    layout, script = _instant_win_layout()
    moves = iter(script)
    search = SearchAgent(simulations=8, seed=0, shortcuts=shortcuts, search_flips=(0, 1, 2))

    class Seat:
        def __init__(self, me: int) -> None:
            self.me = me

        def reset(self, seed: Any = None) -> None:
            search.reset(seed)

        def act(self, obs: Any) -> int:
            a = next(moves, None)
            if a is not None:
                if self.me == 0:
                    search.belief.update(obs)
                return a
            assert self.me == 0
            return search.act(obs)

    env = play([Seat(0), Seat(1)], layout=layout)
    result = env.record()["result"]
    assert result["instant_win"] and result["winners"] == [0]


def test_expert_finds_the_same_instant_win() -> None:
    layout, script = _instant_win_layout()
    moves = iter(script)
    expert = agents.make("expert")

    class Seat:
        def __init__(self, me: int) -> None:
            self.me = me

        def reset(self, seed: Any = None) -> None:
            expert.reset(seed)

        def act(self, obs: Any) -> int:
            a = next(moves, None)
            if a is not None:
                if self.me == 0:
                    expert.belief.update(obs)
                return a
            return expert.act(obs)

    env = play([Seat(0), Seat(1)], layout=layout)
    assert env.record()["result"]["winners"] == [0] and env.record()["result"]["instant_win"]


def test_search_candidates_group_equivalent_flips() -> None:
    s = SearchAgent()
    s.belief = fake_belief(2, 0, {3: "R5", 9: "R5", 4: "B2"})
    legal = np.ones(28, dtype=bool)
    # R5 twice -> one candidate (3); B2 (4); one unknown (0)
    assert s.candidates(legal).tolist() == [0, 3, 4]


def test_search_root_state_matches_the_engine() -> None:
    # with the true deal, the agent's reconstruction of the table is the engine's state
    # (seats relative to the agent)
    for seed in range(5):
        search = SearchAgent(simulations=2, seed=seed)

        def check(env: Any, seat: int, obs: Any, action: int, search: Any = search) -> None:
            if seat != 1:
                return
            search.belief.update(obs)
            root = search._root_state()
            st = env.game_state
            n = env.game.num_players
            assert (root[K.STATUS : K.STATUS + 28] == st.status).all()
            rel = np.where(st.owner >= 0, (st.owner - seat) % n, -1)
            assert (root[K.OWNER : K.OWNER + 28] == rel).all()
            assert root[K.FLIP] == st.flip and root[K.PAIRS] == st.pairs
            if st.flip == 1:
                assert root[K.TURN_FLIPS] == st.turn_flips[0]

        play([agents.make("random"), agents.make("greedy"), agents.make("random")], seed=seed, on_act=check)


def test_search_is_reproducible_with_a_seed() -> None:
    recs = [
        play([SearchAgent(simulations=4), agents.make("expert")], seed=3).record()["actions"]
        for _ in range(2)
    ]
    assert recs[0] == recs[1]


# -- Stable-Baselines3 policies ----------------------------------------------------------
sb3 = pytest.importorskip("stable_baselines3")


@pytest.fixture(scope="module")
def sb3_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO, RecurrentPPO
    from stable_baselines3 import DQN, PPO

    torch.set_num_threads(1)
    import memtab_env  # noqa: F401  (registers MemTab-v0)

    env = gym.make("MemTab-v0", opponents="random")
    folder = tmp_path_factory.mktemp("sb3")
    paths = {}
    small = {"net_arch": [8]}
    for cls, kw in (
        (MaskablePPO, {"policy_kwargs": small}),
        (PPO, {"policy_kwargs": small}),
        (RecurrentPPO, {"policy_kwargs": {**small, "lstm_hidden_size": 8}}),
        (DQN, {"policy_kwargs": small, "buffer_size": 100}),
    ):
        policy = "MlpLstmPolicy" if cls is RecurrentPPO else "MlpPolicy"
        model = cls(policy, env, seed=0, **kw)
        path = folder / f"{cls.__name__}.zip"
        model.save(path)
        paths[cls.__name__] = str(path)
    return paths


@pytest.mark.parametrize("algo", ["MaskablePPO", "PPO", "RecurrentPPO", "DQN"])
def test_sb3_agent_detects_the_algorithm_and_plays_legally(sb3_models: dict[str, str], algo: str) -> None:
    from memtab_env.agents.sb3_policy import SB3Agent, detect_algo

    path = sb3_models[algo]
    assert detect_algo(path) == algo
    agent = agents.make(path)  # a .zip path goes to the loader
    assert isinstance(agent, SB3Agent) and agent.algo == algo
    for memory in MEMORIES:
        play([agent, agents.make("greedy")], memory=memory, seed=1)
    sampler = agents.make("sb3", path=path, deterministic=False, seed=0)
    play([sampler, agents.make("random")], seed=2)


def test_sb3_agent_never_plays_the_illegal_choice(sb3_models: dict[str, str]) -> None:
    import torch
    from memtab_env.agents.sb3_policy import SB3Agent

    agent = SB3Agent(sb3_models["PPO"])
    with torch.no_grad():  # a policy that always wants position 0
        agent.policy.action_net.weight.zero_()
        agent.policy.action_net.bias.zero_()
        agent.policy.action_net.bias[0] = 50.0
    play([agent, agents.make("random")], seed=0)
    assert agent.illegal_choices > 0  # it wanted 0 after 0 was flipped, and was refused


def test_recurrent_sb3_agent_keeps_and_resets_its_lstm_state(sb3_models: dict[str, str]) -> None:
    from memtab_env.agents.sb3_policy import SB3Agent

    agent = SB3Agent(sb3_models["RecurrentPPO"])
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    agent.reset()
    agent.act(obs)
    first = [t.clone() for t in agent._lstm]
    agent.act(obs)
    assert not torch_equal(first, agent._lstm)  # the state moved on
    agent.reset()
    assert agent._lstm is None
    agent.act(obs)
    assert torch_equal(first, agent._lstm)  # a new game starts from the same state


def torch_equal(a: Any, b: Any) -> bool:
    import torch

    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_sb3_agent_as_gymnasium_opponent(sb3_models: dict[str, str]) -> None:
    import gymnasium as gym
    from memtab_env.agents.sb3_policy import SB3Agent

    env = gym.make("MemTab-v0", opponents=SB3Agent(sb3_models["MaskablePPO"]))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, term, trunc, info = env.step(action)
        done = term or trunc


def test_sb3_agent_refuses_a_model_for_another_player_count(sb3_models: dict[str, str]) -> None:
    from memtab_env.agents.sb3_policy import SB3Agent

    agent = SB3Agent(sb3_models["PPO"])
    env = memtab_v0.raw_env(num_players=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        agent.act(env.observe(env.agent_selection))


# -- the human agent and `memtab play` ---------------------------------------------------
def test_parse_position() -> None:
    assert parse_position("9") == 9
    assert parse_position(" 1 2 ") == 9
    assert parse_position("3,6") == 27
    for bad, why in (
        ("", "type"),
        ("x", "not a position"),
        ("28", "out of range"),
        ("4 0", "off the table"),
        ("1 2 3", "one position"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_position(bad)


def test_human_agent_reprompts_until_a_legal_flip() -> None:
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=0)
    env.step(5)  # position 5 is face up now
    obs = env.observe(env.agent_selection)
    answers = iter(["?", "banana", "40", "5", "0 5", "1 3"])
    out: list[str] = []
    human = HumanAgent(input_fn=lambda p: next(answers), output_fn=out.append)
    assert human.act(obs) == 10  # row 1, column 3
    text = "\n".join(out)
    assert "row col" in text  # the help
    assert "not a position" in text and "out of range" in text
    assert text.count("already face up") == 2  # "5" and "0 5" name the same card
    assert "[" not in render_observation(obs)  # nothing remembered yet


def test_human_agent_quits() -> None:
    env = memtab_v0.raw_env(num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    with pytest.raises(HumanQuit):
        HumanAgent(input_fn=lambda p: "q", output_fn=lambda s: None).act(obs)

    def eof(prompt: str) -> str:
        raise EOFError

    with pytest.raises(HumanQuit):
        HumanAgent(input_fn=eof, output_fn=lambda s: None).act(obs)


def test_memtab_play_runs_a_whole_game_from_scripted_input() -> None:
    from memtab_env.agents.play import main

    answers = itertools.cycle([str(p) for p in range(28)])  # refused answers are re-asked
    out: list[str] = []
    rc = main(
        ["--opponent", "greedy", "--players", "3", "--seat", "1", "--seed", "4", "--memory", "none"],
        input_fn=lambda p: next(answers),
        output_fn=out.append,
    )
    assert rc == 0
    text = "\n".join(out)
    assert "you are player_1" in text
    assert re.search(r"Turn \d+: player_1 to play flip 1 of 3", text)  # the env's render
    assert "player_0 (greedy) flips " in text and "You flip " in text
    assert text.count("Game over") == 1
    # the table labels every face-down card with the id that flips it
    assert re.search(r"row 0 +(#0|R\d|B\d|\.\.) +(#1|R\d|B\d|\.\.)", text)
    # what flips caused: every game has cards going to tableaux and pairs leaving
    assert "to player_" in text and "'s tableau" in text and "a pair is removed (with " in text


def test_memtab_play_says_what_each_flip_caused() -> None:
    """Scripted from a hand-built layout: a pair on flips 1 and 2 (extra turn), a card to
    the tableau; every flip's line says so."""
    from memtab_env import memtab_v0

    env = memtab_v0.raw_env(render_mode="ansi", render_positions=True)
    env.reset(options={"layout": layout_with(p0="R5", p1="R5", p2="B3", p3="B4", p4="B6")})
    lines = []
    for action in (0, 1):
        env.step(action)
        lines.append(env.describe_last())
    assert lines[0] == "player_0 flips 0 (row 0, column 0): R5"
    assert lines[1] == "player_0 flips 1 (row 0, column 1): R5, a pair is removed (with 0)"
    env.step(2)
    assert env.describe_last() == "player_0 flips 2 (row 0, column 2): B3, to player_0's tableau; extra turn"
    table = env.render()
    assert "#3" in table and "#27" in table and "##" not in table


def test_memtab_play_quits_cleanly_on_ctrl_c() -> None:
    from memtab_env.agents.play import main

    def interrupt(prompt: str) -> str:
        raise KeyboardInterrupt

    out: list[str] = []
    assert main(["--opponent", "random", "--seed", "1"], input_fn=interrupt, output_fn=out.append) == 130
    assert out[-1].strip() == "Game abandoned." and not any("Traceback" in o for o in out)


def test_memtab_play_through_the_console_command(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from memtab_env.cli import main

    answers = iter(["q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["play", "--opponent", "random", "--seed", "1"]) == 0
    assert "Game abandoned" in capsys.readouterr().out


def test_memtab_play_rejects_bad_options(capsys) -> None:
    from memtab_env.agents.play import main

    with pytest.raises(SystemExit):
        main(["--players", "2", "--seat", "2"])
    assert main(["--opponent", "nobody"], input_fn=lambda p: "q", output_fn=print) == 2
    assert "available" in capsys.readouterr().out
