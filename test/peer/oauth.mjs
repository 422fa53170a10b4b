// An MCP client that follows the MCP authorization spec, the official
// TypeScript SDK's, signs in to a pml gateway that trusts an OpenID
// provider (docs/auth.md), then runs code through execute.
// Usage: node oauth.mjs GATEWAY_URL ISSUER CLIENT_ID CLIENT_SECRET
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";

const [gateway, issuer, clientId, clientSecret] = process.argv.slice(2);
if (!clientSecret) {
  console.error("usage: node oauth.mjs GATEWAY_URL ISSUER CLIENT_ID CLIENT_SECRET");
  process.exit(2);
}

const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope: "pml", expectedIssuer: issuer });
const client = new Client({ name: "oauth-peer", version: "0" });
// The first request gets 401 with resource_metadata: the transport finds
// the issuer there, gets a token with the client's credentials, and retries.
await client.connect(new StreamableHTTPClientTransport(new URL(gateway + "/mcp"), { authProvider }));
const res = await client.callTool({ name: "execute", arguments: { code: "return await mcp.math.add({a: 40, b: 2})" } });
const answer = JSON.parse(res.content[0].text);
if (answer.status !== "success" || answer.result !== 42) {
  console.error("oauth peer: execute answered", JSON.stringify(answer));
  process.exit(1);
}
if (!authProvider.tokens()?.access_token) {
  console.error("oauth peer: no token was obtained");
  process.exit(1);
}
await client.close();
console.log("oauth peer: signed in through " + issuer + " and ran execute: ok");
