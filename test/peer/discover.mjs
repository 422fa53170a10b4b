// An AI-like client calls tools from discover's compact answers alone
// (README "Discover"): the official MCP TypeScript SDK client spawns
// `pml stdio` in local mode with five real npm MCP servers, and for every
// tool of the query set test/e2e/testdata/discover_queries.json it reads
// the tool's compact hit, writes arguments from its TypeScript declaration
// only (every required field, the first member of each union or enum) and
// checks them against the tool's full input schema, which it then asks for
// (discover {name, schemas: true}). It also checks that tools/list holds
// execute and discover, that the unlisted admin is callable, that a lookup
// by name answers the tool in full, and calls a few harmless tools for real
// with the arguments it wrote.
//
// Usage: node discover.mjs PATH_TO_PML_BINARY
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const pml = process.argv[2];
if (!pml) {
  console.error("usage: node discover.mjs PATH_TO_PML_BINARY");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const queries = JSON.parse(readFileSync(join(here, "..", "e2e", "testdata", "discover_queries.json"), "utf8"));

const watchdog = setTimeout(() => {
  console.error("discover peer: timed out");
  process.exit(1);
}, 120_000);

const ws = mkdtempSync(join(tmpdir(), "pml-discover-peer-"));
execFileSync("git", ["init", "-q", ws]);
const node = (script, ...args) => ({ command: process.execPath, args: [join(modules, script), ...args] });
writeFileSync(
  join(ws, ".pml.json"),
  JSON.stringify({
    version: "1",
    permissions: { allow: ["*"] },
    mcpServers: {
      everything: node("@modelcontextprotocol/server-everything/dist/index.js"),
      filesystem: node("@modelcontextprotocol/server-filesystem/dist/index.js", ws),
      memory: { ...node("@modelcontextprotocol/server-memory/dist/index.js"), env: { MEMORY_FILE_PATH: join(ws, "memory.jsonl") } },
      commands: node("mcp-server-commands/build/index.js"),
      git: node("@cyanheads/git-mcp-server/dist/index.js"),
    },
  }),
);

const env = {};
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PML_")) env[k] = v;
const client = new Client({ name: "discover-peer", version: "0" });
await client.connect(new StdioClientTransport({ command: pml, args: ["stdio"], cwd: ws, env: { ...env, PML_WORKSPACE: ws }, stderr: "inherit" }));

// ---- a small reader of the TypeScript declarations discover renders ----

// parseDeclaration returns the argument type of `mcp.ns.action(args: T): Promise<R>`
// and whether args may be left out.
function parseDeclaration(decl) {
  const m = /^mcp(?:\.[A-Za-z_$][\w$]*|\["(?:[^"\\]|\\.)*"\]){2}\(args(\?)?: /.exec(decl);
  assert.ok(m, `not a declaration: ${decl}`);
  const p = new TypeParser(decl, m[0].length);
  const type = p.type();
  p.expect("): Promise<");
  return { type, optional: m[1] === "?" };
}

class TypeParser {
  constructor(s, i) {
    this.s = s;
    this.i = i;
  }
  skip() {
    for (;;) {
      while (this.s[this.i] === " ") this.i++;
      if (!this.s.startsWith("/**", this.i)) return;
      const end = this.s.indexOf("*/", this.i);
      assert.ok(end > 0, "unterminated comment");
      this.i = end + 2;
    }
  }
  eat(tok) {
    this.skip();
    if (this.s.startsWith(tok, this.i)) {
      this.i += tok.length;
      return true;
    }
    return false;
  }
  expect(tok) {
    assert.ok(this.eat(tok), `expected ${JSON.stringify(tok)} at ${this.i} in ${this.s}`);
  }
  type() {
    const members = [this.intersection()];
    while (this.eat("|")) members.push(this.intersection());
    return members.length === 1 ? members[0] : { kind: "union", members };
  }
  intersection() {
    const parts = [this.postfix()];
    while (this.eat("&")) parts.push(this.postfix());
    return parts.length === 1 ? parts[0] : { kind: "all", parts };
  }
  postfix() {
    let t = this.primary();
    while (this.s.startsWith("[]", this.i)) {
      this.i += 2;
      t = { kind: "array", item: t };
    }
    return t;
  }
  primary() {
    this.skip();
    const s = this.s;
    if (this.eat("(")) {
      const t = this.type();
      this.expect(")");
      return t;
    }
    if (this.eat("Record<string, ")) {
      const value = this.type();
      this.expect(">");
      return { kind: "record", value };
    }
    if (s[this.i] === "{") return this.object();
    if (s[this.i] === "[") {
      this.i++;
      const items = [];
      while (!this.eat("]")) {
        items.push(this.type());
        this.eat(",");
      }
      return { kind: "tuple", items };
    }
    if (s[this.i] === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(s.slice(this.i));
      this.i += m[0].length;
      return { kind: "literal", value: JSON.parse(m[0]) };
    }
    const m = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_]\w*)/.exec(s.slice(this.i));
    assert.ok(m, `unexpected ${s.slice(this.i, this.i + 20)} in ${s}`);
    this.i += m[0].length;
    const word = m[0];
    if (/^-?\d/.test(word)) return { kind: "literal", value: Number(word) };
    if (word === "true" || word === "false") return { kind: "literal", value: word === "true" };
    if (word === "null") return { kind: "literal", value: null };
    return { kind: word }; // string, number, boolean, unknown, never, object
  }
  object() {
    this.expect("{");
    const fields = [];
    let index = null;
    while (!this.eat("}")) {
      if (this.eat("[key: string]:")) {
        index = this.type();
      } else {
        this.skip();
        const m = /^("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)(\?)?: /.exec(this.s.slice(this.i));
        assert.ok(m, `bad field at ${this.s.slice(this.i, this.i + 30)}`);
        this.i += m[0].length;
        const name = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
        fields.push({ name, required: !m[2], type: this.type() });
      }
      this.eat(";");
    }
    return { kind: "object", fields, index };
  }
}

// valueOf writes a value of type t as an AI client would from the
// declaration alone: required fields only, the first non-null member of a
// union, one item per array.
function valueOf(t) {
  switch (t.kind) {
    case "string":
      return "x";
    case "number":
      return 1;
    case "boolean":
      return false;
    case "literal":
      return t.value;
    case "union":
      return valueOf(t.members.find((m) => !(m.kind === "literal" && m.value === null)) ?? t.members[0]);
    case "all":
      return Object.assign({}, ...t.parts.map(valueOf));
    case "array":
      return [valueOf(t.item)];
    case "tuple":
      return t.items.map(valueOf);
    case "record":
    case "object":
    case "unknown":
      if (!t.fields) return {};
      return Object.fromEntries(t.fields.filter((f) => f.required).map((f) => [f.name, valueOf(f.type)]));
  }
  throw new Error(`no value for ${JSON.stringify(t)}`);
}

// ---- the checks ----

async function discover(args) {
  const res = await client.callTool({ name: "discover", arguments: args });
  assert.ok(!res.isError, `discover ${JSON.stringify(args)}: ${res.content?.[0]?.text}`);
  return JSON.parse(res.content[0].text);
}

function validator(schema) {
  const ajv = schema.$schema?.includes("2020-12") ? new Ajv2020({ strict: false }) : new Ajv({ strict: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

try {
  const listed = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(listed, ["discover", "execute"]);
  // admin is not listed, and a direct call is refused: code reaches it as
  // mcp.pml.admin, under one rule (docs/protocol.md "Gateway MCP tools").
  const admin = await client.callTool({ name: "admin", arguments: { action: "describe", target: "cap:nothing", description: "x" } });
  assert.ok(admin.isError, admin.content[0].text);
  const refused = JSON.parse(admin.content[0].text);
  assert.equal(refused.error_code, "PERMISSION_DENIED");
  assert.match(refused.error, /mcp\.pml\.admin/);

  const ids = [...new Set(queries.flatMap((q) => q.tools))].sort();
  const args = {};
  for (const id of ids) {
    // The compact hit, as a search answers it: no schemas.
    const compact = (await discover({ pattern: id })).tools.find((t) => t.id === id);
    assert.ok(compact, `no compact hit for ${id}`);
    assert.equal(compact.input_schema, undefined, `${id}: a search answered a schema`);
    const { type, optional } = parseDeclaration(compact.declaration);
    args[id] = optional && type.kind === "object" && !type.fields.some((f) => f.required) ? {} : valueOf(type);

    // The full tool, as a lookup by name with schemas answers it.
    const [full] = (await discover({ name: id, schemas: true })).tools;
    assert.equal(full.id, id);
    const schema = full.input_schema ?? { type: "object" };
    const validate = validator(schema);
    assert.ok(validate(args[id]), `${id}: arguments ${JSON.stringify(args[id])} written from ${compact.declaration} fail its schema: ${JSON.stringify(validate.errors)}`);
    // A lookup by name declares the tool in full, its description as a comment.
    const [byName] = (await discover({ name: id })).tools;
    if (full.description) assert.ok(byName.declaration.startsWith("/**"), `${id}: lookup by name not in full: ${byName.declaration}`);
  }

  // A few harmless tools, called for real with the arguments written above.
  for (const id of ["everything:echo", "memory:read_graph", "string:upper", "encoding:base64_encode", "crypto:uuid", "datetime:now"]) {
    if (!args[id]) continue;
    const [ns, action] = id.split(":");
    const res = await client.callTool({
      name: "execute",
      arguments: { code: `return await mcp[${JSON.stringify(ns)}][${JSON.stringify(action)}](args)`, args: args[id] },
    });
    const answer = JSON.parse(res.content[0].text);
    assert.equal(answer.status, "success", `${id}(${JSON.stringify(args[id])}): ${res.content[0].text}`);
  }
  console.log(`discover peer: ${ids.length} tools called from compact answers; arguments valid against their full schemas`);
} finally {
  clearTimeout(watchdog);
  await client.close();
  rmSync(ws, { recursive: true, force: true });
}
