// What code mode costs over a direct call (issue 42; figures and how to run
// it: docs/performance.md, "What code mode costs over a direct call").
//
// One snippet, three `echo` calls to the MCP reference "everything" server
// over stdio, run by each system below. Each is one long-lived connection of
// the official TypeScript SDK client (StdioClientTransport, as an AI client
// starts an MCP server), set up once:
//
//   direct       the client spawns the everything server and calls `echo`
//                three times in a row: no code mode.
//   pml          the client spawns `pml stdio` in local mode (in-process
//                gateway, SQLite under the workspace's .pml/), whose .pml.json
//                declares the everything server as a local stdio server
//                allowed in permissions.allow, and calls `execute` with code
//                making the same three calls.
//   hybrid       the same `pml stdio`, connected to a `pml gateway` this
//                script starts on loopback with a fresh key: the gateway
//                answers execute_locally and the package runs the code with
//                its local server (docs/architecture.md, the three routings).
//   pml-base,    the same two with another pml binary (--baseline), say an
//   hybrid-base  older commit's build, measured in the same run.
//
// Measured: warm-up runs, then R rounds of N runs per system, the systems
// interleaved (by default run by run, each run in a shuffled order; or in
// blocks, --interleave block, in a rotated order). A run's wall time is
// performance.now() around the client's call(s), the answer checked after
// the clock stops. CPU is the server side's process tree: the process the
// SDK client spawned and its descendants (pml stdio's everything server),
// plus the gateway's for hybrid, from /proc (each live thread's schedstat,
// in nanoseconds, plus the cutime+cstime of children a process reaped), read
// between rounds, so each round's window holds all of a system's work,
// background work after an answer included; divided by the round's runs.
// The client's own CPU is not counted. Linux only for CPU.
// Per round: p50 and p95 of the runs, CPU per run, and against direct, in
// the same round, p50 minus direct's p50 and CPU over direct's CPU; printed
// as the medians over rounds. With --baseline, pml and hybrid are also given
// against their -base twin in the same rounds: what each adds to direct's
// p50 and CPU as a share of what the baseline adds, which the machine's
// speed moves less than the figures against direct.
//
// Usage (Node.js; `npm ci` here first; the binary built from the repo root
// with `go build -o /tmp/pml ./cmd/pml`):
//   node codemode-bench.mjs PATH_TO_PML [--baseline PATH_TO_OLD_PML]
//     [--baseline-label NAME] [--rounds 5] [--runs 200] [--warmup 200]
//     [--systems direct,pml,hybrid,...] [--interleave run|block] [--json]
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, readdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir, loadavg, cpus } from "node:os";
import { join, dirname, basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const usage = `usage: node codemode-bench.mjs PATH_TO_PML [--baseline PATH] [--baseline-label NAME]
  [--rounds R] [--runs N] [--warmup W] [--systems direct,pml,hybrid,pml-base,hybrid-base]
  [--interleave run|block] [--json]`;

function parseArgs(argv) {
  const o = { rounds: 5, runs: 200, warmup: 200, interleave: "run", json: false, systems: null, baseline: null, baselineLabel: null, pml: null };
  const num = (v, name) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) fail(`${name} wants a whole number, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : fail(`${a} wants a value`));
    if (a === "--rounds") o.rounds = num(val(), a);
    else if (a === "--runs") o.runs = num(val(), a);
    else if (a === "--warmup") o.warmup = num(val(), a);
    else if (a === "--baseline") o.baseline = resolve(val());
    else if (a === "--baseline-label") o.baselineLabel = val();
    else if (a === "--systems") o.systems = val().split(",").filter(Boolean);
    else if (a === "--interleave") o.interleave = val();
    else if (a === "--json") o.json = true;
    else if (a === "-h" || a === "--help") fail("", 0);
    else if (!a.startsWith("-") && !o.pml) o.pml = resolve(a);
    else fail(`unknown argument ${a}`);
  }
  if (!o.pml) fail("the pml binary is missing");
  if (o.rounds < 1 || o.runs < 1) fail("--rounds and --runs must be at least 1");
  if (!["run", "block"].includes(o.interleave)) fail("--interleave is run or block");
  const known = ["direct", "pml", "hybrid", "pml-base", "hybrid-base"];
  o.systems ??= o.baseline ? known : known.slice(0, 3);
  for (const s of o.systems) if (!known.includes(s)) fail(`unknown system ${s} (known: ${known.join(", ")})`);
  if (o.systems.some((s) => s.endsWith("-base")) && !o.baseline) fail("pml-base and hybrid-base need --baseline");
  return o;
}

function fail(msg, code = 4) {
  if (msg) console.error(`codemode-bench: ${msg}`);
  console.error(usage);
  process.exit(code);
}

const opts = parseArgs(process.argv.slice(2));
const here = dirname(fileURLToPath(import.meta.url));
const everythingDir = join(here, "node_modules", "@modelcontextprotocol", "server-everything");
const everything = join(everythingDir, "dist", "index.js");
if (!existsSync(everything)) fail(`${everything} is missing: run npm ci in ${here}`);
const everythingVersion = JSON.parse(readFileSync(join(everythingDir, "package.json"), "utf8")).version;
for (const bin of [opts.pml, opts.baseline]) if (bin && !existsSync(bin)) fail(`no binary at ${bin}`);

// The snippet, and what it answers.
const messages = ["one", "two", "three"];
const code = messages.map((m, i) => `const r${i} = await mcp.everything.echo({message: ${JSON.stringify(m)}});`).join("\n") +
  `\nreturn [${messages.map((_, i) => `r${i}`).join(", ")}];`;
const want = messages.map((m) => `Echo: ${m}`);
const callTimeout = { timeout: 30_000 }; // a hang fails the run instead of stalling it

const scratch = mkdtempSync(join(tmpdir(), "pml-codemode-bench-"));
const gateways = [];
const clients = [];

// The environment of this process without any PML_ setting, plus extra.
function env(extra) {
  const out = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PML_")) out[k] = v;
  return { ...out, ...extra };
}

// tail keeps the last bytes a child wrote on stderr, shown if it fails.
function tail(stream) {
  const t = { text: "" };
  stream?.on("data", (chunk) => {
    t.text = (t.text + chunk).slice(-4000);
  });
  return t;
}

async function connect(command, args, cwd, extraEnv) {
  const transport = new StdioClientTransport({ command, args, cwd, env: env(extraEnv), stderr: "pipe" });
  const log = tail(transport.stderr);
  const client = new Client({ name: "codemode-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (err) {
    console.error(`codemode-bench: ${basename(command)} ${args.join(" ")} did not connect; its stderr, last lines:\n${log.text}`);
    throw err;
  }
  clients.push(client);
  return { client, pid: transport.pid, log };
}

// startGateway creates a key and runs `pml gateway` on a free loopback port,
// reading the address it logs (as peer.mjs does).
async function startGateway(bin, dir) {
  const db = join(dir, "gateway.db");
  const key = execFileSync(bin, ["gateway", "key", "create", "--db", db, "--org", "bench", "--project", "codemode"], { env: env({}) })
    .toString()
    .trim();
  const gw = spawn(bin, ["gateway", "--addr", "127.0.0.1:0", "--metrics-addr", "off", "--db", db], {
    env: env({}),
    stdio: ["ignore", "ignore", "pipe"],
  });
  gateways.push(gw);
  const url = await new Promise((res, rej) => {
    let log = "";
    gw.stderr.on("data", (chunk) => {
      log = (log + chunk).slice(-8000);
      for (const line of log.split("\n")) {
        const m = line.match(/msg=listening .*addr=(http:\/\/127\.0\.0\.1:\d+)/);
        if (m && !line.includes("server=metrics")) res(m[1]);
      }
    });
    gw.on("exit", (c) => rej(new Error(`pml gateway exited (${c}):\n${log}`)));
  });
  return { url, key, pid: gw.pid };
}

async function direct() {
  const { client, pid, log } = await connect(process.execPath, [everything, "stdio"], scratch, {});
  return {
    roots: [{ pid, name: "everything server" }],
    log,
    call: async () => {
      const out = [];
      for (const message of messages) out.push(await client.callTool({ name: "echo", arguments: { message } }, undefined, callTimeout));
      return out;
    },
    check: (out) => assert.deepEqual(out.map((r) => (r.isError ? r : r.content[0].text)), want),
  };
}

// pmlSystem: `pml stdio` in a workspace of its own whose .pml.json declares
// the everything server and allows it (docs/configuration.md); with a gateway
// (hybrid) when gw is given, else in local mode.
async function pmlSystem(bin, name, gw) {
  const ws = mkdtempSync(join(scratch, `${name}-`));
  writeFileSync(
    join(ws, ".pml.json"),
    JSON.stringify({
      version: "1",
      permissions: { allow: ["everything"] },
      mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
    }),
  );
  const extra = gw ? { PML_CLOUD_URL: gw.url, PML_API_KEY: gw.key } : {};
  const { client, pid, log } = await connect(bin, ["stdio"], ws, { PML_WORKSPACE: ws, ...extra });
  return {
    roots: [{ pid, name: "pml stdio" }, ...(gw ? [{ pid: gw.pid, name: "pml gateway" }] : [])],
    log,
    call: () => client.callTool({ name: "execute", arguments: { code } }, undefined, callTimeout),
    check: (res) => {
      const answer = JSON.parse(res.content[0].text);
      assert.equal(answer.status, "success", res.content[0].text);
      assert.equal(answer.executed_locally, true, res.content[0].text);
      assert.deepEqual(answer.result, want);
    },
  };
}

function versionOf(bin) {
  try {
    const v = JSON.parse(execFileSync(bin, ["version", "--json"], { env: env({}) }).toString());
    return [v.version, v.commit].filter((x) => x && x !== "unknown").join(" ") || "unknown";
  } catch {
    return "unknown";
  }
}

// --- CPU of process trees, from /proc ---------------------------------------

const hasProc = existsSync("/proc/self/stat") && existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString()) || 100;
  } catch {
    return 100;
  }
})();

// procTable: every process's parent and the CPU ticks of the children it
// reaped (cutime+cstime), from /proc/PID/stat.
function procTable() {
  const table = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // f[0] is field 3, state
    table.set(Number(name), { ppid: Number(f[1]), reapedTicks: Number(f[13]) + Number(f[14]) });
  }
  return table;
}

// threadsNS: the CPU nanoseconds of a process's live threads, the first
// field of /proc/PID/task/TID/schedstat (finer than stat's clock ticks).
function threadsNS(pid) {
  let ns = 0;
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns;
}

// cpuSnapshot: for each system, for each of its roots, the CPU milliseconds
// so far of that process and all its descendants.
function cpuSnapshot(systems) {
  const table = procTable();
  const children = new Map();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  return systems.map((s) => s.roots.map((root) => {
    let ms = 0;
    const seen = new Set();
    const todo = [root.pid];
    while (todo.length) {
      const pid = todo.pop();
      if (seen.has(pid) || !table.has(pid)) continue;
      seen.add(pid);
      ms += threadsNS(pid) / 1e6 + (table.get(pid).reapedTicks * 1000) / ticksPerSecond;
      todo.push(...(children.get(pid) ?? []));
    }
    return ms;
  }));
}

// --- stats -------------------------------------------------------------------

function quantile(sorted, q) {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}
function median(xs) {
  const s = xs.filter((x) => x != null && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// shuffled: 0..k-1 in a random order, from a fixed seed (mulberry32), so
// every system follows every other as often, in the same order each time.
let seed = 42;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function shuffled(k) {
  const a = [...Array(k).keys()];
  for (let i = k - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

// --- the run -----------------------------------------------------------------

async function setUp() {
  const base = opts.baselineLabel ?? (opts.baseline ? basename(opts.baseline) : null);
  const systems = [];
  let gwNew, gwBase;
  for (const name of opts.systems) {
    let s;
    if (name === "direct") s = { ...(await direct()), binary: `node server-everything ${everythingVersion}` };
    else if (name === "pml") s = { ...(await pmlSystem(opts.pml, name)), binary: opts.pml };
    else if (name === "pml-base") s = { ...(await pmlSystem(opts.baseline, name)), binary: opts.baseline, label: base };
    else if (name === "hybrid") {
      gwNew ??= await startGateway(opts.pml, mkdtempSync(join(scratch, "gw-")));
      s = { ...(await pmlSystem(opts.pml, name, gwNew)), binary: opts.pml };
    } else if (name === "hybrid-base") {
      gwBase ??= await startGateway(opts.baseline, mkdtempSync(join(scratch, "gw-base-")));
      s = { ...(await pmlSystem(opts.baseline, name, gwBase)), binary: opts.baseline, label: base };
    }
    if (name !== "direct") s.version = versionOf(s.binary);
    systems.push({ name, ...s, rounds: [] });
  }
  return systems;
}

async function runOnce(s, times) {
  const t0 = performance.now();
  const res = await s.call();
  const ms = performance.now() - t0;
  try {
    s.check(res);
  } catch (err) {
    console.error(`codemode-bench: ${s.name} answered wrong; its stderr, last lines:\n${s.log.text}`);
    throw err;
  }
  times?.push(ms);
}

async function measure(systems) {
  for (let i = 0; i < opts.warmup; i++) for (const s of systems) await runOnce(s);
  await sleep(200);
  const k = systems.length;
  let before = hasProc ? cpuSnapshot(systems) : null;
  for (let r = 0; r < opts.rounds; r++) {
    const times = systems.map(() => []);
    if (opts.interleave === "run") {
      for (let i = 0; i < opts.runs; i++) for (const x of shuffled(k)) await runOnce(systems[x], times[x]);
    } else {
      for (let j = 0; j < k; j++) {
        const x = (r + j) % k;
        for (let i = 0; i < opts.runs; i++) await runOnce(systems[x], times[x]);
      }
    }
    await sleep(100); // let the round's background work land in its window
    const after = hasProc ? cpuSnapshot(systems) : null;
    systems.forEach((s, x) => {
      const sorted = times[x].sort((a, b) => a - b);
      const round = { p50_ms: quantile(sorted, 0.5), p95_ms: quantile(sorted, 0.95), cpu_ms_per_run: null };
      if (hasProc) {
        const byRoot = s.roots.map((_, i) => (after[x][i] - before[x][i]) / opts.runs);
        round.cpu_ms_per_run = byRoot.reduce((a, b) => a + b, 0);
        if (s.roots.length > 1) round.cpu_ms_per_run_by_process = Object.fromEntries(s.roots.map((root, i) => [root.name, byRoot[i]]));
      }
      s.rounds.push(round);
    });
    before = after;
  }
}

function summarize(systems) {
  const d = systems.find((s) => s.name === "direct");
  return systems.map((s) => {
    const out = {
      name: s.name,
      binary: s.binary,
      version: s.version,
      label: s.label,
      p50_ms: median(s.rounds.map((r) => r.p50_ms)),
      p95_ms: median(s.rounds.map((r) => r.p95_ms)),
      cpu_ms_per_run: median(s.rounds.map((r) => r.cpu_ms_per_run)),
      rounds: s.rounds,
    };
    if (hasProc && s.roots.length > 1)
      out.cpu_ms_per_run_by_process = Object.fromEntries(s.roots.map((root) => [root.name, median(s.rounds.map((r) => r.cpu_ms_per_run_by_process[root.name]))]));
    if (d && s !== d) {
      out.p50_minus_direct_ms = median(s.rounds.map((r, i) => r.p50_ms - d.rounds[i].p50_ms));
      out.cpu_over_direct = median(s.rounds.map((r, i) => (d.rounds[i].cpu_ms_per_run > 0 ? r.cpu_ms_per_run / d.rounds[i].cpu_ms_per_run : null)));
    }
    // Against the baseline binary in the same rounds: what this system adds
    // over direct as a share of what the baseline adds. The machine's speed
    // moves the figures against direct; this share holds steadier
    // (docs/performance.md "Measuring against the machine's state").
    const b = systems.find((x) => x.name === s.name + "-base");
    if (d && b) {
      const share = (f) => median(s.rounds.map((r, i) => {
        const base = f(b.rounds[i]) - f(d.rounds[i]);
        return base > 0 ? (f(r) - f(d.rounds[i])) / base : null;
      }));
      out.vs_base = { label: b.label ?? basename(b.binary), p50_over_direct: share((r) => r.p50_ms), cpu_over_direct: hasProc ? share((r) => r.cpu_ms_per_run) : null };
    }
    return out;
  });
}

function print(report) {
  const f = (x, digits = 2) => (x == null ? "—" : x.toFixed(digits));
  console.log(
    `codemode-bench: ${messages.length} echo calls to the everything server over stdio per run; ` +
      `${report.rounds} rounds × ${report.runs} runs per system (after ${report.warmup} warm-up runs each), ` +
      (report.interleave === "run" ? "interleaved run by run in a shuffled order" : "interleaved in blocks"),
  );
  console.log(
    `CPU per run: the server side's process tree (the process the SDK client spawned and its children; hybrid: plus pml gateway's), ` +
      `over whole rounds, background work included; not the client's own CPU${report.cpu ? "" : " (no /proc here: not measured)"}`,
  );
  console.log(`medians over rounds; load average ${report.machine.loadavg_before.join(" ")} before, ${report.machine.loadavg_after.join(" ")} after; ${report.machine.cpus} CPUs\n`);
  const rows = [["system", "p50 ms", "p95 ms", "CPU-ms/run", "p50 − direct", "CPU ÷ direct", "binary"]];
  for (const s of report.systems)
    rows.push([
      s.name,
      f(s.p50_ms),
      f(s.p95_ms),
      f(s.cpu_ms_per_run),
      s.p50_minus_direct_ms == null ? "—" : `${s.p50_minus_direct_ms >= 0 ? "+" : ""}${f(s.p50_minus_direct_ms)} ms`,
      s.cpu_over_direct == null ? "—" : `${f(s.cpu_over_direct)}×`,
      s.name === "direct" ? s.binary : `${s.label ?? basename(s.binary)} (${s.version})`,
    ]);
  const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 || c === r.length - 1 ? cell.padEnd(w[c]) : cell.padStart(w[c]))).join("  ").trimEnd());
  for (const s of report.systems)
    if (s.vs_base)
      console.log(`${s.name} against ${s.vs_base.label} in the same rounds: ${f(s.vs_base.p50_over_direct)}× what it adds to direct's p50, ${f(s.vs_base.cpu_over_direct)}× what it adds to direct's CPU`);
  for (const s of report.systems)
    if (s.cpu_ms_per_run_by_process)
      console.log(`${s.name}'s CPU-ms/run by process tree: ${Object.entries(s.cpu_ms_per_run_by_process).map(([n, v]) => `${n} ${f(v)}`).join(", ")}`);
}

let failed = false;
try {
  const loadBefore = loadavg().map((x) => Number(x.toFixed(2)));
  const systems = await setUp();
  await measure(systems);
  const report = {
    snippet: code,
    rounds: opts.rounds,
    runs: opts.runs,
    warmup: opts.warmup,
    interleave: opts.interleave,
    cpu: hasProc ? "server-side process tree, whole rounds, per run" : null,
    machine: { cpus: cpus().length, node: process.version, loadavg_before: loadBefore, loadavg_after: loadavg().map((x) => Number(x.toFixed(2))) },
    systems: summarize(systems),
  };
  if (opts.json) console.log(JSON.stringify(report, (k, v) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(3)) : v), 2));
  else print(report);
} catch (err) {
  failed = true;
  console.error("codemode-bench: FAILED:", err);
} finally {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(
    gateways.map(
      (gw) =>
        new Promise((res) => {
          if (gw.exitCode !== null || gw.signalCode !== null) return res();
          gw.on("exit", res);
          gw.kill("SIGTERM");
          setTimeout(() => (gw.kill("SIGKILL"), res()), 5000).unref();
        }),
    ),
  );
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
