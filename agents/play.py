"""``memtab play``: play MemTab in the terminal against any agent.

::

    memtab play [--opponent NAME] [--players N] [--seat K] [--memory M] [--seed S]

``--opponent`` is an agent name (``random``, ``greedy``, ``expert``, ``search``) or the
path of a Stable-Baselines3 ``.zip`` (loading it runs code: only your own files), for
every other seat, or a comma-separated list with one per other seat, in seat order.
``--seat`` is the human's seat (``player_K``; ``player_0`` starts). The game runs in the
PettingZoo AEC env (``memtab_env.memtab_v0.raw_env(render_mode="ansi",
render_positions=True)``); the table is drawn with the env's ``ansi`` render before each of
the human's flips, every face-down card labelled with its position (``#12``: type ``12``,
the action id that flips it), and every flip is announced with what it caused: the card
it revealed, a pair removed, a card to the tableau, an extra turn, an instant win (every
player watches every flip). ``q`` or Ctrl-C quits; the end says "Game over" once, with
the scores and the winners.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from memtab_env.agents.human import HumanAgent, HumanQuit


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="memtab play",
        description="Play MemTab in the terminal against built-in or trained agents.",
    )
    ap.add_argument(
        "--opponent",
        default="expert",
        help="agent name or SB3 .zip for the other seats, or one per seat comma-separated (default: expert)",
    )
    ap.add_argument("--players", type=int, default=2, help="number of players, 2-6 (default 2)")
    ap.add_argument("--seat", type=int, default=0, help="your seat; player_0 starts (default 0)")
    ap.add_argument(
        "--memory", default="perfect", help="perfect | none | decay:p | window:k (default perfect)"
    )
    ap.add_argument("--seed", type=int, default=None, help="seed of the deal (default: random)")
    return ap


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] | None = None,
    output_fn: Callable[[str], Any] | None = None,
) -> int:
    """Run ``memtab play``; returns the exit status (0, or 2 for bad options)."""
    from memtab_env import agents, memtab_v0
    from memtab_env.errors import InvalidOptionError
    from memtab_env.play import turns

    output_fn = output_fn or (lambda text: print(text))
    ap = build_parser()
    args = ap.parse_args(argv)
    n = args.players
    if not 1 <= n <= 6:
        ap.error(f"--players must be 1 to 6, got {n}")
    if not 0 <= args.seat < n:
        ap.error(f"--seat must be 0 to {n - 1} for {n} players, got {args.seat}")
    names = [s.strip() for s in args.opponent.split(",") if s.strip()]
    if len(names) == 1:
        names = names * (n - 1)
    if len(names) != n - 1:
        ap.error(f"--opponent: {n - 1} other seat(s) need 1 or {n - 1} names, got {len(names)}")
    try:
        env = memtab_v0.raw_env(num_players=n, memory=args.memory, render_mode="ansi",
                                render_positions=True)
        opponents = [agents.make(name) for name in names]
    except (InvalidOptionError, FileNotFoundError, ValueError) as exc:
        output_fn(f"memtab play: {exc}")
        return 2
    human = HumanAgent(input_fn=input_fn, output_fn=output_fn, renderer=env.render)
    seats: list[Any] = list(opponents)
    seats.insert(args.seat, human)
    env.reset(seed=args.seed)
    for i, a in enumerate(seats):
        a.reset(seed=None if args.seed is None else args.seed + 1 + i)
    me = env.possible_agents[args.seat]
    labels = {
        name: ("you" if i == args.seat else f"{name} ({names[i - (i > args.seat)]})")
        for i, name in enumerate(env.possible_agents)
    }
    output_fn(f"MemTab, {n} player(s), memory {args.memory}: you are {me}. '?' for help.")
    try:
        for name, seat, obs in turns(env):
            env.step(int(seats[seat].act(obs)))
            what = env.describe_last().removeprefix(f"{name} ")
            output_fn(f"You {what.replace('flips', 'flip', 1)}" if seat == args.seat
                      else f"{labels[name]} {what}")
    except (HumanQuit, KeyboardInterrupt) as exc:
        output_fn("\nGame abandoned." if isinstance(exc, KeyboardInterrupt) else "Game abandoned.")
        return 130 if isinstance(exc, KeyboardInterrupt) else 0
    # the final table, without its status line: the summary below says "Game over" once
    output_fn(str(env.render()).split("\n", 1)[1])
    rec = env.record()
    result = rec["result"]
    winners = result["winners"]
    how = " (instant win: two pairs in one turn)" if result["instant_win"] else ""
    scores = ", ".join(f"{labels[a]} {s}" for a, s in zip(env.possible_agents, result["scores"], strict=True))
    output_fn(f"Game over{how}. Scores: {scores}.")
    if args.seat in winners:
        output_fn("You win!" if len(winners) == 1 else f"You share the win ({len(winners)} winners).")
    else:
        output_fn("Winner(s): " + ", ".join(labels[env.possible_agents[w]] for w in winners) + ".")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
