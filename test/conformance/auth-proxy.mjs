// A loopback reverse proxy that adds the gateway key to every request: the
// conformance suite's server mode connects with a bare URL and sends no
// headers of its own. Everything else, the Host and Origin headers included,
// passes through unchanged, and bodies stream both ways (SSE responses too).
//
// Usage: PML_CONFORMANCE_KEY=pml_… node auth-proxy.mjs http://127.0.0.1:PORT
// Prints "listening http://127.0.0.1:PORT" on stdout once it accepts
// connections. The key comes from the environment so it is not in `ps`.
import http from "node:http";

const target = new URL(process.argv[2] ?? "");
const key = process.env.PML_CONFORMANCE_KEY;
if (target.protocol !== "http:" || !key) {
  console.error("usage: PML_CONFORMANCE_KEY=KEY node auth-proxy.mjs http://127.0.0.1:PORT");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const up = http.request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${key}` },
    },
    (upRes) => {
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
    },
  );
  up.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`auth-proxy: ${err.message}`);
  });
  // A client that goes away (an SSE stream it closed) ends the upstream call.
  res.on("close", () => up.destroy());
  req.pipe(up);
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // open SSE streams would hold close() back
  });
}
