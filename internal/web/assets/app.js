// PML trace viewer. Plain DOM and SVG, no framework, no external request.
// Everything shown comes from the JSON API and is untrusted: it is only ever
// inserted as text (textContent, SVG text nodes), never as markup.
"use strict";

const KEY_STORE = "pml.apiKey"; // an API key, or an access token after sign-in
const SIGNIN_STORE = "pml.signIn"; // the PKCE verifier and state of a sign-in under way
const PAGE_SIZE = 25;
const SVG_NS = "http://www.w3.org/2000/svg";
// Bounds of what one execution draws, whatever the trace holds: the page
// stays quick on the largest trace the gateway keeps (docs/limits.md).
const DAG_MAX_NODES = 100;
const TREE_MAX_ROWS = 1200;
const AGGREGATE_LINES = 5;
// Two calls whose times are this close (ms) still count as one after the
// other: the trace's start and duration are each rounded to the nanosecond.
const THEN_SLACK_MS = 0.001;

const state = { page: 1, total: 0, filters: {}, openId: "" };

// ---------- small DOM helpers ----------

function $(sel) { return document.querySelector(sel); }

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") n.className = v;
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-")) n.setAttribute(k, v);
    else n[k] = v;
  }
  for (const c of children) if (c != null) n.append(c);
  return n;
}

function svg(tag, attrs, ...children) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  for (const c of children) if (c != null) n.append(c);
  return n;
}

function setStatus(text, isError) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

function ms(v) {
  if (typeof v !== "number") return "";
  return v < 1000 ? v.toFixed(v < 10 ? 2 : 1) + " ms" : (v / 1000).toFixed(2) + " s";
}

function when(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "" : d.toLocaleString();
}

function pretty(v) {
  if (v === undefined || v === null) return "—";
  return JSON.stringify(v, null, 2);
}

function short(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

// startMs is an RFC 3339 time in milliseconds, keeping the sub-millisecond
// digits that Date.parse drops (std tools take microseconds).
function startMs(s) {
  const str = String(s || "");
  const frac = str.match(/\.(\d+)/);
  const base = Date.parse(frac ? str.replace(frac[0], "") : str);
  return frac ? base + Number("0." + frac[1]) * 1000 : base;
}

function count(n) { return Number(n || 0).toLocaleString("en-US"); }

// truncationText says what a bounded trace left out, or "" for a whole one.
function truncationText(t) {
  const tr = t.truncated;
  if (!tr) return "";
  const parts = [];
  if (tr.spans_aggregated > 0) {
    parts.push(`${count(tr.spans)} calls: ${count((t.tasks || []).length)} kept, ${count(tr.spans_aggregated)} aggregated per tool`);
  }
  if (tr.bytes > 0) parts.push(`cut from ${count(Math.round(tr.bytes / 1024))} KiB (${(tr.dropped || []).join("; ")})`);
  if (tr.child_traces_omitted > 0) parts.push(`${count(tr.child_traces_omitted)} nested runs kept no trace`);
  return parts.join(" · ");
}

// ---------- API ----------

function apiKey() { return localStorage.getItem(KEY_STORE) || ""; }

// onWorkspacePage: served by `pml serve` (its <body data-page="workspace">),
// not by a gateway: the token comes from the printed address, not a key form.
function onWorkspacePage() { return document.body.dataset.page === "workspace"; }

function noKeyMessage() {
  return onWorkspacePage()
    ? "Open the address pml serve printed at start (…/#token=…) to see this workspace's executions."
    : "Enter an API key to see your executions (see above for where to get one).";
}

async function api(path, accept) {
  const key = apiKey();
  if (!key) throw new Error(noKeyMessage());
  const resp = await fetch(path, { headers: { Authorization: "Bearer " + key, Accept: accept || "application/json" } });
  const text = await resp.text();
  let body = null;
  try { body = JSON.parse(text); } catch (_) { /* not JSON: reported below */ }
  if (resp.status === 401) {
    throw new Error(onWorkspacePage()
      ? "The workspace token was refused (it changes when .pml/serve-token is deleted): open the address pml serve printed at start."
      : "This key was refused, or your sign-in expired: sign in again, or use a key of this gateway (pml gateway key create).");
  }
  if (!resp.ok) {
    const err = new Error((body && body.message) || "HTTP " + resp.status);
    err.status = resp.status;
    throw err;
  }
  if (body === null) throw new Error("The gateway did not answer JSON.");
  return body;
}

// ---------- executions list ----------

async function loadList() {
  const q = new URLSearchParams({ page: String(state.page), limit: String(PAGE_SIZE) });
  for (const [k, v] of Object.entries(state.filters)) if (v) q.set(k, v);
  const tbody = $("#traces tbody");
  try {
    const data = await api("/api/traces?" + q.toString());
    state.total = data.total;
    tbody.replaceChildren(...data.traces.map(row));
    if (data.traces.length === 0) {
      tbody.append(el("tr", {}, el("td", { colSpan: 7, class: "empty" }, "No executions match.")));
    }
    const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
    $("#page-info").textContent = `page ${state.page} of ${pages} · ${data.total} executions`;
    $("#prev").disabled = state.page <= 1;
    $("#next").disabled = state.page >= pages;
    setStatus("");
  } catch (e) {
    tbody.replaceChildren();
    $("#page-info").textContent = "";
    setStatus(e.message, true);
  }
}

function row(t) {
  const failed = t.failed_tasks ? ` (${t.failed_tasks} failed)` : "";
  const tr = el("tr", { "data-trace-id": t.trace_id, class: t.success ? "ok" : "fail", tabIndex: 0,
    onclick: () => openTrace(t.trace_id),
    onkeydown: (ev) => { if (ev.key === "Enter") openTrace(t.trace_id); } },
  el("td", {}, when(t.started_at)),
  el("td", {}, el("span", { class: "badge " + (t.success ? "ok" : "fail") }, t.success ? "success" : (t.error_code || "error"))),
  el("td", {}, t.executed_locally ? "local" : "server"),
  el("td", { class: "num" }, ms(t.duration_ms)),
  el("td", { class: "num" }, String(t.task_count) + failed),
  el("td", {}, short((t.tools_used || []).join(", "), 60)),
  el("td", { class: "mono" }, short(t.workflow_id || "", 12)));
  if (t.trace_id === state.openId) tr.classList.add("open");
  return tr;
}

function readFilters(form) {
  const f = {};
  for (const [k, v] of new FormData(form).entries()) {
    if (!v) continue;
    f[k] = (k === "since" || k === "until") ? new Date(v).toISOString() : v;
  }
  return f;
}

// ---------- one execution ----------

async function openTrace(id) {
  state.openId = id;
  history.replaceState(null, "", "#trace=" + encodeURIComponent(id));
  for (const r of document.querySelectorAll("#traces tbody tr")) {
    r.classList.toggle("open", r.dataset.traceId === id);
  }
  try {
    const node = await api("/api/traces/" + encodeURIComponent(id));
    showTrace(node);
  } catch (e) {
    setStatus(e.status === 404 ? (onWorkspacePage() ? "That execution does not exist in this workspace."
      : "That execution does not exist for this key's project.") : e.message, true);
  }
}

function showTrace(node) {
  const t = node.trace;
  $("#detail").hidden = false;
  $("#detail-id").textContent = t.trace_id;
  const dl = $("#summary");
  dl.replaceChildren();
  const add = (k, v) => { if (v) dl.append(el("dt", {}, k), el("dd", {}, v)); };
  add("Outcome", t.success ? "success" : `${t.error_code || "error"}: ${t.error || ""}`);
  add("Ran", t.executed_locally ? "locally, in the package" : "on the gateway");
  add("Started", when(t.started_at));
  add("Duration", ms(t.duration_ms));
  add("Workflow", t.workflow_id);
  add("Caller", t.caller);
  add("Capability", t.capability_fqdn);
  add("Parent trace", t.parent_trace_id);
  add("Tools called", (t.tools_used || []).join(", "));
  add("Planned, not called", plannedNotCalled(t).join(", "));
  add("Bounded", truncationText(t));
  drawDag(t);
  drawTree(node);
  $("#task").replaceChildren();
  $("#code").textContent = t.code || "";
  $("#code-box").hidden = !t.code;
  $("#logs").textContent = (t.logs || []).join("\n");
  $("#logs-box").hidden = !(t.logs && t.logs.length);
  $("#detail").scrollIntoView({ block: "start" });
}

// plannedNotCalled: the tools of the trace's DAG that the run never called
// (a failed run stops before some), as tracing.Trace.PlannedNotCalled.
function plannedNotCalled(t) {
  const called = new Set(t.tools_used || []);
  for (const task of t.tasks || []) called.add(task.tool_id || task.tool);
  const out = [];
  for (const d of (t.dag && Array.isArray(t.dag.tasks) && t.dag.tasks) || []) {
    if (d.tool && !called.has(d.tool) && !out.includes(d.tool)) out.push(d.tool);
  }
  return out;
}

function showTask(task, trace) {
  const box = $("#task");
  const err = task.error ? el("p", { class: "task-error" }, task.error) : null;
  const child = task.child_trace_id
    ? el("p", {}, "Ran as child trace ", el("a", { href: "#trace=" + task.child_trace_id, onclick: (ev) => { ev.preventDefault(); openTrace(task.child_trace_id); } }, task.child_trace_id))
    : null;
  box.replaceChildren(...[
    el("h3", {}, `${task.task_id} · ${task.tool_id || task.tool}`),
    el("p", { class: "meta" }, [
      task.routing ? task.routing + " tool" : "", "layer " + task.layer, ms(task.duration_ms),
      task.success ? "succeeded" : "failed", task.tool !== task.tool_id ? task.tool : "", trace.trace_id !== state.openId ? "in child trace " + trace.trace_id : "",
    ].filter(Boolean).join(" · ")),
    err, child,
    el("div", { class: "io" },
      el("div", {}, el("h4", {}, "Arguments (sanitized)"), el("pre", {}, pretty(task.args))),
      el("div", {}, el("h4", {}, "Result (sanitized)"), el("pre", {}, pretty(task.result)))),
  ].filter(Boolean));
  for (const n of document.querySelectorAll(".selected")) n.classList.remove("selected");
  for (const n of document.querySelectorAll(`[data-task="${CSS.escape(trace.trace_id + "/" + task.task_id)}"]`)) n.classList.add("selected");
}

// ---------- the DAG ----------

// With the static DAG, a node is a call site: the calls of a loop are one
// node labelled ×N. Edges are the DAG's: data (depends_on), order on the
// same resource (after, dashed) and decisions with their branches; and,
// from the calls' times, "then" (dotted): a node that started after another
// ended, with no other edge between them. Sites that never ran (the run
// failed first) are drawn dashed. Without a DAG (an older or bounded
// trace), a node is a call, ordered in time the same way.
function drawDag(t) {
  const box = $("#dag");
  const all = t.tasks || [];
  const aggregated = (t.truncated && t.truncated.spans_aggregated) || 0;
  const plan = (t.dag && Array.isArray(t.dag.tasks) && t.dag.tasks) || [];
  const decisions = (t.dag && Array.isArray(t.dag.decisions) && t.dag.decisions) || [];
  // Calls are matched to sites in program order: from the previous call's
  // site, a site of the same tool further on in the same loop (this
  // iteration), else back in that loop (the next iteration), innermost
  // loop first; else the next site of the tool after it; else its first.
  const sitesOf = new Map();
  const idx = new Map();
  plan.forEach((d, i) => {
    idx.set(d, i);
    if (!sitesOf.has(d.tool)) sitesOf.set(d.tool, []);
    sitesOf.get(d.tool).push(d);
  });
  let prev = null;
  const site = (tool) => {
    const cands = sitesOf.get(tool);
    if (!cands) return null;
    const at = prev ? idx.get(prev) : -1;
    const loops = (prev && prev.loops) || [];
    let pick = null;
    for (let k = loops.length - 1; k >= 0 && !pick; k--) {
      const inL = cands.filter((d) => (d.loops || []).includes(loops[k]));
      pick = inL.find((d) => idx.get(d) > at) || inL.find((d) => idx.get(d) <= at);
    }
    pick = pick || cands.find((d) => idx.get(d) > at) || cands[0];
    prev = pick;
    return pick;
  };
  const byId = new Map();
  const nodes = [];
  for (const d of plan) {
    const n = { id: d.id, site: d, calls: [] };
    byId.set(d.id, n);
    nodes.push(n);
  }
  for (const task of all) {
    const s = site(task.tool_id || task.tool);
    if (s) byId.get(s.id).calls.push(task);
    else nodes.push({ id: "call:" + task.task_id, calls: [task], layer: task.layer || 0 });
  }
  for (const c of decisions) {
    const n = { id: c.id, decision: c, calls: [] };
    byId.set(c.id, n);
    nodes.push(n);
  }
  if (nodes.length === 0) {
    box.replaceChildren(el("p", { class: "empty" }, "This execution called no tools."));
    return;
  }
  // Column: the longest path over data, order and branch edges (a decision
  // sits before what it selects), so an ordered call is right of the one it
  // follows. Cycles cannot come from the analysis; guard anyway.
  const parentOf = new Map();
  for (const c of decisions) for (const b of c.branches || []) for (const id of b.nodes || []) parentOf.set(id, c.id);
  const preds = (n) => {
    if (!n.site && !n.decision) return [];
    const own = n.site ? [...(n.site.depends_on || []), ...(n.site.after || [])] : n.decision.depends_on || [];
    return parentOf.has(n.id) ? [...own, parentOf.get(n.id)] : own;
  };
  const rank = new Map();
  const rankOf = (n, depth) => {
    if (rank.has(n.id)) return rank.get(n.id);
    if (!n.site && !n.decision) return n.layer;
    rank.set(n.id, 0);
    let r = 0;
    if (depth < 200) for (const p of preds(n)) { const m = byId.get(p); if (m) r = Math.max(r, rankOf(m, depth + 1) + 1); }
    rank.set(n.id, r);
    return r;
  };
  for (const n of nodes) n.layer = rankOf(n, 0);
  // Order in time: a node whose first call started after another node's
  // last call ended ran after it ("then"), even with no data between them
  // (sequential awaits); nodes whose calls overlap ran in parallel
  // (Promise.all) and may share a column. Columns respect both orders.
  const timed = nodes.filter((n) => n.calls.length);
  for (const n of timed) {
    n.start = Math.min(...n.calls.map((c) => startMs(c.started_at)));
    n.end = Math.max(...n.calls.map((c) => startMs(c.started_at) + (Number(c.duration_ms) || 0)));
  }
  const ranAfter = (m, n) => m !== n && Number.isFinite(m.end) && Number.isFinite(n.start) && m.end <= n.start + THEN_SLACK_MS;
  for (let changed = true, i = 0; changed && i < 200; i++) {
    changed = false;
    for (const n of nodes) {
      let l = n.layer;
      for (const p of preds(n)) { const m = byId.get(p); if (m) l = Math.max(l, m.layer + 1); }
      if (n.calls.length) for (const m of timed) if (ranAfter(m, n)) l = Math.max(l, m.layer + 1);
      if (l !== n.layer) { n.layer = l; changed = true; }
    }
  }
  // The node each one directly followed: of those that ended before it
  // started, the one that ended last.
  const follows = new Map();
  for (const n of timed) {
    let best = null;
    for (const m of timed) if (ranAfter(m, n) && (!best || m.end > best.end)) best = m;
    if (best) follows.set(n, best);
  }
  const drawn = nodes.slice(0, DAG_MAX_NODES);
  const shown = new Set(drawn);
  const W = 190, H = 50, GX = 70, GY = 22, PAD = 16;
  const columns = new Map();
  for (const n of drawn) {
    if (!columns.has(n.layer)) columns.set(n.layer, []);
    columns.get(n.layer).push(n);
  }
  const layers = [...columns.keys()].sort((a, b) => a - b);
  let rows = 0;
  layers.forEach((layer, col) => {
    columns.get(layer).forEach((n, i) => { n.x = PAD + col * (W + GX); n.y = PAD + i * (H + GY); });
    rows = Math.max(rows, columns.get(layer).length);
  });
  const width = PAD * 2 + layers.length * W + (layers.length - 1) * GX;
  const height = PAD * 2 + rows * H + (rows - 1) * GY;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "DAG of the execution" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const edges = svg("g", { class: "edges" });
  root.append(edges);
  const edge = (from, to, cls, label) => {
    const m = byId.get(from);
    if (!m || !shown.has(m) || !shown.has(to)) return;
    const x1 = m.x + W, y1 = m.y + H / 2, x2 = to.x, y2 = to.y + H / 2, mx = (x1 + x2) / 2;
    edges.append(svg("path", { d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, class: "edge " + cls, "marker-end": "url(#arrow)",
      "data-from": from, "data-to": to.id }));
    if (label) edges.append(svg("text", { x: mx, y: (y1 + y2) / 2 - 4, class: "edge-label" }, short(label, 16)));
  };
  // What a decision's condition reads is drawn into the decision, not again
  // into each call it selects: that dependency is the branch itself.
  const guardedBy = (id) => {
    const out = new Set();
    for (let p = parentOf.get(id), i = 0; p && i < 200; p = parentOf.get(p), i++) for (const d of byId.get(p).decision.depends_on || []) out.add(d);
    return out;
  };
  // A "then" edge only where no other edge already says the order.
  const linked = (m, n) => preds(n).includes(m.id);
  for (const [n, m] of follows) if (!linked(m, n)) edge(m.id, n, "then");
  for (const n of drawn) {
    if (n.site) {
      const guard = guardedBy(n.id);
      for (const d of n.site.depends_on || []) if (!guard.has(d)) edge(d, n, "data");
      for (const d of n.site.after || []) edge(d, n, "order");
    } else if (n.decision) {
      for (const d of n.decision.depends_on || []) edge(d, n, "data");
      for (const b of n.decision.branches || []) for (const id of b.nodes || []) { const m = byId.get(id); if (m) edge(n.id, m, "branch", b.label); }
      continue;
    }
  }
  for (const n of drawn) root.append(n.decision ? decisionNode(n, W, H) : n.calls.length ? taskNode(n, t, W, H) : plannedNode(n, W, H));
  box.replaceChildren(root);
  const notes = [];
  if (!plan.length && nodes.length - drawn.length + aggregated > 0) {
    notes.push(`The first ${count(drawn.length)} calls are drawn; ${count(nodes.length - drawn.length + aggregated)} more are in the trace tree.`);
  } else {
    if (nodes.length > drawn.length) notes.push(`The first ${count(drawn.length)} nodes are drawn; ${count(nodes.length - drawn.length)} more are not.`);
    if (aggregated > 0) notes.push(`${count(aggregated)} more calls were aggregated: they are in the trace tree, not counted here.`);
  }
  if (notes.length) box.append(el("p", { class: "meta dag-more" }, notes.join(" ")));
}

const DECISION_SIGN = { if: "if", switch: "switch", ternary: "?:", and: "&&", or: "||", nullish: "??" };

function decisionNode(n, W, H) {
  const c = n.decision;
  const sign = DECISION_SIGN[c.kind] || c.kind;
  return svg("g", { class: "decision", transform: `translate(${n.x},${n.y})`, "data-decision": c.id },
    svg("title", {}, `${c.id} ${c.kind} ${c.condition || ""}`),
    svg("path", { d: `M 0 ${H / 2} L 16 0 L ${W - 16} 0 L ${W} ${H / 2} L ${W - 16} ${H} L 16 ${H} Z` }),
    svg("text", { x: 20, y: 20, class: "tool" }, sign),
    svg("text", { x: 20, y: 38, class: "sub" }, short(c.condition || c.id, 26)));
}

function taskNode(n, t, W, H) {
  const calls = n.calls;
  const task = calls[0];
  const failed = calls.filter((c) => !c.success);
  const side = task.routing === "client" || task.routing === "server" ? task.routing : "unknown";
  const total = calls.reduce((a, c) => a + (c.duration_ms || 0), 0);
  const id = n.site ? n.site.id : task.task_id;
  const g = svg("g", { class: `node ${side}${failed.length ? " failed" : ""}`, transform: `translate(${n.x},${n.y})`,
    "data-task": t.trace_id + "/" + task.task_id, "data-site": id, tabindex: 0 },
  svg("title", {}, calls.length > 1
    ? `${id} ${task.tool}: ${count(calls.length)} calls (${calls.slice(0, 20).map((c) => c.task_id).join(", ")}${calls.length > 20 ? ", …" : ""}), ${failed.length} failed`
    : `${task.task_id} ${task.tool}${task.error ? "\n" + task.error : ""}`),
  svg("rect", { width: W, height: H, rx: 8 }),
  svg("text", { x: 10, y: 20, class: "tool" }, short(task.tool_id || task.tool, calls.length > 1 ? 17 : 24)),
  svg("text", { x: 10, y: 38, class: "sub" }, `${calls.length > 1 ? id : task.task_id} · ${ms(total)}`));
  if (calls.length > 1) g.append(svg("text", { x: W - 10, y: 20, class: "count", "text-anchor": "end" }, "×" + count(calls.length)));
  else if (failed.length) g.append(svg("text", { x: W - 20, y: 20, class: "mark" }, "✕"));
  // A site of many calls opens its first failed call, else its first.
  const open = () => showTask(failed[0] || task, t);
  g.addEventListener("click", open);
  g.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(); });
  return g;
}

function plannedNode(n, W, H) {
  return svg("g", { class: "planned", transform: `translate(${n.x},${n.y})` },
    svg("title", {}, `${n.site.id} ${n.site.tool}: planned, not run`),
    svg("rect", { width: W, height: H, rx: 8 }),
    svg("text", { x: 10, y: 20, class: "tool" }, short(n.site.tool, 24)),
    svg("text", { x: 10, y: 38, class: "sub" }, `${n.site.id} · not run`));
}

// ---------- the trace tree ----------

// One row per trace and per task, nested by child trace, each with a bar
// placed on the root trace's timeline. Times keep their microseconds
// (startMs): Date.parse drops them, which drew a 0.1 ms call at 1.0 ms
// after an execution that ended at 0.55 ms (issue 41).
function drawTree(node) {
  const root = node.trace;
  const t0 = startMs(root.started_at);
  let span = Math.max(root.duration_ms || 0, 0.001);
  const walk = (n) => {
    const s = startMs(n.trace.started_at) - t0;
    span = Math.max(span, s + (n.trace.duration_ms || 0));
    for (const task of n.trace.tasks || []) span = Math.max(span, startMs(task.started_at) - t0 + (task.duration_ms || 0));
    (n.children || []).forEach(walk);
  };
  walk(node);
  const box = $("#tree");
  box.replaceChildren(el("div", { class: "tree-head" }, el("span"), el("span", { class: "scale" }, el("span", {}, "0 ms"), el("span", {}, ms(span)))));
  // A bar is drawn inside its parent's [lo, hi] (a call inside its
  // execution, a child trace inside the call that ran it): the times come
  // from clocks read at different moments (a package's clock for a local
  // run, a capability's trace inside its call), so a few microseconds
  // either way must not draw a call outliving its execution. The label
  // keeps the measured duration.
  const nest = (start, dur, lo, hi) => {
    const s = Math.min(Math.max(start, lo), hi);
    return [s, Math.max(0, Math.min(start + dur, hi) - s)];
  };
  const bar = (start, dur, cls) => {
    const b = el("div", { class: "bar " + cls });
    const left = Math.max(0, Math.min(100, (start / span) * 100));
    b.style.left = left + "%";
    // At least a sliver, visible, but never past the timeline's end.
    b.style.width = Math.min(Math.max(0.4, (dur / span) * 100), 100 - left) + "%";
    return el("div", { class: "track" }, b);
  };
  // Rows are built in a fragment and inserted once; at most TREE_MAX_ROWS
  // task rows over the whole tree, the rest counted in one row.
  const out = document.createDocumentFragment();
  let budget = TREE_MAX_ROWS;
  const note = (text, depth, cls) => {
    const r = el("div", { class: "tree-row " + cls }, el("div", { class: "label" }, text));
    r.firstChild.style.paddingLeft = depth * 18 + "px";
    out.append(r);
    return r;
  };
  const render = (n, depth, lo, hi) => {
    const tr = n.trace;
    const label = tr.capability_fqdn || (depth === 0 ? "execution" : "child trace");
    const [ts, td] = nest(startMs(tr.started_at) - t0, tr.duration_ms || 0, lo, hi);
    const rowEl = el("div", { class: "tree-row trace-row" + (tr.success ? "" : " failed") },
      el("div", { class: "label" }, label, el("span", { class: "sub" }, " " + ms(tr.duration_ms))),
      bar(ts, td, tr.success ? "trace" : "trace failed"));
    rowEl.firstChild.style.paddingLeft = depth * 18 + "px";
    out.append(rowEl);
    const kids = new Map((n.children || []).map((c) => [c.trace.trace_id, c]));
    const tasks = tr.tasks || [];
    const trunc = tr.truncated;
    const gap = trunc && trunc.spans_aggregated > 0 ? Math.max(0, Math.min(trunc.head_spans, tasks.length)) : -1;
    let gapShown = false;
    const showGap = () => { if (!gapShown) { gapShown = true; aggregateRow(trunc, depth + 1); } };
    for (let i = 0; i < tasks.length; i++) {
      if (i === gap) showGap();
      if (budget <= 0) {
        note(`${count(tasks.length - i)} more spans not shown`, depth + 1, "more-row");
        break;
      }
      budget--;
      const task = tasks[i];
      const [ks, kd] = nest(startMs(task.started_at) - t0, task.duration_ms || 0, ts, ts + td);
      const r = el("div", { class: "tree-row task-row" + (task.success ? "" : " failed"), "data-task": tr.trace_id + "/" + task.task_id, tabIndex: 0,
        onclick: () => showTask(task, tr), onkeydown: (ev) => { if (ev.key === "Enter") showTask(task, tr); } },
      el("div", { class: "label" }, `${task.task_id} ${task.tool_id || task.tool}`, el("span", { class: "sub" }, " " + ms(task.duration_ms))),
      bar(ks, kd, (task.routing || "unknown") + (task.success ? "" : " failed")));
      r.firstChild.style.paddingLeft = (depth + 1) * 18 + "px";
      out.append(r);
      const child = task.child_trace_id && kids.get(task.child_trace_id);
      if (child) {
        kids.delete(task.child_trace_id);
        render(child, depth + 2, ks, ks + kd);
      }
    }
    if (gap >= 0) showGap();
    for (const c of kids.values()) {
      if (budget <= 0) {
        note(`${count(kids.size)} child traces not shown`, depth + 1, "more-row");
        break;
      }
      kids.delete(c.trace.trace_id);
      render(c, depth + 1, ts, ts + td);
    }
    if (n.children_omitted > 0) note(`${count(n.children_omitted)} child traces not loaded (the answer's size bound)`, depth + 1, "more-row");
  };
  // The calls a bounded trace aggregated: one row, the most called tools.
  const aggregateRow = (trunc, depth) => {
    const lines = (trunc.aggregates || []).map((a) =>
      `${a.tool === "*" ? "other tools" : a.tool} ×${count(a.calls)}${a.errors ? ` (${count(a.errors)} failed)` : ""}, ` +
      `${ms(a.total_ms)} in all, ${ms(a.min_ms)}–${ms(a.max_ms)} each`);
    const r = note(`${count(trunc.spans_aggregated)} more spans aggregated`, depth, "aggregate-row");
    r.title = lines.join("\n");
    r.firstChild.append(el("span", { class: "sub" }, " " + lines.slice(0, AGGREGATE_LINES).join(" · ") +
      (lines.length > AGGREGATE_LINES ? ` · ${lines.length - AGGREGATE_LINES} more tools` : "")));
  };
  render(node, 0, 0, span);
  box.append(out);
}

// ---------- catalog ----------

// serverStatuses is each hosted server's state from /healthz (no key needed);
// empty when the gateway runs none or the answer is unusable.
async function serverStatuses() {
  try {
    const resp = await fetch("/healthz", { headers: { Accept: "application/json" } });
    const body = await resp.json();
    return body && typeof body.servers === "object" && body.servers ? body.servers : {};
  } catch (_) {
    return {};
  }
}

// serverName is the server a "pml.mcp.<name>.server.<hash>" entry publishes.
function serverName(fqdn) {
  const p = String(fqdn).split(".");
  return p.length === 5 && p[0] === "pml" && p[1] === "mcp" && p[3] === "server" ? p[2] : "";
}

// loadWorkspaceCatalog lists what a workspace can call (GET /api/catalog of
// pml serve): its servers with their state, built-in tools, and the
// gateway's tools and learned capabilities.
async function loadWorkspaceCatalog() {
  const box = $("#catalog");
  try {
    const data = await api("/api/catalog");
    const items = Array.isArray(data.items) ? data.items : null;
    if (!items) throw new Error("unexpected answer");
    const where = (r) => (r === "client" ? "this machine" : r === "server" ? "gateway" : String(r || ""));
    const stateCell = (it) => (!it.state ? el("td", { class: "state" }) :
      el("td", { class: "state state-" + String(it.state) }, String(it.state),
        it.error ? el("div", { class: "sub server-error", title: String(it.error) }, short(String(it.error), 160)) : ""));
    box.replaceChildren(
      data.gateway_error ? el("p", { class: "empty" }, "The gateway's tools are missing: " + short(String(data.gateway_error), 200)) : "",
      el("table", {},
        el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Kind"), el("th", {}, "Runs on"),
          el("th", {}, "From"), el("th", {}, "Uses"), el("th", {}, "State"), el("th", {}, "Description"))),
        el("tbody", {}, ...items.map((it) => el("tr", { "data-id": String(it.id || ""), "data-kind": String(it.kind || "") },
          el("td", { class: "mono", title: String(it.fqdn || "") }, String(it.id || "")),
          el("td", {}, String(it.kind || "")),
          el("td", {}, where(it.routing)),
          el("td", {}, String(it.source || "")),
          el("td", { class: "uses" }, typeof it.uses === "number" ? count(it.uses) : ""),
          stateCell(it),
          el("td", {}, short(String(it.description || ""), 120)))))),
      el("p", { class: "meta" }, `${data.total ?? items.length} entries`));
  } catch (e) {
    box.replaceChildren(el("p", { class: "empty" }, "The catalog is not available: " + e.message));
  }
}

async function loadCatalog() {
  if (onWorkspacePage()) return loadWorkspaceCatalog();
  const box = $("#catalog");
  try {
    const [data, servers] = await Promise.all([api("/mcp?limit=200", "application/json"), serverStatuses()]);
    const items = Array.isArray(data.items) ? data.items : null;
    if (!items) throw new Error("unexpected answer");
    if (items.length === 0) {
      box.replaceChildren(el("p", { class: "empty" }, "The catalog is empty."));
      return;
    }
    const stateCell = (it) => {
      const st = servers[serverName(it.fqdn)];
      if (!st) return el("td", { class: "state" });
      return el("td", { class: "state state-" + String(st.state || "") },
        String(st.state || ""), st.error ? el("div", { class: "sub server-error", title: String(st.error) }, short(String(st.error), 160)) : "");
    };
    box.replaceChildren(el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "FQDN"), el("th", {}, "Type"), el("th", {}, "Routing"),
        el("th", {}, "Uses"), el("th", {}, "State"), el("th", {}, "Description"))),
      el("tbody", {}, ...items.map((it) => el("tr", { "data-fqdn": String(it.fqdn || "") },
        el("td", { class: "mono" }, String(it.fqdn || it.id || "")),
        el("td", {}, String(it.type || "")),
        el("td", {}, String(it.routing || "")),
        el("td", { class: "uses" }, typeof it.uses === "number" ? count(it.uses) : ""),
        stateCell(it),
        el("td", {}, short(String(it.description || ""), 120)))))),
    el("p", { class: "meta" }, `${data.total ?? items.length} entries`));
  } catch (e) {
    box.replaceChildren(el("p", { class: "empty" }, "The catalog is not available on this gateway" +
      (e.status ? ` (HTTP ${e.status})` : "") + "."));
  }
}

// ---------- wiring ----------

function refresh() {
  loadList();
  loadCatalog();
  const m = location.hash.match(/^#trace=(.+)$/);
  if (m) openTrace(decodeURIComponent(m[1]));
}

// ---------- sign-in (authorization code with PKCE, docs/auth.md) ----------

function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// offerSignIn shows the sign-in button when the gateway names an issuer
// with a web client (GET /api/auth/web); a key keeps working either way.
async function offerSignIn() {
  let cfg;
  try {
    const resp = await fetch("/api/auth/web", { headers: { Accept: "application/json" } });
    if (!resp.ok) return;
    cfg = await resp.json();
  } catch (_) {
    return;
  }
  const button = $("#sign-in");
  button.textContent = "Sign in with " + new URL(cfg.issuer).host;
  button.hidden = false;
  button.addEventListener("click", () => signIn(cfg));
}

async function signIn(cfg) {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem(SIGNIN_STORE, JSON.stringify({ verifier, state, token_endpoint: cfg.token_endpoint, client_id: cfg.client_id }));
  const u = new URL(cfg.authorization_endpoint);
  const params = {
    response_type: "code", client_id: cfg.client_id, redirect_uri: location.origin + "/", scope: cfg.scope,
    code_challenge: challenge, code_challenge_method: "S256", state, resource: cfg.resource,
  };
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  location.assign(u.toString());
}

// finishSignIn completes a sign-in the issuer redirected back from: the
// state must be this page's, the code is exchanged with the verifier, and
// the access token is kept like a key. It reports whether it handled one.
async function finishSignIn() {
  const p = new URLSearchParams(location.search);
  if (!p.has("code") && !p.has("error")) return false;
  const saved = JSON.parse(sessionStorage.getItem(SIGNIN_STORE) || "null");
  sessionStorage.removeItem(SIGNIN_STORE);
  history.replaceState(null, "", location.pathname);
  if (p.has("error")) {
    setStatus("Sign-in failed: " + (p.get("error_description") || p.get("error")), true);
    return true;
  }
  if (!saved || p.get("state") !== saved.state) {
    setStatus("Sign-in failed: the answer does not match a sign-in of this page.", true);
    return true;
  }
  let body = null;
  let status = 0;
  try {
    const resp = await fetch(saved.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: p.get("code"), redirect_uri: location.origin + "/",
        client_id: saved.client_id, code_verifier: saved.verifier }),
    });
    status = resp.status;
    body = await resp.json();
  } catch (_) { /* reported below */ }
  if (!body || !body.access_token) {
    setStatus("Sign-in failed: " + ((body && (body.error_description || body.error)) || "HTTP " + status), true);
    return true;
  }
  localStorage.setItem(KEY_STORE, body.access_token);
  return true;
}

// takeTokenFromURL keeps the token `pml serve` prints in its address
// (#token=…) as this origin's key, and takes it out of the address bar.
function takeTokenFromURL() {
  const m = location.hash.match(/^#token=([0-9a-f]+)$/);
  if (!m) return;
  localStorage.setItem(KEY_STORE, m[1]);
  history.replaceState(null, "", location.pathname + location.search);
}

document.addEventListener("DOMContentLoaded", async () => {
  takeTokenFromURL();
  if (!onWorkspacePage()) {
    await finishSignIn();
    offerSignIn();
  }
  $("#key").value = apiKey();
  $("#key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const k = $("#key").value.trim();
    if (k) localStorage.setItem(KEY_STORE, k);
    state.page = 1;
    refresh();
  });
  $("#forget-key").addEventListener("click", () => {
    localStorage.removeItem(KEY_STORE);
    $("#key").value = "";
    $("#traces tbody").replaceChildren();
    $("#detail").hidden = true;
    setStatus("Key forgotten.");
  });
  $("#filters").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.filters = readFilters(ev.target);
    state.page = 1;
    loadList();
  });
  $("#filters").addEventListener("reset", () => {
    state.filters = {};
    state.page = 1;
    setTimeout(loadList);
  });
  $("#prev").addEventListener("click", () => { state.page = Math.max(1, state.page - 1); loadList(); });
  $("#next").addEventListener("click", () => { state.page += 1; loadList(); });
  if (onWorkspacePage()) $("h1 span").textContent = "workspace";
  if (apiKey()) refresh();
  else if (!$("#status").classList.contains("error")) setStatus(noKeyMessage()); // keep a failed sign-in's reason
});
