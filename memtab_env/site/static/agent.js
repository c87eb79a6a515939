/* agent.html?agent=LABEL: what the agent is, its source or config, its results, its shipped evaluations. */
"use strict";
(function () {
  const main = document.getElementById("main");
  const site = window.MEMTAB_SITE;
  if (!site) { showError(main, "data/site.js is missing: rebuild the site with `memtab site --out DIR`."); return; }
  const label = param("agent");
  const agent = label !== null && Object.prototype.hasOwnProperty.call(site.agents, label) ? site.agents[label] : null;
  if (!agent) {
    main.append(h("h1", {}, "Agents"));
    if (label !== null) showError(main, `No agent ${JSON.stringify(label)} on the leaderboard.`);
    main.append(h("ul", {}, Object.keys(site.agents).sort().map((l) => h("li", {}, agentLink(l)))));
    return;
  }
  document.title = `${label} \u00b7 memtab-env`;
  main.append(h("h1", {}, label), h("p", { class: "muted" }, `game${agent.games.length > 1 ? "s" : ""}: ${agent.games.join(", ")}`));
  main.append(h("h2", {}, "Results on every track"));
  const rows = site.results.filter((r) => r.label === label);
  const t = table(["track", "win rate", "normalised", "score diff", "audit", "games"], rows.map((r) => h("tr", { "data-track": r.track },
    h("td", {}, h("a", { href: `index.html#${r.track}` }, r.track)),
    rateCell(r.win_rate), normCell(r.normalised), h("td", { class: "num" }, signed(r.score_diff)),
    h("td", {}, r.audited ? `replayed ${r.games} games` : "figures checked"),
    h("td", {}, r.records ? h("a", { href: viewerHref(r.records, 0) }, "games") : "\u2013"))), [false, true, true, true, false, false]);
  makeSortable(t);
  main.append(h("div", { class: "scroll" }, t));
  for (const run of agent.runs) {
    const sec = h("section", { class: "agent-run" });
    sec.append(h("h2", {}, run.kind === "builtin" ? `Built-in agent ${run.spec}` : "Model file"));
    if (run.about) for (const para of run.about.split(/\n\s*\n/)) sec.append(h("p", { class: "doc", style: "white-space: pre-wrap" }, para));
    const facts = h("dl", { class: "facts" });
    const fact = (k, v) => facts.append(h("dt", {}, k), h("dd", {}, v));
    fact("spec", h("code", {}, run.spec));
    if (run.sha256) fact("SHA-256", h("code", {}, run.sha256));
    if (Object.keys(run.kwargs).length) fact("arguments", h("code", {}, JSON.stringify(run.kwargs)));
    sec.append(facts);
    if (run.config) sec.append(h("details", {}, h("summary", {}, "Training config: ", h("code", {}, run.config.title)), h("pre", {}, run.config.text)));
    if (run.source) sec.append(h("details", {}, h("summary", {}, "Source: ", h("code", {}, run.source.title)), h("pre", {}, run.source.text)));
    for (const ev of run.evaluations) {
      const p = ev.protocol;
      sec.append(h("h3", {}, "Shipped evaluation ", h("code", {}, ev.file)),
        h("p", { class: "muted" }, `${ev.env_id}, ${p.num_players} players, memory ${p.memory}, ${p.deals} deals` +
          `${p.seats_rotated ? ", seats rotated" : ""}; ${p.ci95 || ""}`),
        table(["opponent", "games", "win rate", "score diff"], ev.results.map((r) => h("tr", {},
          h("td", {}, r.opponent), h("td", { class: "num" }, r.games),
          rateCell({ value: r.win_rate, ci: r.ci }), h("td", { class: "num" }, signed(r.score_diff)))), [false, true, true, true]));
    }
    main.append(sec);
  }
})();
