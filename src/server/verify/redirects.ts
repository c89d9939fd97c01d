// The 303 answers of GET /verify: the session, a message, or the error in the redirect target's fragment,
// keys sorted as the original's url.Values encoding sorts them (REFERENCE §2.3, §1.3).
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../types.js';
import type { Verified } from './consume.js';

const ERROR_NAMES: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized_client', 403: 'access_denied', 500: 'server_error', 503: 'temporarily_unavailable' };

function withFragment(target: string, params: Record<string, string>): ApiResponse {
  const fragment = new URLSearchParams(Object.entries(params).sort(([a], [b]) => a.localeCompare(b))).toString();
  return { status: 303, headers: { Location: `${target.split('#')[0]}#${fragment}` } };
}

export function redirectWithSession(target: string, type: string, verified: Verified): ApiResponse {
  if (verified.kind === 'message') return withFragment(target, { message: verified.message });
  const s = verified.session;
  return withFragment(target, { access_token: s.access_token, expires_at: String(s.expires_at), expires_in: String(s.expires_in),
    refresh_token: s.refresh_token, token_type: 'bearer', type });
}

export function redirectWithError(target: string, err: ApiError): ApiResponse {
  return withFragment(target, { error: ERROR_NAMES[err.status] ?? 'server_error', error_code: err.errorCode, error_description: err.message });
}
