// Approvals through elicitation, with the official MCP TypeScript SDK as the
// AI client of `pml stdio` (local mode): a client that declares elicitation
// gets the approval form itself, so execute completes in one call; one that
// declines finds that nothing ran; one without elicitation gets
// approval_required (docs/security.md "Trust: approvals and secrets").
//
// Usage: node elicitation.mjs PATH_TO_PML_BINARY
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const pml = process.argv[2];
if (!pml) {
  console.error("usage: node elicitation.mjs PATH_TO_PML_BINARY");
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error("elicitation: timed out");
  process.exit(1);
}, 60_000);
const scratch = mkdtempSync(join(tmpdir(), "pml-elicit-"));

function env(extra) {
  const out = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PML_")) out[k] = v;
  return { ...out, ...extra };
}

// connect starts `pml stdio` in ws. With decide, the client declares
// elicitation and answers each form with decide(form); asked collects the
// forms it was shown.
async function connect(ws, decide, asked) {
  const transport = new StdioClientTransport({ command: pml, args: ["stdio"], cwd: ws, env: env({ PML_WORKSPACE: ws }), stderr: "inherit" });
  const capabilities = decide ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: "pml-ci-elicitation", version: "1.0.0" }, { capabilities });
  if (decide) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return decide(req.params);
    });
  }
  await client.connect(transport);
  return client;
}

async function execute(client, code) {
  const res = await client.callTool({ name: "execute", arguments: { code } });
  return JSON.parse(res.content[0].text);
}

function workspace() {
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, ".pml.json"), JSON.stringify({ version: "1", permissions: { allow: ["json"], ask: ["filesystem:write_file"] } }));
  return ws;
}

const write = (file) => `await mcp.filesystem.write_file({path: ${JSON.stringify(file)}, content: "1"}); return "written"`;

async function approves() {
  const ws = workspace();
  const asked = [];
  const client = await connect(ws, () => ({ action: "accept", content: { decision: "approve" } }), asked);
  try {
    const a = await execute(client, write("a.txt"));
    assert.equal(a.status, "success", JSON.stringify(a));
    assert.equal(a.result, "written");
    assert.ok(existsSync(join(ws, "a.txt")));
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /filesystem:write_file/);
    assert.match(asked[0].message, /mcp\.filesystem\.write_file/, "the form shows the code");
    assert.deepEqual(Object.keys(asked[0].requestedSchema.properties), ["decision"], "the form only asks for a decision");

    // A tool only seen at run time asks in the middle of the run, which
    // then goes on from the paused call.
    const b = await execute(client, `const ns = ["file", "system"].join(""); await mcp[ns].write_file({path: "b.txt", content: "1"}); return "b"`);
    assert.equal(b.status, "success", JSON.stringify(b));
    assert.ok(existsSync(join(ws, "b.txt")));
    assert.equal(asked.length, 2);
  } finally {
    await client.close();
  }
}

async function declines() {
  const ws = workspace();
  const asked = [];
  const client = await connect(ws, () => ({ action: "decline" }), asked);
  try {
    const a = await execute(client, write("no.txt"));
    assert.equal(a.status, "aborted", JSON.stringify(a));
    assert.equal(asked.length, 1);
    assert.ok(!existsSync(join(ws, "no.txt")), "a declined run wrote nothing");
    const next = await execute(client, `return await mcp.json.parse({data: "[1]"})`);
    assert.equal(next.status, "success", JSON.stringify(next));
  } finally {
    await client.close();
  }
}

async function noElicitation() {
  const ws = workspace();
  const client = await connect(ws);
  try {
    const a = await execute(client, write("c.txt"));
    assert.equal(a.status, "approval_required", JSON.stringify(a));
    assert.ok(!existsSync(join(ws, "c.txt")));
    const done = await client.callTool({ name: "execute", arguments: { continue_workflow: { workflow_id: a.workflow_id, approved: true } } });
    assert.equal(JSON.parse(done.content[0].text).status, "success");
    assert.ok(existsSync(join(ws, "c.txt")));
  } finally {
    await client.close();
  }
}

let failed = false;
try {
  await approves();
  console.log("elicitation: approve through the form: ok");
  await declines();
  console.log("elicitation: decline runs nothing: ok");
  await noElicitation();
  console.log("elicitation: a client without elicitation gets approval_required: ok");
} catch (err) {
  failed = true;
  console.error("elicitation: FAILED:", err);
} finally {
  clearTimeout(watchdog);
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
