// The only file that touches uWS request/response objects. Per request: snapshot everything from `req`
// synchronously (uWS invalidates it at the first await), attach onAborted, collect the body without
// quadratic copying and with a 1 MiB cap, run the handler, and write the answer corked.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import uWS from '@trufflesuite/uws-js-unofficial';
import type { Logger } from 'pino';
import { ApiError, renderError } from './errors.js';
import { corsHeaders, preflight } from './cors.js';
import { maskQuery } from './log.js';
import type { Router } from './router.js';
import type { ApiRequest, ApiResponse, Route } from './types.js';
import type { AppContext } from './app.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Snapshot {
  method: string; path: string; query: string; headers: Record<string, string>; ip: string; requestId: string;
}

export interface HttpServer {
  listen(host: string, port: number): Promise<number>;
  /** Stop accepting, let in-flight requests finish (bounded), then close every connection. */
  drain(timeoutMs: number): Promise<void>;
}

export function createHttpServer(router: Router, ctx: AppContext, log: Logger): HttpServer {
  const app = uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | null = null;

  app.any('/*', (res, req) => {
    const snap = snapshot(res, req, ctx.config.api.requestIdHeader);
    const state = { aborted: false };
    res.onAborted(() => { state.aborted = true; });
    inFlight++;
    handle(res, snap, state).finally(() => {
      inFlight--;
      if (inFlight === 0 && idle) idle();
    });
  });

  async function handle(res: uWS.HttpResponse, snap: Snapshot, state: { aborted: boolean }): Promise<void> {
    const started = performance.now();
    let route: Route | undefined;
    let params: Record<string, string> = {};
    let status = 500;
    let errorCode = '';
    try {
      const answer = await dispatch(res, snap, state, (r, p) => { route = r; params = p; });
      status = answer.status;
      errorCode = answer.headers['x-sb-error-code'] ?? '';
      if (!state.aborted) write(res, answer, draining);
    } catch (err) {
      log.error({ err, request_id: snap.requestId }, 'response could not be written');
    }
    const seconds = (performance.now() - started) / 1000;
    ctx.metrics.observe(snap.method, route?.path ?? 'unmatched', status, seconds);
    if (route) ctx.tracing.record({ method: snap.method, route: route.path, params, status, start: performance.timeOrigin + started, end: Date.now() });
    if (route?.quiet) return;
    const line = { request_id: snap.requestId, method: snap.method, path: snap.path, query: maskQuery(snap.query),
      route: route?.path, remote_addr: snap.ip, status, duration_ms: Math.round(seconds * 100_000) / 100,
      error_code: errorCode || undefined, aborted: state.aborted || undefined };
    if (status >= 500) log.error(line, 'request completed'); else log.info(line, 'request completed');
  }

  async function dispatch(res: uWS.HttpResponse, snap: Snapshot, state: { aborted: boolean }, onRoute: (r: Route, params: Record<string, string>) => void) {
    const cors = corsHeaders(snap.headers.origin);
    const pre = preflight(snap.method, snap.headers);
    if (pre) return { status: pre.status, headers: pre.headers, body: '' };
    try {
      const match = ctx.router.match(snap.method, snap.path);
      if (match.kind === 'not_found') throw new ApiError(404, 'not_found', 'Not Found');
      if (match.kind === 'method_not_allowed') throw new ApiError(405, 'method_not_allowed', 'Method Not Allowed');
      onRoute(match.route, match.params);
      const rawBody = BODY_METHODS.has(snap.method) ? await readBody(res, snap.headers, state) : Buffer.alloc(0);
      const request = toApiRequest(snap, match.route.path, match.params, rawBody);
      const response = await withTimeout(match.route.handler(request, ctx), ctx.config.api.maxRequestDurationSeconds * 1000);
      return serialise(response, cors);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) log.error({ err, request_id: snap.requestId }, 'request failed');
      const rendered = renderError(err, snap.headers['x-supabase-api-version'], snap.requestId);
      return { status: rendered.status, headers: { ...cors, ...rendered.headers, 'Content-Type': 'application/json' }, body: rendered.body };
    }
  }

  return {
    listen: (host, port) => new Promise((resolve, reject) => {
      app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`could not listen on ${host}:${port}`));
        listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
      });
    }),
    drain: async (timeoutMs) => {
      draining = true;
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          idle = () => { clearTimeout(timer); resolve(); };
        });
      }
      // Closes idle keep-alive connections too; without this the thread lingers until uWS's idle timeout.
      (app as unknown as { close(): void }).close();
    },
  };
}

function snapshot(res: uWS.HttpResponse, req: uWS.HttpRequest, requestIdHeader: string): Snapshot {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => { headers[key] = value; });
  const inherited = requestIdHeader ? headers[requestIdHeader.toLowerCase()] : undefined;
  return {
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    ip: Buffer.from(res.getRemoteAddressAsText()).toString(),
    requestId: inherited || randomUUID(),
  };
}

function toApiRequest(snap: Snapshot, route: string, params: Record<string, string>, rawBody: Buffer): ApiRequest {
  let parsed: Record<string, unknown> | undefined;
  return {
    method: snap.method, path: snap.path, route, params, query: new URLSearchParams(snap.query),
    headers: snap.headers, ip: snap.ip, requestId: snap.requestId, rawBody,
    body() {
      return parsed ??= parseJsonObject(rawBody);
    },
  };
}

function parseJsonObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new ApiError(400, 'bad_json', `Could not parse request body as JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(400, 'bad_json', 'Could not parse request body as JSON: expected a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Collects the body as copied chunks and joins them once (Buffer.concat per chunk would be quadratic). */
function readBody(res: uWS.HttpResponse, headers: Record<string, string>, state: { aborted: boolean }): Promise<Buffer> {
  const declared = Number(headers['content-length'] ?? 0);
  const tooLarge = () => new ApiError(413, 'request_entity_too_large', `Request body too large (max ${MAX_BODY_BYTES} bytes)`);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) { done = true; return reject(tooLarge()); }
      chunks.push(Buffer.from(chunk.slice(0)));   // uWS reuses the chunk's memory after this callback
      if (isLast) { done = true; resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)); }
    });
    if (state.aborted) reject(new Error('aborted'));
  });
}

function withTimeout<T>(work: Promise<T> | T, ms: number): Promise<T> {
  if (!(work instanceof Promise)) return Promise.resolve(work);
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ApiError(504, 'request_timeout', 'Processing this request timed out, please retry after a moment.')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

interface Answer { status: number; headers: Record<string, string>; body: string }

function serialise(response: ApiResponse, cors: Record<string, string>): Answer {
  const status = response.status ?? 200;
  const headers: Record<string, string> = { ...cors, ...response.headers };
  if (response.body === undefined) return { status, headers, body: '' };
  if (typeof response.body === 'string') return { status, headers, body: response.body };
  headers['Content-Type'] ??= 'application/json';
  return { status, headers, body: JSON.stringify(response.body) };
}

function write(res: uWS.HttpResponse, answer: Answer, closeConnection: boolean): void {
  res.cork(() => {
    res.writeStatus(`${answer.status} ${STATUS_CODES[answer.status] ?? ''}`);
    for (const [name, value] of Object.entries(answer.headers)) res.writeHeader(name, value);
    if (answer.status === 204 || answer.status === 304) res.endWithoutBody(0, closeConnection);
    else res.end(answer.body, closeConnection);
  });
}
