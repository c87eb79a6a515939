"""An independent MemTab referee written from the rule text alone, for differential tests.

It shares no code with ``memtab_env`` (cards are strings, the table a dict), so a bug in
the engine is unlikely to be repeated here.
"""

from __future__ import annotations


class Referee:
    def __init__(self, layout: list[str], num_players: int, first_player: int = 0) -> None:
        self.layout = list(layout)
        self.n = num_players
        self.table = {i: "down" for i in range(len(layout))}  # down / up / gone / tab
        self.tableaux: list[list[int]] = [[] for _ in range(num_players)]
        self.player = first_player
        self.flips: list[int] = []
        self.pairs = 0
        self.over = False
        self.instant = False

    def legal(self) -> list[int]:
        if self.over:
            return []
        return [i for i, st in self.table.items() if st == "down"]

    def flip(self, pos: int) -> str:
        assert not self.over and self.table[pos] == "down", "illegal flip"
        card = self.layout[pos]
        self.flips.append(pos)
        if len(self.flips) == 1:
            self.table[pos] = "up"
        elif len(self.flips) == 2:
            first = self.flips[0]
            if self.layout[first] == card:
                self.table[first] = self.table[pos] = "gone"
                self.pairs += 1
            else:
                self.table[pos] = "up"
        else:
            mine = self.tableaux[self.player]
            twins = [q for q in mine if self.layout[q] == card]
            if twins:
                mine.remove(twins[0])
                self.table[twins[0]] = self.table[pos] = "gone"
                self.pairs += 1
            else:
                mine.append(pos)
                self.table[pos] = "tab"
            for q in self.flips:
                if self.table[q] == "up":
                    self.table[q] = "down"
            if self.pairs == 2:
                self.over = self.instant = True
            else:
                if self.pairs == 0:
                    self.player = (self.player + 1) % self.n
                if sum(1 for st in self.table.values() if st == "down") <= 2:
                    self.over = True
            self.flips = []
            self.pairs = 0
        return card

    def scores(self) -> list[int]:
        out = []
        for mine in self.tableaux:
            total = 0
            for q in mine:
                c = self.layout[q]
                total += int(c[1:]) if c[0] == "R" else -int(c[1:])
            out.append(total)
        return out

    def winners(self) -> list[int]:
        if self.instant:
            return [self.player]
        sc = self.scores()
        return [p for p in range(self.n) if sc[p] == max(sc)]

    def rewards(self) -> list[float]:
        w = self.winners()
        if len(w) == self.n:
            return [0.0] * self.n
        return [1.0 / len(w) if p in w else -1.0 / (self.n - len(w)) for p in range(self.n)]
