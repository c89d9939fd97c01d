// An egress proxy as deployments run one (squid, a corporate proxy): plain requests in absolute form and
// CONNECT tunnels, optionally behind Basic credentials (407 without them). Names under `.proxied.test`
// exist only here: the proxy resolves them to 127.0.0.1, while nothing else on the machine resolves them,
// so a call that reaches such a host can only have come through the proxy.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  /** CONNECT or the plain request's method */
  method: string;
  /** host:port of a tunnel, the absolute URL of a plain request */
  target: string;
  proxyAuthorization: string | undefined;
}

export interface ForwardProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  seen: ProxiedRequest[];
  /** the requests whose target names `host` */
  seenFor(host: string): ProxiedRequest[];
  stop(): Promise<void>;
}

/** The address the proxy connects to for `host`. */
const resolveHere = (host: string) => (host.endsWith('.proxied.test') ? '127.0.0.1' : host);

/** `credentials`: the `user:password` pairs it takes (Basic); none, it asks for none. */
export async function startForwardProxy(options: { credentials?: string[] } = {}): Promise<ForwardProxy> {
  const seen: ProxiedRequest[] = [];
  const expected = options.credentials?.map((pair) => `Basic ${Buffer.from(pair).toString('base64')}`);
  const allowed = (header: string | undefined) => expected === undefined || (header !== undefined && expected.includes(header));
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    const proxyAuthorization = req.headers['proxy-authorization'];
    seen.push({ method: req.method ?? '', target: req.url ?? '', proxyAuthorization });
    if (!allowed(proxyAuthorization)) return res.writeHead(407, { 'proxy-authenticate': 'Basic realm="egress"' }).end();
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return res.writeHead(400).end();
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(
      { host: resolveHere(target.hostname), port: target.port || 80, path: target.pathname + target.search, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const proxyAuthorization = req.headers['proxy-authorization'];
    seen.push({ method: 'CONNECT', target: req.url ?? '', proxyAuthorization });
    if (!allowed(proxyAuthorization)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="egress"\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = net.connect(Number(port), resolveHere(host.replace(/^\[|\]$/g, '')), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.on('error', () => upstream.destroy());
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    seenFor: (host) => seen.filter((r) => r.target.includes(`//${host}`) || r.target.startsWith(`${host}:`) || r.target === host),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
