// The client the official MCP conformance suite drives: it runs
// `pml connect --headless` against each scenario's server (the suite appends
// the server URL to the command). Usage:
//   conformance client --suite auth --command "node test/conformance/client.mjs /path/to/pml"
// The scenario's context (MCP_CONFORMANCE_CONTEXT) may carry a pre-registered
// client, passed as --client-id and PML_OAUTH_CLIENT_SECRET. Each run gets a
// fresh config directory, so tokens never reach the real user's and no
// scenario sees another's.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [pml, url] = process.argv.slice(2);
if (!pml || !url) {
  console.error("usage: node client.mjs PML_BINARY SERVER_URL");
  process.exit(4);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const config = mkdtempSync(join(tmpdir(), "pml-conformance-"));
const args = [
  "connect", "--headless",
  // The document URL the suite's authorization servers accept as a client ID.
  "--client-metadata-url", "https://conformance-test.local/client-metadata.json",
  // The scenarios' servers check authorization on a tool call too (step-up).
  "--call", "test-tool",
];
const env = { ...process.env, XDG_CONFIG_HOME: config, HOME: config };
if (context.client_id) {
  args.push("--client-id", context.client_id);
  if (context.client_secret) env.PML_OAUTH_CLIENT_SECRET = context.client_secret;
}
args.push(url);
const run = spawnSync(pml, args, { env, stdio: "inherit" });
rmSync(config, { recursive: true, force: true });
process.exit(run.status ?? 1);
