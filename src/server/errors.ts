// One error class, one code table, one renderer. Handlers throw; only renderError builds error JSON.
// The error_code strings are part of the wire API that @supabase/auth-js reads: do not rename them
// (REFERENCE §8).
import { databaseFault, type DatabaseFault } from '../db/faults.js';

export type ErrorCode =
  | 'unknown' | 'unexpected_failure' | 'validation_failed' | 'bad_json' | 'request_entity_too_large'
  | 'request_timeout' | 'conflict' | 'not_found' | 'method_not_allowed' | 'feature_disabled'
  | 'no_authorization' | 'bad_jwt' | 'not_admin' | 'user_not_found' | 'session_not_found' | 'session_expired'
  | 'user_banned' | 'unexpected_audience' | 'insufficient_aal'
  | 'invalid_credentials' | 'email_not_confirmed' | 'phone_not_confirmed' | 'signup_disabled'
  | 'email_provider_disabled' | 'phone_provider_disabled' | 'provider_disabled' | 'anonymous_provider_disabled'
  | 'otp_disabled' | 'otp_expired' | 'user_already_exists' | 'email_exists' | 'phone_exists' | 'weak_password'
  | 'same_password' | 'email_address_invalid' | 'email_address_not_authorized' | 'captcha_failed'
  | 'refresh_token_not_found' | 'refresh_token_already_used' | 'flow_state_not_found' | 'flow_state_expired'
  | 'flow_state_already_used' | 'bad_code_verifier' | 'bad_oauth_state' | 'bad_oauth_callback' | 'invite_not_found'
  | 'reauthentication_needed' | 'reauthentication_not_valid' | 'current_password_required' | 'current_password_invalid'
  | 'over_request_rate_limit' | 'over_email_send_rate_limit' | 'over_sms_send_rate_limit' | 'sms_send_failed'
  | 'saml_provider_disabled' | 'web3_provider_disabled'
  // ours, not the original's: the database or the process cannot serve right now (README "Faults and readiness")
  | 'database_unavailable' | 'database_busy' | 'not_ready' | 'over_capacity';

export class ApiError extends Error {
  /** Retry-After in seconds; a 429 or 503 without one gets DEFAULT_RETRY_AFTER (renderError). */
  retryAfterSeconds?: number;

  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    message: string,
    /** extra top-level body fields, e.g. weak_password: { reasons } */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** Sets the seconds a client should wait before retrying (at least 1, whole seconds). */
  retryAfter(seconds: number): this {
    this.retryAfterSeconds = Math.max(1, Math.ceil(seconds));
    return this;
  }
}

/** OAuth-style error: always HTTP 400, body {error, error_description} whatever the API version (REFERENCE §1.1). */
export class OAuthError extends Error {
  constructor(readonly error: string, readonly description = '') { super(description || error); }
}

export const badRequest = (msg: string) => new ApiError(400, 'validation_failed', msg);
export const unprocessable = (code: ErrorCode, msg: string) => new ApiError(422, code, msg);

/** A lost or saturated database is the request's 503, never an unexpected failure (src/db/faults.ts). */
const DATABASE_FAULTS: Record<DatabaseFault, () => ApiError> = {
  unavailable: () => new ApiError(503, 'database_unavailable', 'The database is unavailable, please retry after a moment.').retryAfter(5),
  busy: () => new ApiError(503, 'database_busy', 'The database is busy, please retry after a moment.').retryAfter(1),
};

/** 503 with Retry-After: the service is at capacity and refused the request before doing its work. */
export const overCapacity = (retryAfterSeconds = 1) =>
  new ApiError(503, 'over_capacity', 'The service is at capacity, please retry after a moment.').retryAfter(retryAfterSeconds);

export interface RenderedError { status: number; headers: Record<string, string>; body: string }

const API_VERSION_2024 = '2024-01-01';

// Every 429 and 503 tells the client when to come back (DESIGN §2), also when its thrower could not know.
const DEFAULT_RETRY_AFTER: Record<number, number> = { 429: 60, 503: 5 };

/** The API version a request selects with X-Supabase-Api-Version (REFERENCE §1.2). */
export function apiVersionOf(header: string | undefined): 'initial' | typeof API_VERSION_2024 {
  if (!header || !/^\d{4}-\d{2}-\d{2}$/.test(header)) return 'initial';
  return header >= API_VERSION_2024 ? API_VERSION_2024 : 'initial';
}

/** Renders any thrown value. Unknown errors become a 500 that names only the request id. */
export function renderError(err: unknown, apiVersion: string | undefined, requestId: string): RenderedError {
  if (err instanceof OAuthError) {
    const body: Record<string, string> = { error: err.error };
    if (err.description) body.error_description = err.description;
    return { status: 400, headers: {}, body: JSON.stringify(body) };
  }
  const fault = err instanceof ApiError ? null : databaseFault(err);
  const e = err instanceof ApiError ? err : fault ? DATABASE_FAULTS[fault]()
    : new ApiError(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information');
  const headers: Record<string, string> = { 'x-sb-error-code': e.errorCode };
  const retryAfter = e.retryAfterSeconds ?? DEFAULT_RETRY_AFTER[e.status];
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (apiVersionOf(apiVersion) === API_VERSION_2024) {
    headers['X-Supabase-Api-Version'] = API_VERSION_2024;
    return { status: e.status, headers, body: JSON.stringify({ code: e.errorCode, message: e.message, ...e.extra }) };
  }
  const body: Record<string, unknown> = { code: e.status, error_code: e.errorCode, msg: e.message, ...e.extra };
  if (e.status >= 500) body.error_id = requestId;
  return { status: e.status, headers, body: JSON.stringify(body) };
}
