// An AI-client-like peer for CI: the official MCP TypeScript SDK client
// spawns `pml stdio` (as Claude Code would) against a real `pml gateway` on
// loopback and drives execute and discover through the three routings of
// docs/architecture.md, with the npm reference filesystem server as a local
// MCP server, with progress (onprogress) on local, remote and hybrid runs
// and an abort during a 3 s call (sleep-server.mjs, on this machine and on
// the gateway); then the same client runs the README's main command in local
// mode (no gateway).
//
// Usage: node peer.mjs PATH_TO_PML_BINARY
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const pml = process.argv[2];
if (!pml) {
  console.error("usage: node peer.mjs PATH_TO_PML_BINARY");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const npmFilesystem = join(here, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const sleepServer = join(here, "sleep-server.mjs");

// The whole run is bounded: a hang fails CI instead of stalling it.
const watchdog = setTimeout(() => {
  console.error("peer: timed out");
  process.exit(1);
}, 120_000);

const scratch = mkdtempSync(join(tmpdir(), "pml-peer-"));
const children = [];

// The environment of this process without any PML_ setting, plus extra.
function env(extra) {
  const out = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PML_")) out[k] = v;
  return { ...out, ...extra };
}

// startGateway creates a key and runs `pml gateway` on a free loopback port,
// reading the address it logs. It hosts the slow server as "slow".
async function startGateway() {
  const db = join(scratch, "gateway.db");
  const config = join(scratch, "gateway.json");
  writeFileSync(config, JSON.stringify({ servers: { slow: { command: process.execPath, args: [sleepServer], hosted: true, description: "sleeps" } } }));
  const key = execFileSync(pml, ["gateway", "key", "create", "--db", db, "--org", "acme", "--project", "web"], { env: env({}) })
    .toString()
    .trim();
  const gw = spawn(pml, ["gateway", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--db", db, "--config", config], {
    env: env({}),
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(gw);
  const url = await new Promise((resolve, reject) => {
    let log = "";
    gw.stderr.on("data", (chunk) => {
      log += chunk;
      // The MCP listener's line; the metrics listener logs server=metrics.
      for (const line of log.split("\n")) {
        const m = line.match(/msg=listening .*addr=(http:\/\/127\.0\.0\.1:\d+)/);
        if (m && !line.includes("server=metrics")) resolve(m[1]);
      }
    });
    gw.on("exit", (code) => reject(new Error(`pml gateway exited (${code}):\n${log}`)));
  });
  return { url, key };
}

// connect spawns `pml stdio` for workspace ws with the SDK's stdio transport.
async function connect(ws, extraEnv) {
  const transport = new StdioClientTransport({
    command: pml,
    args: ["stdio"],
    cwd: ws,
    env: env({ PML_WORKSPACE: ws, ...extraEnv }),
    stderr: "inherit",
  });
  const client = new Client({ name: "pml-ci-peer", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

// execute calls the package's execute tool and returns its one JSON answer,
// checking that isError agrees with the status.
async function execute(client, code) {
  const res = await client.callTool({ name: "execute", arguments: { code } });
  assert.equal(res.content.length, 1, "one content item");
  const answer = JSON.parse(res.content[0].text);
  assert.equal(Boolean(res.isError), answer.status === "error", `isError agrees with ${res.content[0].text}`);
  return answer;
}

function success(answer, local) {
  assert.equal(answer.status, "success", JSON.stringify(answer));
  assert.equal(answer.executed_locally, local, JSON.stringify(answer));
  assert.ok(answer.workflow_id && answer.trace_id && answer.duration_ms >= 0, JSON.stringify(answer));
  return answer.result;
}

async function hybrid() {
  const { url, key } = await startGateway();
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, "data.json"), JSON.stringify({ items: [3, 4, 5] }));
  writeFileSync(join(ws, "notes.md"), "# from the npm server");
  writeFileSync(
    join(ws, ".pml.json"),
    JSON.stringify({
      version: "1",
      permissions: { allow: ["*"] },
      mcpServers: {
        npmfs: { command: process.execPath, args: [npmFilesystem, ws] },
        nap: { command: process.execPath, args: [sleepServer] },
      },
    }),
  );
  const client = await connect(ws, { PML_CLOUD_URL: url, PML_API_KEY: key });
  try {
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    // admin (capability management, forwarded to the gateway) is callable
    // but not listed: discover's description says how to call it.
    assert.deepEqual(names, ["discover", "execute"]);

    // Scenario 1: server tools only -> the gateway runs it.
    assert.deepEqual(success(await execute(client, `return await mcp.json.parse({data: '{"n": 1}'})`), false), { n: 1 });

    // Scenario 2: client tools only -> execute_locally -> the package runs it.
    assert.deepEqual(success(await execute(client, `return await mcp.filesystem.read_file({path: "data.json"})`), true), JSON.stringify({ items: [3, 4, 5] }));

    // Scenario 3: mixed, with a real npm MCP server as a local tool.
    const mixed = success(
      await execute(
        client,
        `const parsed = await mcp.json.parse({data: await mcp.filesystem.read_file({path: "data.json"})});
         const sum = await mcp.math.add({a: parsed.items[0], b: parsed.items[2]});
         const notes = await mcp.npmfs.read_text_file({path: ${JSON.stringify(join(ws, "notes.md"))}});
         return {sum, notes: notes.content};`,
      ),
      true,
    );
    assert.deepEqual(mixed, { sum: 8, notes: "# from the npm server" });

    // Calls inside Promise.all run concurrently.
    const all = success(await execute(client, `return (await Promise.all([1, 2, 3].map(n => mcp.math.add({a: n, b: n})))).join(",")`), false);
    assert.equal(all, "2,4,6");

    // An error is one JSON answer with isError, and the session goes on.
    const unknown = await execute(client, `return await mcp.filesystem.nope({})`);
    assert.equal(unknown.error_code, "UNKNOWN_TOOL", JSON.stringify(unknown));
    const caught = success(await execute(client, `try { await mcp.filesystem.read_file({path: "missing"}) } catch (e) { return "caught" }`), true);
    assert.equal(caught, "caught");

    // discover merges the gateway's tools with this machine's.
    const disc = await client.callTool({ name: "discover", arguments: { limit: 1000 } });
    const tools = JSON.parse(disc.content[0].text).tools;
    const routing = Object.fromEntries(tools.map((t) => [t.id, t.routing]));
    assert.equal(routing["filesystem:read_file"], "client");
    assert.equal(routing["npmfs:read_text_file"], "client");
    assert.equal(routing["json:parse"], "server");
    assert.ok(tools.every((t) => t.declaration), "every tool has a TypeScript declaration");

    await progress(client);
    await abort(client, ws);
  } finally {
    await client.close();
  }
}

// executeWithProgress runs code with an onprogress callback and returns the
// answer and the notifications it saw, as "progress/total message".
async function executeWithProgress(client, code) {
  const seen = [];
  const res = await client.callTool({ name: "execute", arguments: { code } }, undefined, {
    onprogress: (p) => seen.push(`${p.progress}/${p.total} ${p.message}`),
  });
  return { answer: JSON.parse(res.content[0].text), seen };
}

// progress: an execute with a progress token gets one notification per tool
// call, numbered in order, with the plan's call count and the tool id,
// wherever the code runs: on this machine, on the gateway (relayed by the
// package), or both (a hybrid run counts each call once).
async function progress(client) {
  const errors = [];
  const prevOnerror = client.onerror;
  client.onerror = (e) => errors.push(String(e));
  try {
    const cases = [
      {
        name: "local",
        local: true,
        code: `const a = await mcp.filesystem.read_file({path: "data.json"}); const b = await mcp.filesystem.read_file({path: "notes.md"}); return a.length + b.length`,
        want: ["1/2 filesystem:read_file", "2/2 filesystem:read_file"],
      },
      {
        name: "remote",
        local: false,
        code: `const a = await mcp.math.add({a: 1, b: 2}); const b = await mcp.math.add({a: a, b: 3}); return await mcp.json.parse({data: String(b)})`,
        want: ["1/3 math:add", "2/3 math:add", "3/3 json:parse"],
      },
      {
        name: "hybrid",
        local: true,
        code: `const d = await mcp.json.parse({data: await mcp.filesystem.read_file({path: "data.json"})}); return await mcp.math.add({a: d.items[0], b: d.items[1]})`,
        want: ["1/3 filesystem:read_file", "2/3 json:parse", "3/3 math:add"],
      },
    ];
    for (const c of cases) {
      const { answer, seen } = await executeWithProgress(client, c.code);
      success(answer, c.local);
      assert.deepEqual(seen, c.want, `${c.name} run's progress`);
    }
    assert.deepEqual(errors, [], "no notification the client could not place");
  } finally {
    client.onerror = prevOnerror;
  }
}

// abort: a client that aborts an execute during a 3 s call stops the run:
// the server running the call is told (it notes the cancellation), the
// file write after the call never happens, and the next execute works; for
// the call on this machine and for one on the gateway (a hybrid run).
async function abort(client, ws) {
  for (const ns of ["nap", "slow"]) {
    // The same code, not aborted, writes the file: the check below can fail.
    const probe = join(ws, `${ns}-probe.txt`);
    success(
      await execute(client, `await mcp.${ns}.sleep({ms: 10}); return await mcp.filesystem.write_file({path: ${JSON.stringify(probe)}, content: "x"})`),
      true,
    );
    assert.ok(existsSync(probe), `${ns}: the write runs when not aborted`);

    const target = join(ws, `${ns}-aborted.txt`);
    const cancelled = join(scratch, `${ns}-cancelled`);
    const code = `await mcp.${ns}.sleep({ms: 3000, cancelled: ${JSON.stringify(cancelled)}});
      return await mcp.filesystem.write_file({path: ${JSON.stringify(target)}, content: "too late"})`;
    const ctl = new AbortController();
    const start = Date.now();
    setTimeout(() => ctl.abort("the user changed their mind"), 1000);
    await assert.rejects(client.callTool({ name: "execute", arguments: { code } }, undefined, { signal: ctl.signal }), `${ns}: the aborted execute rejects`);
    // Past the call's end, with room: a run that went on would have written.
    await new Promise((r) => setTimeout(r, Math.max(0, start + 4500 - Date.now())));
    assert.ok(!existsSync(target), `${ns}: the write after the cancel point ran`);
    assert.ok(existsSync(cancelled), `${ns}: the server running the call never saw it cancelled`);
    assert.equal(success(await execute(client, `return await mcp.math.add({a: 2, b: 2})`), false), 4, `${ns}: next execute`);
  }
}

// The README's main command in local mode: no gateway, no config, no key.
async function localMode() {
  const ws = mkdtempSync(join(scratch, "fresh-"));
  const client = await connect(ws, {});
  try {
    const res = success(
      await execute(client, `const s = await mcp.crypto.sha256({data: "hi"}); const f = await mcp.filesystem.list_directory({path: "."}); return {s, files: f.length}`),
      true,
    );
    assert.equal(res.s, "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4");
  } finally {
    await client.close();
  }
}

let failed = false;
try {
  await hybrid();
  console.log("peer: hybrid scenarios against pml gateway: ok");
  await localMode();
  console.log("peer: local mode: ok");
} catch (err) {
  failed = true;
  console.error("peer: FAILED:", err);
} finally {
  for (const c of children) c.kill("SIGTERM");
  clearTimeout(watchdog);
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
