/* viewer.html?record=FILE&game=I&flip=K: game I of a records file (.jsonl, .jsonl.gz or .json,
   relative to the page), replayed flip by flip by rules.js, with the memory overlay.
   Over http(s) the file is fetched; from file:// (where Chromium refuses fetch) the site's
   sidecar FILE.js hands over its bytes. */
"use strict";
(function () {
  const main = document.getElementById("main");
  const site = window.MEMTAB_SITE || { results: [] };
  const boards = window.MEMTAB_BOARDS || {};
  const SAFE_PATH = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._\-\/]+$/;

  /* ---- loading ---- */
  const sidecars = {};
  window.memtabRecordsLoaded = (path, b64) => { sidecars[path] = b64; };

  function loadSidecar(path) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = path + ".js";
      s.onload = () => (path in sidecars ? resolve(Uint8Array.from(atob(sidecars[path]), (c) => c.charCodeAt(0)))
        : reject(new Error(`${path}.js does not hold ${path}`)));
      s.onerror = () => reject(new Error(`cannot read ${path}: from file:// the viewer needs the sidecar ${path}.js ` +
        "that `memtab site` writes for the records it copies; serve the folder over http to open any records file"));
      document.head.append(s);
    });
  }

  async function loadBytes(path) {
    if (window.location.protocol === "http:" || window.location.protocol === "https:") {
      const resp = await fetch(path);
      if (resp.ok) return new Uint8Array(await resp.arrayBuffer());
      if (resp.status !== 404) throw new Error(`cannot fetch ${path}: HTTP ${resp.status}`);
      return loadSidecar(path).catch(() => { throw new Error(`no records file ${path} (HTTP 404)`); });
    }
    return loadSidecar(path);
  }

  async function decode(name, bytes) {
    let text;
    if (name.endsWith(".gz")) {
      if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot gunzip (no DecompressionStream)");
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      text = await new Response(stream).text();
    } else {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    }
    if (name.endsWith(".json")) return [text];
    return text.split("\n").filter((line) => line.trim() !== "");
  }

  /* ---- the page ---- */
  function intro(message) {
    main.append(h("h1", {}, "Record viewer"));
    if (message) showError(main, message);
    main.append(h("p", { class: "lead" }, "Replays a game of a records file, as ", h("code", {}, "memtab evaluate --records"),
      " and ", h("code", {}, "memtab simulate --records"), " write them, flip by flip: ",
      h("code", {}, "viewer.html?record=FILE&game=I&flip=K"), "."));
    const files = [...new Set(site.results.filter((r) => r.records).map((r) => r.records))];
    if (files.length) {
      main.append(h("h2", {}, "Records on this site"), h("ul", {}, files.map((f) => {
        const owners = site.results.filter((r) => r.records === f).map((r) => `${r.label} on ${r.track}`);
        return h("li", {}, h("a", { href: viewerHref(f, 0) }, f), ` (${owners.join("; ")})`);
      })));
    }
    const input = h("input", { type: "file", accept: ".jsonl,.gz,.json", id: "local-file" });
    input.addEventListener("change", async () => {
      const file = input.files[0];
      if (!file) return;
      try {
        const lines = await decode(file.name, new Uint8Array(await file.arrayBuffer()));
        main.replaceChildren();
        show(file.name, lines, 0, 0, false);
      } catch (err) { showError(main, String(err.message || err)); }
    });
    main.append(h("h2", {}, "A records file of your own"), h("p", {}, input));
  }

  function parseIndex(value, name) {
    if (value === null) return 0;
    if (!/^\d+$/.test(value)) throw new Error(`${name} must be a whole number >= 0, got ${JSON.stringify(value)}`);
    return parseInt(value, 10);
  }

  function show(path, lines, gameIndex, flip, linkable) {
    if (gameIndex >= lines.length) throw new Error(`game ${gameIndex}: ${path} holds ${lines.length} game(s), 0 .. ${lines.length - 1}`);
    let rec;
    try { rec = JSON.parse(lines[gameIndex]); } catch (err) { throw new Error(`game ${gameIndex} of ${path} is not JSON: ${err.message}`); }
    let game, problem = null, lastGood = 0;
    try { game = makeReplay(rec, boards); } catch (err) { throw new Error(`game ${gameIndex}: ${err.message}`); }
    try {
      replayTo(rec, boards, rec.actions.length);
      lastGood = rec.actions.length;
    } catch (err) {
      problem = err.message;
      lastGood = /^action (\d+)/.test(err.message) ? parseInt(RegExp.$1, 10) : 0;
    }
    if (!problem) {
      const full = replayTo(rec, boards, rec.actions.length);
      const end = full.game.view(full.state);
      const r = rec.result || {};
      if (Array.isArray(r.scores) && JSON.stringify(r.scores) !== JSON.stringify(end.scores)) {
        problem = `result.scores: recorded ${JSON.stringify(r.scores)}, replay gives ${JSON.stringify(end.scores)}`;
      } else if (!r.illegal_action && Array.isArray(r.winners) && end.over && JSON.stringify(r.winners) !== JSON.stringify(end.winners)) {
        problem = `result.winners: recorded ${JSON.stringify(r.winners)}, replay gives ${JSON.stringify(end.winners)}`;
      }
    }
    const n = rec.num_players;
    let k = Math.min(flip, lastGood);
    const memory = (rec.options || {}).memory || "perfect";
    document.title = `game ${gameIndex} of ${path} \u00b7 memtab-env`;

    // header and game navigation
    const gameBox = h("input", { type: "number", min: 0, max: lines.length - 1, value: gameIndex, style: "width: 5rem", "aria-label": "game" });
    const go = (g) => {
      if (!linkable) { main.replaceChildren(); show(path, lines, g, 0, false); return; }
      window.location.search = `?record=${encodeURIComponent(path)}&game=${g}&flip=0`;
    };
    gameBox.addEventListener("change", () => { const g = parseInt(gameBox.value, 10); if (g >= 0 && g < lines.length) go(g); });
    main.append(h("h1", {}, `Game ${gameIndex} `, h("span", { class: "muted" }, `of ${lines.length} in ${path}`)),
      h("div", { class: "controls" },
        h("button", { id: "prev-game", disabled: gameIndex === 0, onclick: () => go(gameIndex - 1) }, "\u2190 previous game"),
        h("label", {}, "game ", gameBox),
        h("button", { id: "next-game", disabled: gameIndex >= lines.length - 1, onclick: () => go(gameIndex + 1) }, "next game \u2192")));
    if (problem) showError(main, `This record does not replay: ${problem}. The viewer shows it up to flip ${lastGood}.`);

    // controls
    const slider = h("input", { type: "range", min: 0, max: lastGood, value: k, "aria-label": "flip" });
    const counter = h("span", { id: "counter" });
    const link = h("a", { id: "flip-link" }, "link to this flip");
    const overlayBox = h("input", { type: "checkbox", checked: true, id: "overlay" });
    const memSelect = h("select", { id: "memory" }, [...new Set([memory, "perfect", "none", "window:4", "window:8"])].map((m) =>
      h("option", { value: m }, m === memory ? `${m} (the record's)` : m)));
    const seatSelect = h("select", { id: "observer" }, h("option", { value: "turn" }, "the player on turn"),
      Array.from({ length: n }, (_, p) => h("option", { value: p }, `player ${p}`)));
    const btn = (id, text, fn) => h("button", { id, onclick: fn }, text);
    const controls = h("div", { class: "controls" },
      btn("first", "\u00AB first", () => setFlip(0)), btn("prev", "\u25C0 back", () => setFlip(k - 1)),
      btn("next", "next \u25B6", () => setFlip(k + 1)), btn("last", "last \u00BB", () => setFlip(lastGood)),
      counter, link);
    const overlayControls = h("div", { class: "controls" },
      h("label", {}, overlayBox, " memory overlay"), h("label", {}, "model ", memSelect), h("label", {}, "of ", seatSelect));

    const boardEl = h("div", { class: "board", id: "board" });
    const status = h("div", { class: "status-line", id: "status" });
    const players = h("div", { class: "players", id: "players" });
    const felt = h("div", { class: "table-felt" }, status, boardEl, players);
    const caption = h("div", { class: "caption", id: "caption" });
    const facts = h("dl", {});
    const fact = (a, b) => facts.append(h("dt", {}, a), h("dd", {}, b));
    fact("game", `${rec.game} (${rec.env_id})`);
    fact("seats", Array.from({ length: n }, (_, p) => `${p}: ${(rec.agents || [])[p] || "?"}`).join(", "));
    if (rec.seed !== undefined && rec.seed !== null) fact("seed", String(rec.seed));
    fact("memory", memory);
    if (rec.benchmark && typeof rec.benchmark === "object") {
      fact("benchmark", Object.entries(rec.benchmark).map(([a, b]) => `${a} ${b}`).join(", "));
    }
    const r = rec.result || {};
    if (Array.isArray(r.scores)) fact("result", `scores ${r.scores.join(", ")}; winner(s) ${(r.winners || []).join(", ")}${r.instant_win ? " (instant win)" : ""}`);
    fact("keys", "\u2190 \u2192 flip, Home / End");
    const side = h("div", { class: "side" }, facts, h("p", { class: "muted" },
      "The overlay marks the face-down cards that the observer's observation still shows under the memory model ",
      "(dashed outline, the card in italics): under perfect every card ever revealed, under none only what was ",
      "revealed since that player's own last action, under window:k the k latest reveals."));
    main.append(controls, h("div", {}, slider), overlayControls,
      h("div", { class: "viewer-layout" }, h("div", {}, felt, caption), side));

    const cols = game.cols;
    boardEl.style.gridTemplateColumns = `repeat(${cols}, auto)`;
    if (rec.game === "memory_board") boardEl.classList.add("small");

    function render() {
      const spec = memSelect.value;
      const { game: g, state, trace, last } = replayTo(rec, boards, k, spec);
      const view = g.view(state);
      const observer = seatSelect.value === "turn" ? (view.over ? null : view.current) : parseInt(seatSelect.value, 10);
      const known = observer === null ? null : trace.remembered(observer, view.faceDown);
      const codes = rec.layout;
      boardEl.replaceChildren();
      boardEl.dataset.flip = k;
      boardEl.dataset.current = view.current;
      boardEl.dataset.over = view.over;
      boardEl.dataset.scores = JSON.stringify(view.scores);
      boardEl.dataset.observer = observer === null ? "" : observer;
      for (let q = 0; q < g.positions; q++) {
        const card = view.cards[q];
        const cls = card === "down" ? "down" : card === "taken" ? "taken" : view.up[q] ? "up" : "placed";
        const el = h("div", { class: `pos ${cls}`, "data-position": q, "data-card": card, title: `position ${q}` },
          h("span", { class: "num" }, q));
        if (cls === "up" || cls === "placed") { el.append(card); el.classList.add(g.colour(card)); }
        const rem = !!(known && known[q]);
        el.dataset.remembered = rem;
        if (rem) { el.classList.add("remembered"); el.append(h("span", { class: "mem" }, codes[q])); }
        if (last && last.entry.action === q) el.classList.add("last");
        if (g.board) {
          const [cr, cg, cb] = g.board.rgb[g.board.land[q]];
          boardEl.append(h("div", { class: "tile", style: `background: rgb(${cr}, ${cg}, ${cb})` }, el));
        } else boardEl.append(el);
      }
      status.textContent = view.over ? `Game over. Winner(s): ${view.winners.map((w) => `player ${w}`).join(", ")}` : view.status;
      players.replaceChildren(...view.players.map((p, seat) => h("div", {
        class: `player${!view.over && seat === view.current ? " on-turn" : ""}`, "data-seat": seat, "data-score": p.score },
        `${!view.over && seat === view.current ? "\u25B6 " : ""}player ${seat} (${(rec.agents || [])[seat] || "?"}): ${p.scoreText}`,
        p.trunks ? ` (trunks of 1..4: ${p.trunks.join(", ")})` : "",
        p.items.length ? [` \u00b7 ${p.itemsLabel}: `, h("span", { class: "items" },
          p.items.map((c) => h("span", { class: `mini ${g.colour(c)}` }, c)))] : "")));
      if (view.supply) players.append(h("div", { class: "muted" }, `trunks left in the supply (1..4): ${view.supply.join(", ")}`));
      if (last) {
        const e = last.entry;
        const what = e.action < g.positions ? `flips ${e.action}: ${e.card}` : "";
        caption.textContent = `Flip ${k}: player ${e.player} ${what}${what && last.note ? ", " : ""}${last.note}`;
      } else caption.textContent = "The deal, before the first flip.";
      counter.textContent = `flip ${k} of ${rec.actions.length}`;
      slider.value = k;
      const query = `?record=${encodeURIComponent(path)}&game=${gameIndex}&flip=${k}`;
      link.href = query;
      if (linkable) window.history.replaceState(null, "", query);
      controls.querySelector("#first").disabled = controls.querySelector("#prev").disabled = k === 0;
      controls.querySelector("#last").disabled = controls.querySelector("#next").disabled = k >= lastGood;
      document.body.classList.toggle("no-overlay", !overlayBox.checked);
    }
    function setFlip(x) { k = Math.max(0, Math.min(lastGood, x)); render(); }
    slider.addEventListener("input", () => setFlip(parseInt(slider.value, 10)));
    overlayBox.addEventListener("change", render);
    memSelect.addEventListener("change", render);
    seatSelect.addEventListener("change", render);
    document.onkeydown = (ev) => {
      if (ev.target instanceof HTMLInputElement && ev.target.type !== "range" && ev.target.type !== "checkbox") return;
      const keys = { ArrowRight: k + 1, ArrowLeft: k - 1, Home: 0, End: lastGood };
      if (ev.key in keys) { ev.preventDefault(); setFlip(keys[ev.key]); }
    };
    render();
  }

  async function start() {
    const path = param("record");
    if (path === null) { intro(null); return; }
    if (!SAFE_PATH.test(path)) {
      intro(`record=${JSON.stringify(path)}: a records file is named by a path relative to this page ` +
        "(letters, digits, . _ - /; no .. and no scheme)");
      return;
    }
    try {
      const gameIndex = parseIndex(param("game"), "game");
      const flip = parseIndex(param("flip"), "flip");
      const lines = await decode(path, await loadBytes(path));
      show(path, lines, gameIndex, flip, true);
    } catch (err) {
      main.replaceChildren();
      intro(String(err.message || err));
    }
  }
  start();
})();
