// The one error renderer: any thrown value becomes {code, error_code, msg} (or the 2024-01-01 shape
// {code, message}) with x-sb-error-code and, on a 429 or 503, Retry-After. Handlers throw and never build
// error JSON. An unknown error is a 500 naming only the request id; a lost or saturated database is a 503.
import { ApiError, apiError } from '../errors.js';
import { databaseFault, type DatabaseFault } from '../../db/faults.js';
import { publicPostgresError } from './postgres-error.js';
import { goJsonText } from './go-json-text.js';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** the request line's `error`, as the original logs it: "status: message", or the unexpected error's own message */
  logged: string;
}

export const API_VERSION_2024 = '2024-01-01';

/** A lost or saturated database is the request's 503, never an unexpected failure (src/db/faults.ts). */
const DATABASE_FAULTS: Record<DatabaseFault, 'database_unavailable' | 'database_busy'> = {
  unavailable: 'database_unavailable',
  busy: 'database_busy',
};

// Every 429 and 503 tells the client when to come back (docs/architecture.md#bounded-queues), also when its thrower could not know.
const DEFAULT_RETRY_AFTER: Record<number, number> = { 429: 60, 503: 5 };

/** The API version a request selects with X-Supabase-Api-Version (docs/errors.md#body-shapes). */
export function apiVersionOf(header: string | undefined): 'initial' | typeof API_VERSION_2024 {
  if (!header || !isCalendarDate(header)) return 'initial';
  return header >= API_VERSION_2024 ? API_VERSION_2024 : 'initial';
}

/** YYYY-MM-DD naming a day that exists, as the original's date parsing demands (2024-02-30 is no date). */
function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getUTCFullYear() === year;
}

export function renderError(err: unknown, apiVersion: string | undefined, requestId: string): RenderedError {
  const fault = err instanceof ApiError ? null : databaseFault(err);
  const e = err instanceof ApiError ? err : apiError(fault ? DATABASE_FAULTS[fault] : 'unexpected_failure');
  // An unexpected error is logged with its own message, as the original logs the internal cause.
  const cause = err instanceof ApiError ? err.cause : err;
  const logged = `${e.status}: ${cause instanceof Error ? cause.message : e.message}`;
  const version2024 = apiVersionOf(apiVersion) === API_VERSION_2024;
  // Under the initial version, only a failure an answer names as its cause (causedBy) speaks for itself, as
  // the original passes through only the internal error of an HTTP error it built: a statement that fails
  // on its own stays an unexpected failure.
  const raised = !version2024 && err instanceof ApiError ? publicPostgresError(err.cause) : null;
  const headers: Record<string, string> = { ...e.headers, 'x-sb-error-code': e.errorCode };
  // Retry-After follows the status answered, a 429 or 503 a database error names included.
  const retryAfter = e.retryAfterSeconds ?? DEFAULT_RETRY_AFTER[raised?.status ?? e.status];
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (version2024) {
    headers['X-Supabase-Api-Version'] = API_VERSION_2024;
    return { status: e.status, headers, body: goJsonText({ code: e.errorCode, message: e.message, ...e.extra }), logged };
  }
  if (raised) return { status: raised.status, headers, body: goJsonText(raised.body), logged };
  const body: Record<string, unknown> = { code: e.status, error_code: e.errorCode, msg: e.message, ...e.extra };
  if (e.status >= 500) body.error_id = requestId;
  return { status: e.status, headers, body: goJsonText(body), logged };
}
