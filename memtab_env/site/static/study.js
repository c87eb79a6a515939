/* study.html?track=T&memory=M,..&model=A,..: the memory study's tables and learning curves,
   drawn as SVG from data/study.js (the run files' curves, bands and final scores). */
"use strict";
(function () {
  const main = document.getElementById("main");
  const study = window.MEMTAB_STUDY;
  if (!study) { showError(main, "data/study.js is missing: rebuild the site with `memtab site --out DIR`."); return; }
  main.append(h("h1", {}, "Memory study"), h("p", { class: "lead" },
    "Which memory architecture does how well under which memory model of the observations: every cell trains ",
    "several seeds of the JAX PPO at a fixed sample budget per track. Scores are normalised (0 = random play, 1 = the ",
    "track's strong reference); each cell shows the interquartile mean (IQM) over seeds with its 95% stratified-",
    "bootstrap interval, beside every seed's own final score. The curves are the IQM over seeds during training with ",
    "that interval shaded; a cell trained on from an earlier track draws that run's IQM dashed before it."));
  const cells = study.cells;
  if (!cells.length) { main.append(h("p", {}, "No run files of a study in this site's results.")); return; }
  const SVG = "http://www.w3.org/2000/svg";
  // matplotlib's tab10, then ten darker tones (tab20b/c): 20 architectures with no two colours alike
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
                   "#393b79", "#8c6d31", "#637939", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363"];
  const models = [...new Set(cells.map((c) => c.model))].sort();
  const colour = (m) => PALETTE[models.indexOf(m) % PALETTE.length];
  const studies = study.studies || [];
  const tracks = studies.flatMap((s) => s.tracks);
  const studyOf = (t) => studies.find((s) => s.tracks.includes(t));
  const listParam = (name) => (param(name) ? param(name).split(",") : null);

  let track = tracks.includes(param("track")) ? param("track") : tracks[0];
  let memSel = listParam("memory"), modelSel = listParam("model");
  const controls = h("div", { class: "controls", id: "study-controls" });
  const body = h("div", { id: "study-body" });
  main.append(controls, body);

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }

  function panel(memory, mine, id) {
    const W = 356, H = 280, L = 44, R = 12, T = 26, B = 40;
    const all = mine.flatMap((c) => [...c.steps, ...c.earlier.flatMap((e) => e.steps)]);
    const offset = (c) => c.earlier.reduce((acc, e) => acc + e.steps[e.steps.length - 1], 0);
    const xmax = Math.max(1, ...mine.map((c) => offset(c) + c.steps[c.steps.length - 1]), ...all);
    const ymin = study.floor - 0.05;
    const ymax = Math.max(1.05, ...mine.flatMap((c) => c.hi));
    const x = (v) => L + (v / xmax) * (W - L - R);
    const y = (v) => T + (1 - (v - ymin) / (ymax - ymin)) * (H - T - B);
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "data-memory": memory,
                              "aria-label": `learning curves, memory ${memory}` });
    root.append(svg("defs", {}, svg("clipPath", { id }, svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B }))));
    const axis = svg("g", { class: "axis" });
    for (let v = Math.ceil(ymin * 2) / 2; v <= ymax + 1e-9; v += 0.5) {
      axis.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }),
                  svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(1)));
    }
    for (const v of [0, 1]) axis.append(svg("line", { class: "ref", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    const step = Math.pow(10, Math.floor(Math.log10(xmax))) * (xmax / Math.pow(10, Math.floor(Math.log10(xmax))) > 4 ? 1 : 0.5);
    for (let v = 0; v <= xmax + 1e-9; v += step) {
      axis.append(svg("line", { x1: x(v), x2: x(v), y1: H - B, y2: H - B + 4 }),
                  svg("text", { x: x(v), y: H - B + 16, "text-anchor": "middle" }, v >= 1000 ? `${v / 1000}k` : String(v)));
    }
    axis.append(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B }), svg("line", { x1: L, x2: L, y1: T, y2: H - B }),
      svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "learner steps"),
      svg("text", { x: L, y: 16 }, `${track}, memory ${memory}`));
    root.append(axis);
    const plot = svg("g", { "clip-path": `url(#${id})` });
    for (const c of mine) {
      const off = offset(c);
      let before = 0;
      for (const e of c.earlier) {
        plot.append(svg("path", { class: "earlier", d: e.steps.map((s, i) => `${i ? "L" : "M"}${x(before + s)},${y(e.iqm[i])}`).join(""),
                                  fill: "none", stroke: colour(c.model), "stroke-dasharray": "5 4", opacity: 0.6 }));
        before += e.steps[e.steps.length - 1];
      }
      const up = c.steps.map((s, i) => `${x(off + s)},${y(c.hi[i])}`);
      const down = c.steps.map((s, i) => `${x(off + s)},${y(c.lo[i])}`).reverse();
      plot.append(svg("path", { class: "band", d: `M${up.join("L")}L${down.join("L")}Z`, fill: colour(c.model), opacity: 0.15 }));
      plot.append(svg("path", { class: "curve", "data-model": c.model, d: c.steps.map((s, i) => `${i ? "L" : "M"}${x(off + s)},${y(c.centre[i])}`).join(""),
                                fill: "none", stroke: colour(c.model), "stroke-width": 2 }));
    }
    root.append(plot);
    return root;
  }

  function seedStrip(c) {  // every seed's final score (dots) and the IQM (a bar), on [-1, 1]
    const W = 120, H = 16, lo = Math.min(-1, ...c.final), hi = Math.max(1, ...c.final);
    const x = (v) => 4 + ((v - lo) / (hi - lo)) * (W - 8);
    return svg("svg", { width: W, height: H, class: "strip" },
      svg("line", { x1: 4, x2: W - 4, y1: H / 2, y2: H / 2, stroke: "#d9dee5" }),
      svg("line", { x1: x(c.iqm), x2: x(c.iqm), y1: 1, y2: H - 1, stroke: "#1d2430", "stroke-width": 2 }),
      ...c.final.map((v) => svg("circle", { cx: x(v), cy: H / 2, r: 3, fill: colour(c.model), opacity: 0.8 })));
  }

  function render() {
    const ofTrack = cells.filter((c) => c.track === track);
    const memories = [...new Set(ofTrack.map((c) => c.memory))];
    const archs = [...new Set(ofTrack.map((c) => c.model))].sort();
    const mems = memSel ? memories.filter((m) => memSel.includes(m)) : memories;
    const mods = modelSel ? archs.filter((m) => modelSel.includes(m)) : archs;
    const checkbox = (value, on, group) => h("label", {}, h("input", { type: "checkbox", value, checked: on, "data-group": group,
      onchange: () => {
        const pick = (g) => Array.from(controls.querySelectorAll(`input[data-group="${g}"]:checked`)).map((i) => i.value);
        memSel = pick("memory"); modelSel = pick("model"); render();
      } }), " ", value);
    controls.replaceChildren(
      h("label", {}, "track ", h("select", { id: "track", onchange: (ev) => { track = ev.target.value; memSel = modelSel = null; render(); } },
        studies.map((s) => h("optgroup", { label: `results/${s.folder}/ (${s.config})` },
          s.tracks.map((t) => h("option", { value: t, selected: t === track }, t)))))),
      h("fieldset", { id: "memories" }, h("legend", {}, "memory model"), memories.map((m) => checkbox(m, mems.includes(m), "memory"))),
      h("fieldset", { id: "models" }, h("legend", {}, "architecture"), archs.map((m) => checkbox(m, mods.includes(m), "model"))));
    const query = `?track=${encodeURIComponent(track)}` + (memSel ? `&memory=${encodeURIComponent(mems.join(","))}` : "") +
      (modelSel ? `&model=${encodeURIComponent(mods.join(","))}` : "");
    window.history.replaceState(null, "", query);
    const shown = ofTrack.filter((c) => mems.includes(c.memory) && mods.includes(c.model));
    const first = ofTrack[0], mine = studyOf(track);
    body.replaceChildren(h("h2", {}, track),
      h("p", {}, first.description, ` Budget: ${first.timesteps.toLocaleString("en")} learner steps per seed` +
        (first.follow_up ? " (a follow-up track)" : "") + (first.init ? `, trained on from ${first.init}` : "") + "."),
      h("p", { class: "muted", id: "provenance" }, "Run files under ", h("code", {}, `results/${mine.folder}/${track}/`),
        ", trained by ", h("code", {}, `memtab study --config ${mine.config}`), "."));
    const figure = h("figure", { class: "curves", id: "figure" });
    mems.forEach((m, i) => figure.append(panel(m, shown.filter((c) => c.memory === m), `clip-${i}`)));
    figure.append(h("figcaption", { class: "legend" }, mods.map((m) => h("span", {}, h("span", { class: "swatch", style: `background: ${colour(m)}` }), m))));
    body.append(figure);
    const rows = shown.slice().sort((a, b) => b.iqm - a.iqm).map((c, i) => h("tr", { "data-memory": c.memory, "data-model": c.model },
      h("td", { class: "num", "data-sort": i + 1 }, i + 1), h("td", {}, h("code", {}, c.memory)),
      h("td", {}, h("span", { class: "swatch", style: `background: ${colour(c.model)}` }), c.model),
      h("td", { class: "num", "data-sort": c.iqm }, fixed(c.iqm), " ", h("span", { class: "ci" }, `[${fixed(c.ci[0])}, ${fixed(c.ci[1])}]`)),
      h("td", { class: "seeds", "data-sort": c.iqm }, seedStrip(c), " ", h("span", { class: "ci" }, c.final.map((v) => fixed(v)).join(", "))),
      h("td", { class: "num" }, c.seeds.length)));
    const t = table(["#", "memory model", "architecture", "IQM [95% interval]", "final score of every seed", "seeds"], rows,
      [true, false, false, true, false, true]);
    t.id = "cells";
    makeSortable(t);
    body.append(h("div", { class: "scroll" }, t));
    const across = (study.across || []).find((a) => a.study === mine.folder) || { tracks: [], rows: [] };
    if (across.rows.length) {
      const at = table(["#", "memory model", "architecture", ...across.tracks, "mean rank"], across.rows.map((r, i) => h("tr", {},
        h("td", { class: "num" }, i + 1), h("td", {}, h("code", {}, r.memory)),
        h("td", {}, h("span", { class: "swatch", style: `background: ${colour(r.model)}` }), r.model),
        ...r.ranks.map((k) => h("td", { class: "num", "data-sort": k }, k)),
        h("td", { class: "num", "data-sort": r.mean_rank }, r.mean_rank.toFixed(1)))),
        [true, false, false, ...across.tracks.map(() => true), true]);
      at.id = "across";
      makeSortable(at);
      body.append(h("h2", {}, "Ranks across tracks"), h("p", { class: "muted" },
        `Every memory model and architecture present on all of ${across.tracks.join(", ")} (the tracks of `,
        `results/${mine.folder}/ but its follow-ups; other studies' recipes differ and are not ranked with it): `,
        "its rank by IQM on each track, and the mean rank. The tracks' normalised scores have ",
        "different anchors, so they are ranked, not pooled."),
        h("div", { class: "scroll" }, at));
    }
  }
  render();
})();
