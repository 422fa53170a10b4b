// An AI client starting PML the way .mcp.json says (README "Install"): the
// official MCP TypeScript SDK client reads the `pml` entry that `pml init`
// wrote, spawns its command with its args and env, lists the tools and runs
// one execute. .ci/release-check runs it after installing the npm packages
// from their tarballs, with a registry that refuses every request, so an
// entry that needs the registry to start (npx -y of a package not
// published) fails here.
//
// Usage: node mcpjson.mjs PATH_TO_.mcp.json
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: node mcpjson.mjs PATH_TO_.mcp.json");
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error("mcpjson: timed out starting pml from", file);
  process.exit(1);
}, 60_000);

const entry = JSON.parse(readFileSync(file, "utf8")).mcpServers?.pml;
assert.ok(entry?.command, `no pml entry with a command in ${file}`);
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: { ...process.env, ...(entry.env ?? {}) },
  cwd: dirname(resolve(file)),
  stderr: "inherit",
});
const client = new Client({ name: "mcpjson-peer", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), ["discover", "execute"]);
const res = await client.callTool({ name: "execute", arguments: { code: "return 1 + 1" } });
const answer = JSON.parse(res.content[0].text);
assert.equal(answer.status, "success", JSON.stringify(answer));
assert.equal(answer.result, 2);
await client.close();
clearTimeout(watchdog);
console.log(`mcpjson: the AI client started \`${entry.command} ${(entry.args ?? []).join(" ")}\` from ${file} and ran execute`);
