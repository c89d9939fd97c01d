// The bench's hook endpoint process (hook-endpoint.mjs): verify, then answer the claims plus one.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const verifier = new Webhook(process.env.HOOK_SECRET.slice('v1,'.length));
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let event;
    try {
      event = verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers);
    } catch {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ claims: { ...event.claims, tenant: 'bench' } }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
