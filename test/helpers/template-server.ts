// A local HTTP server that serves mail templates (or refuses to), for MAILER_TEMPLATES_X tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TemplateReply {
  status?: number;
  body: string;
  /** send without Content-Length, so only the streamed size can reveal an oversized body */
  chunked?: boolean;
}

export interface TemplateServer {
  baseUrl: string;
  /** what GET `path` answers from now on */
  set(path: string, reply: string | TemplateReply): void;
  /** the paths requested so far, in order */
  requests: string[];
  close(): Promise<void>;
}

export async function startTemplateServer(): Promise<TemplateServer> {
  const replies = new Map<string, TemplateReply>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const reply = replies.get(path) ?? { status: 404, body: 'not found' };
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'text/html; charset=utf-8' };
    if (!reply.chunked) headers['content-length'] = Buffer.byteLength(reply.body);
    res.writeHead(reply.status ?? 200, headers);
    if (!reply.chunked) return void res.end(reply.body);
    // Several writes, so the body really arrives as a stream of chunks.
    const step = 64 * 1024;
    for (let i = 0; i < reply.body.length; i += step) res.write(reply.body.slice(i, i + step));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    set: (path, reply) => void replies.set(path, typeof reply === 'string' ? { body: reply } : reply),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A local port nothing listens on (bound, then released), for connection-refused cases. */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
