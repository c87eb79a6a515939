/* index.html: one sortable table per track, from data/site.js (audited results only). */
"use strict";
(function () {
  const main = document.getElementById("main");
  const site = window.MEMTAB_SITE;
  if (!site) { showError(main, "data/site.js is missing: rebuild the site with `memtab site --out DIR`."); return; }
  main.append(
    h("h1", {}, "Leaderboard"),
    h("p", { class: "lead" },
      "Every result below passed the audit of ", h("code", {}, "memtab leaderboard"),
      ": its file was validated against its track and, where it ships game records, every game was replayed ",
      "through the rules engine and its figures recomputed. Win rates are percentages with 95% intervals ",
      "(clustered Wilson, by deal; a shared win counts 1/k). Normalised: 0 = random, 1 = the track's ",
      "strongest reference agent. Audit: \u201creplayed\u201d where the result ships its records (all replayed), ",
      "\u201cfigures checked\u201d where it does not (its figures checked against each other). Click a column to sort; ",
      "\u201cgames\u201d opens the recorded games in the viewer."));
  for (const track of site.tracks) {
    const rows = site.results.filter((r) => r.track === track.id);
    const section = h("section", { id: track.id, "data-track": track.id });
    section.append(
      h("h2", {}, `${track.id} `, h("span", { class: "muted" }, `v${track.version}`), `: ${track.description}`),
      h("p", { class: "muted" }, h("code", {}, track.env_id), ` with ${JSON.stringify(track.options)}; ${track.deals} deals `,
        `(seeds ${track.seeds[0]} .. ${track.seeds[1]}), each once per seat rotation against ${track.opponents.join(", ")}.`));
    if (!rows.length) { section.append(h("p", {}, "No results yet.")); main.append(section); continue; }
    rows.sort((a, b) => (b.normalised.value ?? -Infinity) - (a.normalised.value ?? -Infinity) || b.win_rate.value - a.win_rate.value);
    const head = ["#", "agent", "win rate", ...track.opponents.map((o) => `vs ${o}`), "normalised", "score diff",
                  "runs \u00d7 deals", "audit", "games"];
    const numeric = head.map((x) => !["agent", "audit", "games"].includes(x));
    const body = rows.map((r, i) => h("tr", { "data-label": r.label },
      h("td", { class: "num", "data-sort": i + 1 }, i + 1),
      h("td", { "data-sort": r.label }, agentLink(r.label)),
      rateCell(r.win_rate),
      track.opponents.map((o) => rateCell(r.opponents[o])),
      normCell(r.normalised),
      h("td", { class: "num", "data-sort": r.score_diff }, signed(r.score_diff)),
      h("td", { class: "num", "data-sort": r.runs * r.deals }, `${r.runs} \u00d7 ${r.deals}`),
      h("td", { "data-sort": r.games }, r.audited
        ? h("span", { class: "badge ok", title: `all ${r.games} recorded games replayed through the rules engine` }, "replayed")
        : h("span", { class: "badge plain", title: "no records shipped: figures checked, games not replayed" }, "figures checked")),
      h("td", { class: "num", "data-sort": r.games }, r.records ? h("a", { href: viewerHref(r.records, 0) }, `${r.games} games`)
        : h("span", { class: "muted" }, "\u2013"))));
    const t = table(head, body, numeric);
    makeSortable(t);
    section.append(h("div", { class: "scroll" }, t));
    main.append(section);
  }
  const labels = Object.keys(site.agents).sort();
  main.append(h("h2", { id: "agents" }, "Agents"),
    h("p", {}, labels.map((l, i) => [i ? " \u00b7 " : "", agentLink(l)])));
  if (site.refused.length) {
    main.append(h("h2", { id: "refused" }, "Refused result files"),
      h("p", { class: "muted" }, "These files are not on the leaderboard: the audit refused them."),
      h("ul", {}, site.refused.map((x) => h("li", {}, h("code", {}, x.file), `: ${x.reason}`))));
  }
  main.append(h("p", { class: "muted" }, `Built by memtab-env ${site.package_version} (memtab site).`));
})();
