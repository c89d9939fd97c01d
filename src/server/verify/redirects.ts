// The 303 answers of GET /verify, byte for byte as the original builds them (http/go-url.ts): the session
// appended after the target's own fragment, or a message or the error replacing it (docs/api.md#get-verify). A
// PKCE flow gets `?code=` in the query instead of a session, and its errors in the query as well as the
// fragment. Every fragment carries the original's empty `sb`, its mark of a redirect from the auth service.
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../http/types.js';
import type { Verified } from './consume.js';
import { withSessionFragment } from '../http/session-fragment.js';
import { goFragmentEscape, goParse, goString, goValuesEncode, goWithQuery, type GoUrl } from '../http/go-url.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

/**
 * Errors and messages replace the target's fragment (the original's prepErrorRedirectURL and
 * prepRedirectURL set `u.Fragment` to the encoded values, which URL.String escapes once more: `%` as `%25`).
 */
const withFragment = (u: GoUrl, params: Record<string, string>): ApiResponse => ({
  status: 303,
  headers: { Location: goString({ ...u, fragment: goFragmentEscape(goValuesEncode(params)) }) },
});

export function redirectWithSession(target: string, type: string, verified: Verified, pkce = false): ApiResponse {
  // The message redirect writes the target's query again in every flow (sorted, as the original's
  // prepRedirectURL does), adding the message to it only in a PKCE flow.
  if (verified.kind === 'message')
    return withFragment(goWithQuery(goParse(target), pkce ? { message: verified.message } : {}), { message: verified.message, sb: '' });
  if (verified.kind === 'code')
    return { status: 303, headers: { Location: goString(goWithQuery(goParse(target), { code: verified.authCode })) } };
  const s = verified.session;
  const session = {
    access_token: s.access_token,
    expires_at: String(s.expires_at),
    expires_in: String(s.expires_in),
    refresh_token: s.refresh_token,
    sb: '',
    token_type: 'bearer',
    type,
  };
  return { status: 303, headers: { Location: withSessionFragment(target, session) } };
}

/**
 * `error` only for the statuses the original names (a 422 or a 429 has none), then the code and
 * description; the target's query is written again only in a PKCE flow, else kept as it was written.
 */
export function redirectWithError(target: string, err: ApiError, pkce = false): ApiResponse {
  const name = ERROR_NAMES[err.status];
  const params = { ...(name ? { error: name } : {}), error_code: err.errorCode, error_description: err.message };
  const u = goParse(target);
  return withFragment(pkce ? goWithQuery(u, params) : u, { ...params, sb: '' });
}
