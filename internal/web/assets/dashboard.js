// PML dashboard: one project's executions over the last hour, day or week,
// from GET /api/dashboard (docs/dashboard.md), drawn with uPlot (vendored).
// Everything shown comes from the API and is inserted as text only.
"use strict";

const KEY_STORE = "pml.apiKey"; // the trace viewer's: same origin, same key

function $(sel) { return document.querySelector(sel); }

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") n.className = v;
    else n.setAttribute(k, v);
  }
  for (const c of children) if (c != null) n.append(c);
  return n;
}

function num(n, digits) { return Number(n || 0).toLocaleString("en-US", { maximumFractionDigits: digits ?? 0 }); }

function setStatus(text, error) {
  const s = $("#status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

async function fetchDashboard(range) {
  const key = localStorage.getItem(KEY_STORE) || "";
  if (!key) throw new Error("Open the executions page and enter an API key first.");
  const resp = await fetch("/api/dashboard?range=" + encodeURIComponent(range), {
    headers: { Authorization: "Bearer " + key, Accept: "application/json" },
  });
  let body = null;
  try { body = await resp.json(); } catch (_) { /* reported below */ }
  if (!resp.ok) throw new Error((body && body.message) || "HTTP " + resp.status);
  if (!body || !Array.isArray(body.series)) throw new Error("unexpected answer");
  return body;
}

const charts = {};

// chart draws series (arrays aligned with xs) into box with uPlot, once
// per range: a new range replaces the chart.
function chart(id, xs, series) {
  const box = $("#" + id);
  if (charts[id]) charts[id].destroy();
  const width = Math.max(200, box.clientWidth || 900);
  charts[id] = new uPlot({
    width, height: 180,
    scales: { x: { time: true } },
    series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: s.fill, points: { show: s.points, size: 6, fill: s.color } }))],
    axes: [{}, { size: 60 }],
  }, [xs, ...series.map((s) => s.values)], box);
  box.dataset.points = String(xs.length);
  box.dataset.total = String(series[0].values.reduce((a, v) => a + (v || 0), 0));
}

function rows(table, list, cells) {
  const body = $(table + " tbody");
  body.replaceChildren(...(list.length ? list.map((it) => el("tr", {}, ...cells(it).map((c) => el("td", {}, String(c))))) :
    [el("tr", {}, el("td", { class: "empty", colspan: "4" }, "None in this range."))]));
}

// cards: each label with its figure in one box, so that a narrow page
// wraps whole cards, never a label apart from its number.
function cards(box, items) {
  $(box).replaceChildren(...items.map(([k, v, id]) => el("div", { class: "card" }, el("dt", {}, k), el("dd", id ? { "data-k": id } : {}, v))));
}

async function load(range) {
  for (const b of document.querySelectorAll("#ranges button")) b.classList.toggle("on", b.dataset.range === range);
  delete document.body.dataset.loaded;
  setStatus("Loading…");
  let d;
  try {
    d = await fetchDashboard(range);
  } catch (e) {
    setStatus(e.message, true);
    return;
  }
  const t = d.totals;
  $("#totals-section h2").textContent = d.all_tenants ? "Executions of every tenant" : "Executions of this project";
  $("#admission-title").textContent = d.all_tenants ? "Admission now (this replica, every tenant)" : "Admission now (this replica, this project)";
  cards("#totals", [
    ["Executions", num(t.executions), "executions"],
    ["Per minute", num(t.per_minute, 3), "per_minute"],
    ["Error rate", num(t.error_rate * 100, 1) + " %", "error_rate"],
    ["p50", num(t.p50_ms) + " ms", "p50"],
    ["p95", num(t.p95_ms) + " ms", "p95"],
  ]);
  const xs = d.series.map((p) => p.t);
  const perMinute = d.step_seconds / 60;
  chart("chart-rate", xs, [{ label: "executions/min", color: "#2563eb", fill: "#2563eb22", values: d.series.map((p) => p.executions / perMinute) }]);
  chart("chart-errors", xs, [{ label: "errors", color: "#dc2626", fill: "#dc262622", values: d.series.map((p) => p.errors) }]);
  chart("chart-latency", xs, [
    // Steps without executions have no latency: gaps, and points to see lone steps.
    { label: "p50 ms", color: "#16a34a", points: true, values: d.series.map((p) => (p.executions ? p.p50_ms : null)) },
    { label: "p95 ms", color: "#b45309", points: true, values: d.series.map((p) => (p.executions ? p.p95_ms : null)) },
  ]);
  $("#chart-rate").dataset.total = String(d.series.reduce((a, p) => a + p.executions, 0));
  rows("#errors", d.errors_by_code, (e) => [e.code, num(e.count)]);
  rows("#slowest", d.slowest_tools, (x) => [x.tool, num(x.calls), num(x.avg_ms, 2), num(x.max_ms, 2)]);
  rows("#failing", d.failing_tools, (x) => [x.tool, num(x.calls), num(x.errors)]);
  rows("#capabilities", d.capabilities, (c) => [c.name, num(c.uses)]);
  const a = d.admission;
  cards("#admission", [
    ["Running", num(a.running), "running"], ["Parked on a tool", num(a.parked), "parked"],
    ["Queued", num(a.queued), "queued"], ["Refused in range", num(a.refused), "refused"],
    ["Places per project", num(a.max_per_tenant), "max"],
  ]);
  setStatus(`Updated ${new Date().toLocaleTimeString()}.`);
  document.body.dataset.loaded = range; // the range on screen, whole
}

// A chart is as wide as its box: a window made narrower (a phone turned,
// a side panel opened) resizes it rather than let it overflow the page.
window.addEventListener("resize", () => {
  for (const [id, c] of Object.entries(charts)) c.setSize({ width: Math.max(200, $("#" + id).clientWidth || 900), height: 180 });
});

document.addEventListener("DOMContentLoaded", () => {
  let range = "1h";
  for (const b of document.querySelectorAll("#ranges button")) {
    b.addEventListener("click", () => { range = b.dataset.range; load(range); });
  }
  load(range);
});
