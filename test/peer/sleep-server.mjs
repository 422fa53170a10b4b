// A slow MCP server for the peer, on the official TypeScript SDK over stdio:
// its one tool, sleep, answers after ms milliseconds; when its call is
// cancelled (notifications/cancelled aborts the handler's signal) it appends
// a line to the file `cancelled` names, so the peer sees the cancellation
// reach the server that ran the call.
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "pml-peer-sleep", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "sleep",
      description: 'Answers "slept" after ms milliseconds; a cancelled call appends a line to the file cancelled names.',
      inputSchema: {
        type: "object",
        properties: { ms: { type: "number" }, cancelled: { type: "string" } },
        required: ["ms"],
      },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  if (req.params.name !== "sleep") throw new Error(`unknown tool ${req.params.name}`);
  const { ms, cancelled } = req.params.arguments ?? {};
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    extra.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      if (cancelled) appendFileSync(cancelled, "cancelled\n");
      resolve();
    });
  });
  return { content: [{ type: "text", text: "slept" }] };
});

await server.connect(new StdioServerTransport());
