// The only file that touches uWS request/response objects. Per request: snapshot everything from `req`
// synchronously (uWS invalidates it at the first await), run the route, and write the answer. A handler
// that answers synchronously without a body (settings, health, 404s, preflights) is written inside the
// uWS callback itself; everything else attaches onAborted, collects the body without quadratic copying
// and with a 1 MiB cap, and writes corked after the await.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import uWS from '@trufflesuite/uws-js-unofficial';
import type { Logger } from 'pino';
import { ApiError, apiError } from '../errors.js';
import { corsHeaders, preflight } from './cors.js';
import {
  assertNoNulInParams,
  assertNoNulInQuery,
  Deadline,
  errorAnswer,
  parseJsonObject,
  serialise,
  withTimeout,
  type Answer,
} from './answer.js';
import { recordRequest } from './request-record.js';
import { clientAddress, connectionAddress } from './client-address.js';
import { withRequestSpans, type ChildSpan } from '../observability/request-spans.js';
import { methodNotAllowed, type Router } from './router.js';
import type { ApiRequest, BodyCheck, JsonObject, Route, Run } from './types.js';
import { underFieldNames } from './field-names.js';
import { goParamsType } from './go-param-types.js';
import { goParseQuery, goQueryValues, type GoQuery } from './go-query.js';
import { loggerForm, loggerTakesForm } from './logger-form.js';
import { assertDecodesAsGo, fieldsNullEmpties } from './go-field-types.js';
import type { AppContext } from '../context.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_BODY = Buffer.alloc(0);
const NO_PARAMS: Record<string, string> = Object.freeze({});

interface Snapshot {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  ip: string;
  requestId: string;
  /** the payload of the last audit entry written for the request, logged on its line as the original does */
  authEvent: JsonObject | undefined;
}

/** What the request turned out to be, filled in as it is dispatched. */
interface Progress {
  route: Route | undefined;
  params: Record<string, string>;
  aborted: boolean;
  /** answered as a CORS preflight, before any route */
  preflight: boolean;
  /** the statements and crypto calls it waited on, when tracing is on (observability/request-spans.ts) */
  spans: ChildSpan[] | undefined;
  /** the merged form of a posted urlencoded body, or of a multipart one the logger reads (go-form.ts), read once for the handler and the log line */
  form: GoQuery | undefined;
}

/** Where a thread listens: the public port itself, or a Unix socket behind the HTTP guard (src/server/guard/). */
export type ListenOn = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

export interface HttpServer {
  /** resolves with the TCP port, or 0 on a Unix socket */
  listen(on: ListenOn): Promise<number>;
  /** Stop accepting, let in-flight requests finish (bounded), then close every connection. */
  drain(timeoutMs: number): Promise<void>;
}

export function createHttpServer(router: Router, ctx: AppContext, log: Logger): HttpServer {
  const app = uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | null = null;

  // Behind the guard every connection starts with a PROXY header naming the client; without it, a client
  // could send one itself, so the proxied address is read only behind the guard.
  const behindGuard = ctx.config.api.guard;
  app.any('/*', (res, req) => {
    const started = performance.now();
    const snap = snapshot(res, req, ctx.config, behindGuard);
    const progress: Progress = { route: undefined, params: NO_PARAMS, aborted: false, preflight: false, spans: undefined, form: undefined };
    const answer = ctx.tracing.enabled
      ? withRequestSpans((progress.spans = []), () => dispatch(res, snap, progress))
      : dispatch(res, snap, progress);
    if (!(answer instanceof Promise)) {
      write(res, answer, draining, snap.method === 'HEAD');
      return complete(snap, progress, answer, started);
    }
    inFlight++;
    // One reaction, not a then/catch/finally chain: two promises and two microtasks fewer per request.
    const settled = (a: Answer | undefined, err?: unknown) => {
      try {
        if (a === undefined) throw err;
        if (!progress.aborted) write(res, a, draining, snap.method === 'HEAD');
        complete(snap, progress, a, started);
      } catch (err) {
        log.error({ err, request_id: snap.requestId }, 'response could not be written');
      }
      inFlight--;
      if (inFlight === 0 && idle) idle();
    };
    answer.then(settled, (err: unknown) => settled(undefined, err));
  });

  function complete(snap: Snapshot, progress: Progress, answer: Answer, started: number): void {
    recordRequest(ctx, log, {
      requestId: snap.requestId,
      method: snap.method,
      path: snap.path,
      query: snap.query,
      headers: snap.headers,
      ip: snap.ip,
      route: progress.route,
      params: progress.params,
      status: answer.status,
      errorCode: answer.headers['x-sb-error-code'],
      error: answer.error,
      aborted: progress.aborted,
      preflight: progress.preflight,
      spans: progress.spans,
      form: progress.form,
      authEvent: snap.authEvent,
      started,
    });
  }

  function dispatch(res: uWS.HttpResponse, snap: Snapshot, progress: Progress): Answer | Promise<Answer> {
    const cors = corsHeaders(snap.headers.origin);
    const pre = preflight(snap.method, snap.headers, ctx.config.api.corsAllowedHeaders);
    if (pre) {
      progress.preflight = true;
      return { status: pre.status, headers: pre.headers, body: '' };
    }
    const fail = (err: unknown): Answer => {
      if (!(err instanceof ApiError) || err.status >= 500) log.error({ err, request_id: snap.requestId }, 'request failed');
      return errorAnswer(err, snap.headers['x-supabase-api-version'], snap.requestId, cors);
    };
    try {
      const match = router.match(snap.method, snap.path);
      if (match.kind === 'not_found') throw apiError('not_found');
      if (match.kind === 'method_not_allowed') throw methodNotAllowed(match.allowed);
      progress.route = match.route;
      progress.params = match.params;
      if (snap.query) assertNoNulInQuery(snap.query);
      assertNoNulInParams(match.params);
      const { run, route } = match;
      const deadline = new Deadline();
      if (BODY_METHODS.has(snap.method)) {
        watchAbort(res, progress, deadline);
        return readBody(res, snap.headers, progress)
          .then((raw) => {
            const handle = (form: GoQuery | undefined) =>
              runTimed(run, toApiRequest(snap, route, match.params, raw, deadline, (progress.form = form)), deadline);
            // The form the original's logger reads first, if any (logger-form.ts): one media-type test.
            const form = loggerForm(snap, raw);
            return form instanceof Promise ? form.then(handle) : handle(form);
          })
          .then((response) => serialise(response, cors), fail);
      }
      const result = run(toApiRequest(snap, route, match.params, NO_BODY, deadline), ctx);
      if (!(result instanceof Promise)) return serialise(result, cors, snap.method);
      watchAbort(res, progress, deadline);
      return withTimeout(result, timeoutMs(), deadline).then((response) => serialise(response, cors, snap.method), fail);
    } catch (err) {
      return fail(err);
    }
  }

  const timeoutMs = () => ctx.config.api.maxRequestDurationSeconds * 1000;
  const runTimed = (run: Run, request: ApiRequest, deadline: Deadline) =>
    withTimeout(Promise.resolve(run(request, ctx)), timeoutMs(), deadline);

  return {
    listen: (on) =>
      new Promise((resolve, reject) => {
        const listening = (socket: uWS.us_listen_socket | false) => {
          if (!socket) return reject(new Error(`could not listen on ${on.kind === 'tcp' ? `${on.host}:${on.port}` : on.path}`));
          listenSocket = socket;
          resolve(on.kind === 'tcp' ? uWS.us_socket_local_port(socket) : 0);
        };
        if (on.kind === 'tcp') app.listen(on.host, on.port, listening);
        else app.listen_unix(listening, on.path);
      }),
    drain: async (timeoutMs) => {
      draining = true;
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // Closes idle keep-alive connections too; without this the thread lingers until uWS's idle timeout.
      (app as unknown as { close(): void }).close();
    },
  };
}

function snapshot(res: uWS.HttpResponse, req: uWS.HttpRequest, config: AppContext['config'], behindGuard: boolean): Snapshot {
  const headers: Record<string, string> = {};
  // A header sent on several lines counts by its first, as the original's Header.Get reads it: a proxy that
  // adds its own X-Forwarded-For line below the client's must not move the address limits and audits see.
  req.forEach((key, value) => {
    if (headers[key] === undefined) headers[key] = value;
  });
  const requestIdHeader = config.api.requestIdHeader;
  const inherited = requestIdHeader ? headers[requestIdHeader.toLowerCase()] : undefined;
  const connection = connectionAddress(
    Buffer.from(behindGuard ? res.getProxiedRemoteAddressAsText() : res.getRemoteAddressAsText()).toString(),
  );
  return {
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    ip: clientAddress(headers, connection, config.security.sbForwardedForEnabled),
    requestId: inherited || randomUUID(),
    authEvent: undefined, // set later by an audited request: present from the start, every snapshot has one shape
  };
}

/**
 * Every response answered after the uWS callback returned needs this, or uWS aborts the process. A client
 * that goes away also ends the request's deadline, as Go's request context is cancelled: nobody waits
 * for the answer, so its queued hash, its transaction and its hook call stop (bench/README.md: a flood's
 * abandoned logins were still hashed until the 504 deadline).
 */
function watchAbort(res: uWS.HttpResponse, progress: Progress, deadline: Deadline): void {
  res.onAborted(() => {
    progress.aborted = true;
    deadline.expire(apiError('client_closed_request'));
  });
}

function toApiRequest(
  snap: Snapshot,
  route: Route,
  params: Record<string, string>,
  rawBody: Buffer,
  deadline: Deadline,
  posted?: GoQuery,
): ApiRequest {
  let parsed: JsonObject | undefined;
  let checked: JsonObject | undefined;
  let query: URLSearchParams | undefined;
  const check: BodyCheck<JsonObject> | undefined = route.body;
  return {
    method: snap.method,
    path: snap.path,
    route: route.path,
    params,
    headers: snap.headers,
    ip: snap.ip,
    requestId: snap.requestId,
    rawBody,
    // An empty body stays the `{}` every route reads one as (docs/differences.md), urlencoded or not.
    formTaken: posted !== undefined && rawBody.length > 0 && loggerTakesForm(snap),
    rawQuery: snap.query,
    get query() {
      return (query ??= goQueryValues(snap.query));
    },
    get form() {
      return posted ? posted.values : this.query;
    },
    get formMalformed() {
      return posted ? posted.malformed : goParseQuery(snap.query).malformed;
    },
    get signal() {
      return deadline.signal;
    },
    msLeft: () => deadline.msLeft(),
    json(goParams) {
      if (parsed) return parsed;
      // Go's decoder given the emptied body (logger-form.ts): not the service's `{}` for a body never sent.
      if (this.formTaken) throw apiError('bad_json', 'Could not parse request body as JSON: unexpected end of JSON input');
      const routeParams = goParamsType(this);
      const value = parseJsonObject(rawBody, goParams ?? routeParams);
      // The route's fields are named as its own Go type decodes them, whoever reads the body first.
      return (parsed = check?.fields ? underFieldNames(value, check.fields, fieldsNullEmpties(routeParams)) : value);
    },
    // The body is decoded as the original's type (go-field-types.ts), then the route's schema checked, where
    // the handler first reads it, so their errors keep their place among the handler's own checks (after
    // the guard, after a 404 for an unknown user).
    body() {
      if (checked) return checked;
      const value = this.json();
      assertDecodesAsGo(value, goParamsType(this));
      return (checked = check ? check(value) : value);
    },
    audited(payload) {
      snap.authEvent = payload;
    },
  };
}

/** Collects the body as copied chunks and joins them once (Buffer.concat per chunk would be quadratic). */
function readBody(res: uWS.HttpResponse, headers: Record<string, string>, progress: Progress): Promise<Buffer> {
  const declared = Number(headers['content-length'] ?? 0);
  const tooLarge = () => apiError('request_entity_too_large', `Request body too large (max ${MAX_BODY_BYTES} bytes)`);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        done = true;
        return reject(tooLarge());
      }
      chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after this callback
      if (isLast) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      }
    });
    if (progress.aborted) reject(new Error('aborted'));
  });
}

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`;
const STATUS_LINES = new Map(Object.keys(STATUS_CODES).map((code) => [Number(code), statusLine(Number(code))]));

function write(res: uWS.HttpResponse, answer: Answer, closeConnection: boolean, head: boolean): void {
  res.cork(() => {
    res.writeStatus(STATUS_LINES.get(answer.status) ?? statusLine(answer.status));
    for (const name in answer.headers) res.writeHeader(name, answer.headers[name]);
    if (answer.status === 204 || answer.status === 304) res.endWithoutBody(0, closeConnection);
    else if (head) {
      // uWS 20.30 writes the body after a HEAD too, and endWithoutBody with any argument leaves the answer
      // open (uWS then aborts the process): the length the GET would have is written by hand and the
      // answer ends with no body (RFC 9110 9.3.2). A draining server closes the connection itself.
      res.writeHeader('Content-Length', String(Buffer.byteLength(answer.body)));
      res.endWithoutBody();
    } else res.end(answer.body, closeConnection);
  });
}
