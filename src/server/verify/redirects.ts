// The 303 answers of GET /verify: the session appended after the target's own fragment, or a message or
// the error replacing it, keys sorted as the original's url.Values encoding sorts them (docs/api.md#get-verify). A PKCE flow gets
// `?code=` in the query instead of a session, and its errors in the query as well as the fragment. Every
// fragment carries the original's empty `sb`, its mark of a redirect from the auth service.
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../http/types.js';
import type { Verified } from './consume.js';
import { withSessionFragment } from '../http/session-fragment.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

const sorted = (params: Record<string, string>) =>
  new URLSearchParams(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const encode = (params: Record<string, string>) => sorted(params).toString();

/** The target with `params` added to its query (existing parameters kept, same names replaced), re-encoded
 * with sorted keys as the original's url.Values.Encode does. */
function withQuery(target: string, params: Record<string, string>): string {
  const [beforeFragment, fragment] = splitFragment(target);
  const [base, query = ''] = beforeFragment.split(/\?(.*)/s);
  const merged = Object.fromEntries(new URLSearchParams(query));
  return `${base}?${encode({ ...merged, ...params })}${fragment === undefined ? '' : `#${fragment}`}`;
}

function splitFragment(target: string): [string, string | undefined] {
  const at = target.indexOf('#');
  return at === -1 ? [target, undefined] : [target.slice(0, at), target.slice(at + 1)];
}

/** Errors and messages replace the target's fragment, as the original's prepErrorRedirectURL and prepRedirectURL do. */
function withFragment(target: string, params: Record<string, string>): ApiResponse {
  return { status: 303, headers: { Location: `${splitFragment(target)[0]}#${encode(params)}` } };
}

export function redirectWithSession(target: string, type: string, verified: Verified, pkce = false): ApiResponse {
  if (verified.kind === 'message')
    return withFragment(pkce ? withQuery(target, { message: verified.message }) : target, { message: verified.message, sb: '' });
  if (verified.kind === 'code') return { status: 303, headers: { Location: withQuery(target, { code: verified.authCode }) } };
  const s = verified.session;
  const session = sorted({
    access_token: s.access_token,
    expires_at: String(s.expires_at),
    expires_in: String(s.expires_in),
    refresh_token: s.refresh_token,
    sb: '',
    token_type: 'bearer',
    type,
  });
  return { status: 303, headers: { Location: withSessionFragment(target, session) } };
}

/** `error` only for the statuses the original names (a 422 or a 429 has none), then the code and description. */
export function redirectWithError(target: string, err: ApiError, pkce = false): ApiResponse {
  const name = ERROR_NAMES[err.status];
  const params = { ...(name ? { error: name } : {}), error_code: err.errorCode, error_description: err.message };
  return withFragment(pkce ? withQuery(target, params) : target, { ...params, sb: '' });
}
