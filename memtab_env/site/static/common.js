/* Helpers shared by the pages: elements, numbers, sortable tables, the header. */
"use strict";

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

function pct(x) { return (100 * x).toFixed(1); }
function signed(x, d = 2) { return x === null || x === undefined ? "\u2013" : (x >= 0 ? "+" : "") + Number(x).toFixed(d); }
function fixed(x, d = 2) { return x === null || x === undefined ? "\u2013" : Number(x).toFixed(d); }

function rateCell(fig) {
  const td = h("td", { class: "num", "data-sort": fig.value }, pct(fig.value));
  if (fig.ci) td.append(" ", h("span", { class: "ci" }, `[${pct(fig.ci[0])}, ${pct(fig.ci[1])}]`));
  return td;
}

function normCell(n) {
  const td = h("td", { class: "num", "data-sort": n.value === null ? -Infinity : n.value }, fixed(n.value));
  if (n.ci) td.append(" ", h("span", { class: "ci" }, `[${fixed(n.ci[0])}, ${fixed(n.ci[1])}]${n.iqm ? " IQM" : ""}`));
  return td;
}

function param(name) { return new URLSearchParams(window.location.search).get(name); }

function agentLink(label) { return h("a", { href: `agent.html?agent=${encodeURIComponent(label)}` }, label); }

function viewerHref(records, game, flip) {
  let href = `viewer.html?record=${encodeURIComponent(records)}&game=${game || 0}`;
  if (flip !== undefined) href += `&flip=${flip}`;
  return href;
}

/* Click a header to sort by its column (cells' data-sort, numbers before text); again to reverse. */
function makeSortable(table) {
  table.classList.add("sortable");
  const heads = Array.from(table.tHead.rows[0].cells);
  heads.forEach((th, col) => th.addEventListener("click", () => {
    const asc = th.getAttribute("aria-sort") === "descending";
    heads.forEach((o) => o.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    const body = table.tBodies[0];
    const key = (row) => {
      const cell = row.cells[col];
      const v = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent;
      const num = Number(v);
      return v !== "" && !Number.isNaN(num) ? num : String(v).toLowerCase();
    };
    const rows = Array.from(body.rows).sort((a, b) => {
      const x = key(a), y = key(b);
      const cmp = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return asc ? cmp : -cmp;
    });
    rows.forEach((r) => body.append(r));
  }));
}

/* A table (in a scrolling box where it is wider than the page) */
function table(head, rows, numeric) {
  return h("table", {}, h("thead", {}, h("tr", {}, head.map((x, i) => h("th", { class: numeric && numeric[i] ? "num" : null }, x)))),
           h("tbody", {}, rows));
}

function showError(where, message) {
  where.append(h("p", { class: "error", role: "alert" }, message));
}
