// A loopback proxy for the MCP conformance suite, which sends no Authorization header: it
// forwards every request to `tether mcp --http` with the bearer token added, headers (Host and
// Origin among them, which the DNS rebinding scenario varies) and bodies otherwise untouched, and
// streams the answer back as it comes (SSE included).
//
//   node mcp-conformance-proxy.mjs UPSTREAM_PORT TOKEN_FILE
//
// Listens on a free loopback port and prints it as its first line on stdout.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [upstreamPort, tokenFile] = process.argv.slice(2);
if (!upstreamPort || !tokenFile) {
  console.error('usage: mcp-conformance-proxy.mjs UPSTREAM_PORT TOKEN_FILE');
  process.exit(2);
}
const token = readFileSync(tokenFile, 'utf8').trim();

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: '127.0.0.1', port: Number(upstreamPort), method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', (error) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
    }
    res.end(`proxy: ${error.message}`);
  });
  // A client that goes away (an SSE stream it closes) ends the upstream request too.
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => {
  console.log(server.address().port);
});
