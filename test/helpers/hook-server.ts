// A local HTTP endpoint for auth hooks that checks every call's Standard Webhooks signature with the
// standardwebhooks package (as a hook author's endpoint would) and answers as each test scripts it.
// One path per hook; calls whose signature does not verify are recorded as such and answered 401.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface HookCall {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** the verified, parsed payload; null when the signature did not verify */
  payload: any;
  verified: boolean;
}

export interface HookReply {
  status?: number;
  /** an array sends the field once per value */
  headers?: Record<string, string | string[]>;
  /** JSON-encoded unless a string or Buffer */
  body?: unknown;
  /** never answer (the connection is closed when the server closes) */
  stall?: boolean;
}

export type HookHandler = (payload: any, call: HookCall) => HookReply | Promise<HookReply>;

export interface HookServer {
  url: string;
  /** the secret the service signs with, v1,whsec_… (HOOK_*_SECRETS) */
  secret: string;
  calls: HookCall[];
  callsTo(path: string): HookCall[];
  /** the handler for `path` from now on */
  on(path: string, handler: HookHandler): void;
  /** the next reply(ies) for `path`, before its handler */
  once(path: string, ...replies: Array<HookReply | HookHandler>): void;
  close(): Promise<void>;
}

/** A fresh Standard Webhooks secret in the form HOOK_*_SECRETS takes. */
export const newHookSecret = () => `v1,whsec_${randomBytes(32).toString('base64')}`;

export async function startHookServer(options: { secret?: string } = {}): Promise<HookServer> {
  const secret = options.secret ?? newHookSecret();
  const verify = verifyWith(new Webhook(secret.slice('v1,'.length)));
  const handlers = new Map<string, HookHandler>();
  const queued = new Map<string, Array<HookReply | HookHandler>>();
  const calls: HookCall[] = [];
  const stalled = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const path = (req.url ?? '/').split('?')[0];
    const { ok: verified, payload } = verify(body, req.headers);
    const call: HookCall = { path, headers: req.headers, payload, verified };
    calls.push(call);
    if (!verified) return send(res, { status: 401, body: { error: 'bad signature' } });
    const next = queued.get(path)?.shift() ?? handlers.get(path) ?? { status: 204 };
    const reply = typeof next === 'function' ? await next(payload, call) : next;
    if (reply.stall) {
      stalled.add(res);
      return;
    }
    send(res, reply);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    secret,
    calls,
    callsTo: (path) => calls.filter((c) => c.path === path),
    on: (path, handler) => handlers.set(path, handler),
    once: (path, ...replies) => queued.set(path, [...(queued.get(path) ?? []), ...replies]),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function verifyWith(verifier: Webhook) {
  return (body: string, headers: http.IncomingHttpHeaders): { ok: boolean; payload: any } => {
    try {
      return { ok: true, payload: verifier.verify(body, headers as Record<string, string>) };
    } catch {
      return { ok: false, payload: null };
    }
  };
}

function send(res: http.ServerResponse, reply: HookReply): void {
  const status = reply.status ?? 200;
  const body =
    reply.body === undefined ? '' : typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body);
  const headers = {
    ...(reply.body !== undefined && typeof reply.body !== 'string' ? { 'content-type': 'application/json' } : {}),
    ...reply.headers,
  };
  res.writeHead(status, headers);
  res.end(body);
}
