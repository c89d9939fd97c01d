// What the HTTP layer writes: a status, headers and a serialised body, built from a handler's response or
// from any thrown error. Nothing here touches uWS.
import { apiError } from '../errors.js';
import { renderError } from './render-error.js';
import { mayHoldLoneSurrogates, wellFormed } from './well-formed.js';
import { mayBeTooDeep, tooDeep } from './json-depth.js';
import { goJsonSyntaxError } from './json-syntax-error.js';
import { numberOutOfRange } from './json-number-range.js';
import { goJsonKind } from './go-json-kind.js';
import type { ApiResponse } from './types.js';
import { requestDeadlines, type DeadlineClock } from './deadline-clock.js';
import { goJsonText } from './go-json-text.js';
import { goRedirectPage } from './go-redirect-body.js';
import { goQueryValues } from './go-query.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** an error answer's text for the request line (render-error.ts) */
  error?: string;
}

/** `method` is the request's, for the page under a redirect answering a GET or HEAD (go-redirect-body.ts). */
export function serialise(response: ApiResponse, cors: Readonly<Record<string, string>>, method?: string): Answer {
  const status = response.status ?? 200;
  const headers: Record<string, string> = { ...cors, ...response.headers };
  if (response.body === undefined) {
    const location = headers.Location;
    if (location === undefined || (method !== 'GET' && method !== 'HEAD') || status < 300 || status > 399)
      return { status, headers, body: '' };
    headers['Content-Type'] = 'text/html; charset=utf-8';
    return { status, headers, body: goRedirectPage(status, location) };
  }
  if (typeof response.body === 'string') return { status, headers, body: response.body };
  headers['Content-Type'] ??= 'application/json';
  return { status, headers, body: goJsonText(response.body) };
}

export function errorAnswer(
  err: unknown,
  apiVersion: string | undefined,
  requestId: string,
  cors: Readonly<Record<string, string>>,
): Answer {
  const rendered = renderError(err, apiVersion, requestId);
  return {
    status: rendered.status,
    headers: { ...cors, ...rendered.headers, 'Content-Type': 'application/json' },
    body: rendered.body,
    error: rendered.logged,
  };
}

// PostgreSQL text and jsonb cannot hold U+0000, so a NUL anywhere in the input would reach the database
// as an error (a 500). JSON can only carry one as the escape \u0000 (a raw control byte is invalid JSON).
const JSON_NUL = /\\u0000/i;
const QUERY_NUL = /%00/;

/**
 * A JSON body that must be an object ({} when empty or null), nested at most MAX_JSON_DEPTH deep; anything
 * else is 400 bad_json. `goParams` is the Go type the original decodes this body into (go-param-types.ts):
 * a body that is no object is refused in that decoder's words, naming it.
 */
export function parseJsonObject(raw: Buffer, goParams?: string): Record<string, unknown> {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    // In Go's words, as the original answers (json-syntax-error.ts). JSON.parse also throws a RangeError
    // for a body nested too deep for its stack, which Go's walk refuses by its depth limit.
    const words = goJsonSyntaxError(raw) ?? (err as Error).message;
    throw apiError('bad_json', `Could not parse request body as JSON: ${words}`);
  }
  // A body of `null` is an empty one: the original's decoder leaves its request struct as it was.
  if (value === null) return {};
  // Go checks the depth with the syntax, before it decodes anything, so a list nested too deep is refused for that.
  const opener = mayBeTooDeep(raw.length) ? tooDeep(value) : null;
  if (opener) throw apiError('bad_json_depth', `Could not parse request body as JSON: invalid character '${opener}' exceeded max depth`);
  if (typeof value !== 'object' || Array.isArray(value)) {
    if (goParams === undefined) throw apiError('bad_json');
    throw apiError(
      'bad_json',
      `Could not parse request body as JSON: json: cannot unmarshal ${goJsonKind(value)} into Go value of type ${goParams}`,
    );
  }
  // After the original's own refusals: a body it refuses is refused in its words, NUL or not.
  const latin1 = raw.toString('latin1');
  if (JSON_NUL.test(latin1)) {
    throw apiError('bad_json_nul');
  }
  const overflow = numberOutOfRange(latin1, value);
  if (overflow) throw apiError('bad_json', `Could not parse request body as JSON: ${overflow}`);
  return (mayHoldLoneSurrogates(latin1) ? wellFormed(value) : value) as Record<string, unknown>;
}

/**
 * 400 when the query string carries a NUL character (see JSON_NUL) in a pair the routes read: one in a pair
 * the query reading leaves out (go-query.ts) reaches nothing.
 */
export function assertNoNulInQuery(query: string): void {
  if (!QUERY_NUL.test(query)) return;
  for (const [name, value] of goQueryValues(query)) if (name.includes('\0') || value.includes('\0')) throw apiError('query_nul');
}

/** 400 when a decoded path parameter (`/oauth/authorizations/%00`) carries a NUL character (see JSON_NUL). */
export function assertNoNulInParams(params: Record<string, string>): void {
  for (const name in params) if (params[name].includes('\0')) throw apiError('path_nul');
}

/**
 * A request's deadline as an AbortSignal, made only when a handler asks for it (most never do). It expires
 * when the deadline passes (with the 504 itself) or when the client goes away before its answer (with
 * client_closed_request), so the work behind the answer stops too: its transaction rolls back (db/pool.ts
 * tx) and its queued hash is dropped (crypto/admission.ts). A signal asked for after that is born aborted.
 */
export class Deadline {
  private controller: AbortController | undefined;
  private reason: Error | undefined;
  /** performance.now() at which the 504 is due, once withTimeout started the request's clock */
  private endsAt = Infinity;
  /** Milliseconds before the 504 (Infinity before the clock starts): an outbound call must end sooner (http/request-budget.ts). */
  msLeft(): number {
    return this.endsAt - performance.now();
  }
  /** The clock fires at most one resolution late, never early: the 504 comes no sooner than this. */
  startsClock(ms: number): void {
    this.endsAt = performance.now() + ms;
  }
  get signal(): AbortSignal {
    return (this.controller ??= abortController(this.reason)).signal;
  }
  expire(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

function abortController(reason: Error | undefined): AbortController {
  const controller = new AbortController();
  if (reason) controller.abort(reason);
  return controller;
}

/**
 * API_MAX_REQUEST_DURATION: the answer is a 504 when the handler takes longer, and `deadline` expires. The
 * deadline is kept by the thread's shared clock (deadline-clock.ts), not a timer per request.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, deadline?: Deadline, clock: DeadlineClock = requestDeadlines): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    deadline?.startsClock(ms);
    const expiry = clock.add(ms, () => {
      const err = apiError('request_timeout');
      deadline?.expire(err);
      reject(err);
    });
    work.then(
      (value) => {
        clock.cancel(expiry);
        resolve(value);
      },
      (err: unknown) => {
        clock.cancel(expiry);
        reject(err);
      },
    );
  });
}
