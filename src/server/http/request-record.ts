// After each request: its metric, its span, and its log line (none for quiet routes such as /health).
import type { Logger } from 'pino';
import { maskQuery, maskUrl } from '../observability/secret-keys.js';
import type { AppContext } from '../context.js';
import type { Route } from './types.js';
import type { ChildSpan } from '../observability/request-spans.js';
import { redirectTarget } from './redirect-target.js';
import { goParseQuery, type GoQuery } from './go-query.js';
import { loggedParams } from './logged-params.js';

export interface Completed {
  requestId: string;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  ip: string;
  route: Route | undefined;
  params: Record<string, string>;
  status: number;
  errorCode: string | undefined;
  /** an error answer's text (render-error.ts) */
  error: string | undefined;
  aborted: boolean;
  /** a CORS preflight: counted, but given no log line, as the original answers them before its logger */
  preflight?: boolean;
  spans?: ChildSpan[];
  /** a posted urlencoded body's form merged with the query (go-form.ts), which the original's logger reads */
  form?: GoQuery;
  /** the payload of the request's last audit entry (db/audit-log.ts) */
  authEvent?: Record<string, unknown>;
  /** performance.now() at arrival */
  started: number;
}

/** Read only: what the request line looks up in a request without a query. */
const NO_QUERY = new URLSearchParams();

export function recordRequest(ctx: AppContext, log: Logger, r: Completed): void {
  const seconds = (performance.now() - r.started) / 1000;
  ctx.metrics.observe(r.method, r.route?.path ?? 'unmatched', r.status, seconds);
  if (r.errorCode === 'over_email_send_rate_limit') ctx.metrics.emailRateLimited(r.route?.path ?? 'unmatched');
  if (r.route && ctx.tracing.enabled)
    ctx.tracing.record({
      method: r.method,
      route: r.route.path,
      params: r.params,
      status: r.status,
      start: performance.timeOrigin + r.started,
      end: performance.timeOrigin + performance.now(),
      children: r.spans,
      traceparent: r.headers.traceparent,
      tracestate: r.headers.tracestate,
      path: r.path,
      host: r.headers.host,
      clientAddress: r.ip,
    });
  if (r.route?.quiet || r.preflight) return;
  // The original's fields (its request logger's), so what reads its lines reads ours: duration in
  // nanoseconds, error as it words it, grant_type on /token, referer as the redirect target the request
  // would get (redirect-target.ts; its secret parameters masked, as the query's are), the ids its handlers add (logged-params.ts); query, route and
  // duration_ms are ours.
  // The form as the original's logger parses it (a posted urlencoded body's pairs, then the query's:
  // logger-form.ts); it takes redirect_to from it only when no pair was left out (go-query.ts: its form
  // parse failed, so the referer falls back to the Referer header).
  const read = r.form ?? (r.query ? goParseQuery(r.query) : undefined);
  const form = read?.values ?? NO_QUERY;
  const line = {
    request_id: r.requestId,
    method: r.method,
    path: r.path,
    query: r.query ? maskQuery(r.query) : undefined,
    route: r.route?.path,
    grant_type: r.path === '/token' ? (form.get('grant_type') ?? '') : undefined,
    remote_addr: r.ip,
    referer: maskUrl(redirectTarget({ headers: r.headers, form: read?.malformed ? NO_QUERY : form }, ctx)),
    status: r.status,
    duration: Math.round(seconds * 1e9),
    duration_ms: Math.round(seconds * 100_000) / 100,
    error_code: r.errorCode,
    error: r.error,
    aborted: r.aborted || undefined,
    auth_event: r.authEvent,
    ...loggedParams(r.params),
  };
  // Levels as the original's: a server error is an error, a refusal of the client's request a warning.
  if (r.status >= 500) log.error(line, 'request completed');
  else if (r.status >= 400) log.warn(line, 'request completed');
  else log.info(line, 'request completed');
}
