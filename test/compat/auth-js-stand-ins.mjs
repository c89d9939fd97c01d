// What `supabase start` puts around its auth server, reduced to what the auth-js suite touches: the API
// gateway (Kong), which serves the auth server under /auth/v1, and a mail catcher (inbucket). Both run in
// the suite's own process, so they end with it.
import http from 'node:http';
import { SMTPServer } from 'smtp-server';

const PREFIX = '/auth/v1';

/**
 * Listens on 127.0.0.1:`port` and forwards `/auth/v1/...` to 127.0.0.1:`targetPort` with the prefix
 * stripped and the X-Forwarded-* headers Kong adds (the prefix among them); anything else is Kong's 404.
 * Bodies are streamed both ways, so redirects, errors and headers reach the client as the service sent them.
 */
export function startGateway(port, targetPort) {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url !== PREFIX && !url.startsWith(`${PREFIX}/`) && !url.startsWith(`${PREFIX}?`)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"message":"no Route matched with those values"}');
      return;
    }
    const headers = {
      ...req.headers,
      host: `127.0.0.1:${targetPort}`,
      'x-forwarded-for': req.socket.remoteAddress,
      'x-forwarded-proto': 'http',
      'x-forwarded-host': req.headers.host,
      'x-forwarded-port': String(port),
      'x-forwarded-prefix': PREFIX,
    };
    const upstream = http.request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: url.slice(PREFIX.length) || '/', headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `upstream: ${err.message}` }));
    });
    req.pipe(upstream);
  });
  return listen(server, port, () => {
    server.closeAllConnections();
  });
}

/** An SMTP server on a free loopback port that accepts every message (and any login) and counts them. */
export async function startMailSink() {
  const sink = { port: 0, received: 0, close: async () => {} };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1000,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onData: (stream, _session, callback) => {
      stream.on('end', () => {
        sink.received++;
        callback();
      });
      stream.resume();
    },
  });
  const { port, close } = await listen(server, 0);
  return Object.assign(sink, { port, close });
}

/** Resolves { port, close } once `server` listens on 127.0.0.1:`port`; `beforeClose` drops open connections. */
function listen(server, port, beforeClose = () => {}) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve({
        // SMTPServer keeps its net.Server as .server; an http.Server is one.
        port: (server.server ?? server).address().port,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            beforeClose();
          }),
      });
    });
  });
}
