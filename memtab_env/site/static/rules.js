/* The rules of the three games, replayed from a game record (memtab-record/1), and the
   memory models of the observations. A second statement of the rules engines of
   memtab_env.games.*.rules_kernels and memtab_env.memory, for the record viewer; the
   tests hold it equal to the Python engines' replay (tests/test_site_browser.py).

   makeReplay(record, boards) -> {positions, cols, init(), step(state, entry), view(state)}
   step throws ReplayError where the record diverges from the rules. */
"use strict";

class ReplayError extends Error {}

function fail(i, entry, why) {
  throw new ReplayError(`action ${i} (${JSON.stringify(entry).slice(0, 80)}): ${why}`);
}

function checkTurn(s, i, entry) {
  if (s.over) fail(i, entry, "the game was already over");
  if (entry.player !== s.current) fail(i, entry, `recorded player ${entry.player} but player ${s.current} is on turn`);
}

/* ---- MemTab: 28 cards R2..R8 B2..B8, three flips a turn, tableaux, instant win ---- */
function memtabReplay(rec) {
  const P = 28, n = rec.num_players, codes = rec.layout;
  const DOWN = 0, UP = 1, GONE = 2, TABLEAU = 3;
  const points = (c) => (c[0] === "R" ? 1 : -1) * parseInt(c.slice(1), 10);
  return {
    positions: P, cols: 7, flipsPerTurn: 3,
    init() {
      return { status: new Array(P).fill(DOWN), owner: new Array(P).fill(-1), flips: [],
               current: rec.first_player, pairs: 0, turn: 1, over: false, instant: false, winner: -1 };
    },
    step(s, e, i) {
      checkTurn(s, i, e);
      const a = e.action, player = s.current;
      if (!(a >= 0 && a < P) || s.status[a] !== DOWN) fail(i, e, `position ${a} cannot be flipped`);
      const card = codes[a];
      if (e.card !== card) fail(i, e, `recorded card ${e.card}, the deal reveals ${card}`);
      const flip = s.flips.length;
      s.flips.push(a);
      let note = "";
      if (flip === 0) {
        s.status[a] = UP;
      } else if (flip === 1) {
        const first = s.flips[0];
        if (codes[first] === card) {
          s.status[first] = GONE; s.status[a] = GONE; s.pairs += 1;
          note = `a pair is removed (with ${first})`;
        } else {
          s.status[a] = UP;
        }
      } else {
        let twin = -1;
        for (let q = 0; q < P; q++) {
          if (s.status[q] === TABLEAU && s.owner[q] === player && codes[q] === card) twin = q;
        }
        if (twin >= 0) {
          s.status[twin] = GONE; s.owner[twin] = -1; s.status[a] = GONE; s.pairs += 1;
          note = `a pair is removed (with ${twin} from the tableau)`;
        } else {
          s.status[a] = TABLEAU; s.owner[a] = player;
          note = `to player ${player}'s tableau`;
        }
        let down = 0;
        for (let q = 0; q < P; q++) {
          if (s.status[q] === UP) s.status[q] = DOWN;
          if (s.status[q] === DOWN) down += 1;
        }
        if (s.pairs >= 2) {
          s.over = true; s.instant = true; s.winner = player;
          return { revealed: [a], note: `${note}; two pairs in one turn: instant win` };
        }
        if (s.pairs === 0) s.current = (player + 1) % n;
        else note += "; extra turn";
        s.pairs = 0; s.flips = []; s.turn += 1;
        if (down <= 2) { s.over = true; note += "; game over"; }
      }
      return { revealed: [a], note };
    },
    view(s) {
      const scores = new Array(n).fill(0), tableaux = [];
      for (let p = 0; p < n; p++) tableaux.push([]);
      for (let q = 0; q < P; q++) {
        if (s.status[q] === TABLEAU) { scores[s.owner[q]] += points(codes[q]); tableaux[s.owner[q]].push(codes[q]); }
      }
      const cards = s.status.map((st, q) => (st === DOWN ? "down" : st === UP ? codes[q] : "taken"));
      const winners = s.over ? (s.instant ? [s.winner] : topSeats(scores)) : [];
      const players = scores.map((sc, p) => ({ score: sc, scoreText: (sc >= 0 ? "+" : "") + sc,
                                               items: tableaux[p], itemsLabel: "tableau" }));
      const status = s.over ? "" : `Turn ${s.turn}: player ${s.current} to play flip ${s.flips.length + 1} of 3`;
      return { cards, up: s.status.map((st) => st === UP), faceDown: s.status.map((st) => st === DOWN),
               players, scores, current: s.current, over: s.over, winners, status };
    },
    colour(code) { return code[0] === "R" ? "red" : "black"; },
  };
}

function topSeats(scores) {
  const best = Math.max(...scores);
  return scores.map((v, p) => (v === best ? p : -1)).filter((p) => p >= 0);
}

/* ---- Pelmanism: two flips a turn, a match is taken and plays again ---- */
const PEL_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

function pelmanismKind(deck, code) {
  if (deck === "standard") return code.slice(0, -1);
  if (deck === "colour") return ("HD".includes(code.slice(-1)) ? "R" : "B") + code.slice(0, -1);
  return code;  // pairs:N / quartets:N: the copies of a kind are identical
}

function gridShape(P) {  // memtab_env.games.pelmanism.rules.grid_shape
  const target = Math.ceil(Math.sqrt(P * 13 / 4));
  const cands = [];
  for (let c = Math.max(1, target - 3); c < target + 5; c++) if (P % c === 0) cands.push(c);
  if (cands.length) {
    cands.sort((x, y) => (Math.abs(x - target) - Math.abs(y - target)) || (x - y));
    return cands[0];
  }
  const rows = Math.ceil(P / target);
  return Math.ceil(P / rows);
}

function pelmanismReplay(rec) {
  const opts = rec.options || {};
  const deck = opts.deck || "standard", maxTurns = opts.max_turns || 0;
  const codes = rec.layout, P = codes.length, n = rec.num_players;
  const kinds = codes.map((c) => pelmanismKind(deck, c));
  const DOWN = 0, UP = 1, GONE = 2;
  return {
    positions: P, cols: gridShape(P), flipsPerTurn: 2,
    init() {
      return { status: new Array(P).fill(DOWN), owner: new Array(P).fill(-1), pairs: new Array(n).fill(0),
               current: rec.first_player, first: -1, turns: 0, over: false, left: P };
    },
    step(s, e, i) {
      checkTurn(s, i, e);
      const a = e.action, player = s.current;
      if (!(a >= 0 && a < P) || s.status[a] !== DOWN) fail(i, e, `position ${a} cannot be flipped`);
      if (e.card !== codes[a]) fail(i, e, `recorded card ${e.card}, the deal reveals ${codes[a]}`);
      if (s.first < 0) {
        s.status[a] = UP; s.first = a;
        return { revealed: [a], note: "" };
      }
      const first = s.first;
      s.first = -1; s.turns += 1;
      const matched = kinds[first] === kinds[a];
      let note;
      if (matched) {
        s.status[first] = GONE; s.status[a] = GONE; s.owner[first] = player; s.owner[a] = player;
        s.pairs[player] += 1; s.left -= 2;
        if (s.left === 0) s.over = true;
        note = `a match with ${first} (${codes[first]}): taken`;
      } else {
        s.status[first] = DOWN;
        note = `no match with ${first} (${codes[first]}): both turned back`;
      }
      if (maxTurns > 0 && s.turns >= maxTurns && !s.over) s.over = true;
      if (!s.over && !matched) s.current = (player + 1) % n;
      if (s.over) note += "; game over";
      else if (matched) note += "; extra turn";
      return { revealed: [a], note };
    },
    view(s) {
      const taken = [];
      for (let p = 0; p < n; p++) taken.push([]);
      for (let q = 0; q < P; q++) if (s.status[q] === GONE) taken[s.owner[q]].push(codes[q]);
      const cards = s.status.map((st, q) => (st === DOWN ? "down" : st === UP ? codes[q] : "taken"));
      const scores = s.pairs.slice();
      const players = scores.map((sc, p) => ({ score: sc, scoreText: `${sc} pairs`, items: taken[p], itemsLabel: "taken" }));
      const status = s.over ? "" : `Turn ${s.turns + 1}: player ${s.current} to play flip ${s.first < 0 ? 1 : 2} of 2`;
      return { cards, up: s.status.map((st) => st === UP), faceDown: s.status.map((st) => st === DOWN),
               players, scores, current: s.current, over: s.over, winners: s.over ? topSeats(scores) : [], status };
    },
    colour(code) { return "HD".includes(code.slice(-1)) && deck !== "pairs" ? "red" : "black"; },
  };
}

/* ---- Memory: The Board Game: flips, collected pairs, returns, trees ---- */
function parseBoard(b) {
  const letters = b.landscapes.map((l) => l.letter);
  const land = [];
  for (const row of b.grid) {
    for (const x of (typeof row === "string" ? row.split("") : row)) {
      land.push(typeof x === "number" ? x : letters.indexOf(x));
    }
  }
  const kindCodes = [], kland = [];
  b.landscapes.forEach((l, li) => l.pictures.forEach((pic, j) => { kindCodes.push(`${l.letter}${j + 1}`); kland.push(li); }));
  const t = b.trunks || { 1: 13, 2: 10, 3: 7, 4: 5 };
  const P = b.rows * b.cols;
  const adj = (x, y) => {
    const rx = Math.floor(x / b.cols), cx = x % b.cols, ry = Math.floor(y / b.cols), cy = y % b.cols;
    return Math.abs(rx - ry) + Math.abs(cx - cy) === 1;
  };
  return { rows: b.rows, cols: b.cols, P, land, kindCodes, kland, adj, supply0: [1, 2, 3, 4].map((k) => t[k] || t[String(k)] || 0),
           rgb: b.landscapes.map((l) => l.rgb || [200, 200, 200]), names: b.landscapes.map((l) => l.name), letters };
}

function boardReplay(rec, boards) {
  const opts = rec.options || {};
  const raw = opts.board && typeof opts.board === "object" ? opts.board : boards && boards.default;
  if (!raw) throw new ReplayError("the record names a board that this page does not have");
  const B = parseBoard(raw);
  const P = B.P, n = rec.num_players, children = opts.variant === "children";
  const maxTurns = opts.max_turns || 500;
  const layout = rec.layout.map((c) => B.kindCodes.indexOf(c));
  if (layout.length !== P || layout.some((k) => k < 0)) throw new ReplayError("the layout does not fit the board");
  const DOWN = 0, UP = 1, FREE = 2, PLACED = 3, CHOOSE = 0, FLIP2 = 1, RETURN = 2, MAIN = 0, FINAL = 1, CHILDREN = 2;
  const held = (s, seat) => s.holder.filter((h) => h === seat).length;
  const tree = (s, seat) => s.trunks[seat].reduce((acc, k, j) => acc + (j + 1) * k, 0);

  function legal(s) {  // rules_kernels.legal
    const out = new Array(2 * P + 2).fill(false);
    if (s.over) return out;
    if (s.phase === FLIP2) { for (let p = 0; p < P; p++) out[p] = s.status[p] === DOWN; return out; }
    let colours = 0;
    for (let c = 0; c < P; c++) if (s.holder[c] === s.current) colours |= 1 << B.kland[layout[c]];
    for (let q = 0; q < P; q++) {
      let ok = s.status[q] === FREE && ((colours >> B.land[q]) & 1) !== 0;
      if (ok && s.phase === RETURN) ok = s.returning.some((r) => B.adj(r, q));
      out[P + q] = ok;
    }
    if (s.phase === RETURN) out[2 * P] = true;
    else if (s.stage === MAIN) for (let p = 0; p < P; p++) out[p] = s.status[p] === DOWN;
    else if (s.stage === FINAL) out[2 * P + 1] = true;
    return out;
  }

  function endTurn(s, again) {
    s.phase = CHOOSE;
    if (s.stage === MAIN) {
      if (s.turn >= maxTurns) { s.over = true; s.capped = true; return; }
      if (!again) s.current = (s.current + 1) % n;
      s.turn += 1;
    } else if (s.stage === FINAL) {
      s.finalLeft -= 1;
      if (s.finalLeft === 0) { s.over = true; return; }
      s.current = (s.current + 1) % n; s.turn += 1;
    } else {
      for (let k = 1; k <= n; k++) {
        const seat = (s.current + k) % n;
        if (held(s, seat) > 0) { s.current = seat; s.turn += 1; return; }
      }
      s.over = true;
    }
  }

  function finishReturn(s) {
    const k = s.returning.length;
    let size = 0;
    for (let c = k; c > 0; c--) if (s.supply[c - 1] > 0) { size = c; break; }
    if (size > 0) { s.supply[size - 1] -= 1; s.trunks[s.current][size - 1] += 1; }
    s.returning = [];
    endTurn(s, false);
    return { returned: k, trunk: size };
  }

  const code = (c) => B.kindCodes[layout[c]];
  return {
    positions: P, cols: B.cols, board: B, flipsPerTurn: 2,
    init() {
      return { status: new Array(P).fill(DOWN), holder: new Array(P).fill(-1), placed: new Array(P).fill(-1),
               trunks: Array.from({ length: n }, () => [0, 0, 0, 0]), supply: B.supply0.slice(), returning: [],
               first: -1, current: rec.first_player, phase: CHOOSE, stage: MAIN, finalLeft: 0, lastPair: -1,
               turn: 1, over: false, capped: false };
    },
    step(s, e, i) {
      checkTurn(s, i, e);
      const a = e.action, player = s.current;
      if (!(Number.isInteger(a) && a >= 0 && a < 2 * P + 2) || !legal(s)[a]) fail(i, e, `action ${a} is not legal here`);
      let note = "";
      const returnDone = (r) => {
        if (e.returned !== undefined && (e.returned !== r.returned || e.trunk !== r.trunk)) {
          fail(i, e, `recorded return of ${e.returned} (trunk ${e.trunk}), replay gives ${r.returned} (trunk ${r.trunk})`);
        }
        return `; a return of ${r.returned}: ${r.trunk ? `a ${r.trunk}-trunk` : "no trunk left"}`;
      };
      if (a < P) {
        if (e.card !== code(a)) fail(i, e, `recorded card ${e.card}, the deal reveals ${code(a)}`);
        if (s.phase === CHOOSE) {
          s.status[a] = UP; s.first = a; s.phase = FLIP2;
        } else {
          const first = s.first;
          s.first = -1;
          if (layout[first] === layout[a]) {
            s.status[first] = FREE; s.status[a] = FREE; s.holder[first] = player; s.holder[a] = player;
            note = `a pair with ${first}: collected`;
            if (s.status.some((st) => st === DOWN)) {
              endTurn(s, true);
              note += s.over ? "; game over (turn limit)" : "; extra turn";
            } else {
              s.lastPair = player; s.phase = CHOOSE; s.turn += 1;
              if (children) s.stage = CHILDREN; else { s.stage = FINAL; s.finalLeft = n; }
              note += children ? "; the last pair: returns until the board is full" : "; the last pair: the final round";
            }
          } else {
            s.status[first] = DOWN;
            endTurn(s, false);
            note = `no pair with ${first} (${code(first)})` + (s.over ? "; game over (turn limit)" : "");
          }
        }
        return { revealed: [a], note };
      }
      if (a < 2 * P) {
        const q = a - P, want = B.land[q];
        let card = -1;
        for (let c = 0; c < P; c++) if (s.holder[c] === player && B.kland[layout[c]] === want) { card = c; break; }
        if ((e.space !== undefined && e.space !== q) || (e.card !== undefined && e.card !== code(card))) {
          fail(i, e, `recorded placing ${e.card} on ${e.space}, replay places ${code(card)} on ${q}`);
        }
        s.holder[card] = -1; s.placed[q] = card; s.status[q] = PLACED; s.returning.push(q); s.phase = RETURN;
        note = `places ${code(card)} on space ${q}`;
        if (s.returning.length === 4) note += returnDone(finishReturn(s));
      } else if (a === 2 * P) {
        note = "ends the return" + returnDone(finishReturn(s));
      } else {
        endTurn(s, false);
        note = "passes";
      }
      if (s.over) note += "; game over";
      return { revealed: [], note };
    },
    view(s) {
      const cards = s.status.map((st, q) => (st === DOWN ? "down" : st === UP ? code(q) : st === PLACED ? code(s.placed[q]) : "taken"));
      const scores = [], players = [];
      for (let p = 0; p < n; p++) {
        scores.push(tree(s, p));
        const items = [];
        for (let c = 0; c < P; c++) if (s.holder[c] === p) items.push(code(c));
        players.push({ score: scores[p], scoreText: `tree ${scores[p]}`, items, itemsLabel: "collected",
                       trunks: s.trunks[p].slice() });
      }
      let winners = [];
      if (s.over) {
        const best = Math.max(...scores);
        const most = Math.max(...players.map((pl, p) => (scores[p] === best ? pl.items.length : -1)));
        winners = players.map((pl, p) => (scores[p] === best && pl.items.length === most ? p : -1)).filter((p) => p >= 0);
      }
      const phase = ["to flip or return", "to flip a second card", "returning"][s.phase];
      const stage = ["", " (final round)", " (children's returns)"][s.stage];
      const status = s.over ? "" : `Turn ${s.turn}${stage}: player ${s.current} ${phase}`;
      return { cards, up: s.status.map((st, q) => st === UP || (st === PLACED && s.returning.includes(q))),
               faceDown: s.status.map((st) => st === DOWN), players, scores, current: s.current, over: s.over,
               winners, status, supply: s.supply.slice() };
    },
    colour() { return "black"; },
  };
}

function makeReplay(rec, boards) {
  if (!rec || typeof rec !== "object" || rec.format !== "memtab-record/1") {
    throw new ReplayError("not a memtab-record/1 game record");
  }
  for (const key of ["layout", "actions"]) if (!Array.isArray(rec[key])) throw new ReplayError(`field ${key}: expected a list`);
  if (!Number.isInteger(rec.num_players) || rec.num_players < 1 || rec.num_players > 6) throw new ReplayError("field num_players: expected 1 to 6");
  if (!Number.isInteger(rec.first_player) || rec.first_player < 0 || rec.first_player >= rec.num_players) {
    throw new ReplayError("field first_player: expected a seat");
  }
  const make = { memtab: memtabReplay, pelmanism: pelmanismReplay, memory_board: boardReplay }[rec.game];
  if (!make) throw new ReplayError(`unknown game ${JSON.stringify(rec.game)}; the viewer plays memtab, pelmanism, memory_board`);
  return make(rec, boards);
}

/* ---- memory models (memtab_env.memory): what each observer remembers ---- */
function parseMemory(spec) {
  const m = /^(perfect|none|window:(\d+)|decay:([0-9.eE+-]+))$/.exec(String(spec || "perfect").trim());
  if (!m) return null;
  if (m[2] !== undefined) return { kind: "window", k: parseInt(m[2], 10) };
  if (m[3] !== undefined) return { kind: "decay", p: parseFloat(m[3]) };
  return { kind: m[1] };
}

class MemoryTrace {
  /* The public reveal history in compact form (memtab_env.memory.Memory): the reveal
     count, the count at each position's latest reveal and, per seat, the count before
     its latest action. decay:p is random (seeded streams): not reproduced here. */
  constructor(spec, numPlayers, numPositions) {
    this.spec = parseMemory(spec);
    this.time = 0;
    this.revealTime = new Array(numPositions).fill(0);
    this.actionStart = new Array(numPlayers).fill(0);
  }
  onAction(actor, revealed) {
    const start = this.time;
    for (const pos of revealed) { this.time += 1; this.revealTime[pos] = this.time; }
    this.actionStart[actor] = start;
  }
  /* bool per position: face down and remembered by `observer`; null when the model
     cannot be shown (decay, or an unknown spec). */
  remembered(observer, faceDown) {
    const m = this.spec;
    if (!m || m.kind === "decay") return null;
    const th = m.kind === "perfect" ? 0 : m.kind === "none" ? this.actionStart[observer] : Math.max(0, this.time - m.k);
    return faceDown.map((d, q) => d && this.revealTime[q] > th);
  }
}

/* Replay actions [0, flip) of a record: the state, the trace and what the last action did. */
function replayTo(rec, boards, flip, memorySpec) {
  const game = makeReplay(rec, boards);
  const s = game.init();
  const trace = new MemoryTrace(memorySpec === undefined ? (rec.options || {}).memory : memorySpec, rec.num_players, game.positions);
  let last = null;
  for (let i = 0; i < flip; i++) {
    const e = rec.actions[i];
    if (!e || typeof e !== "object") throw new ReplayError(`action ${i}: not an object`);
    const t = game.step(s, e, i);
    trace.onAction(e.player, t.revealed);
    last = { index: i, entry: e, note: t.note };
  }
  return { game, state: s, trace, last };
}

if (typeof module !== "undefined") module.exports = { makeReplay, replayTo, MemoryTrace, parseMemory, ReplayError };
