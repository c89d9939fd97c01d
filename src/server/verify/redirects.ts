// The 303 answers of GET /verify: the session appended after the target's own fragment, or a message or
// the error replacing it, keys sorted as the original's url.Values encoding sorts them (docs/api.md#get-verify). A PKCE flow gets
// `?code=` in the query instead of a session, and its errors in the query as well as the fragment. Every
// fragment carries the original's empty `sb`, its mark of a redirect from the auth service.
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../http/types.js';
import type { Verified } from './consume.js';
import { withSessionFragment } from '../http/session-fragment.js';
import { goQueryEscape } from '../delivery/mail/links.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

type Pairs = Array<[string, string]>;

/** url.Values.Encode: pairs sorted by key (a key's values keep their order), each side escaped. */
const encodePairs = (pairs: Pairs) =>
  [...pairs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${goQueryEscape(key)}=${goQueryEscape(value)}`)
    .join('&');
const encode = (params: Record<string, string>) => encodePairs(Object.entries(params));

/**
 * The target with its query read and written again as the original's url.Values round trip does: `params`
 * replace the parameters of their names, every other parameter is kept (a repeated one with each of its
 * values), keys sorted. A target whose query comes out empty keeps the bare `?` it had, if any, as Go's URL does.
 */
function withQuery(target: string, params: Record<string, string> = {}): string {
  const [beforeFragment, fragment] = splitFragment(target);
  const at = beforeFragment.indexOf('?');
  const base = at === -1 ? beforeFragment : beforeFragment.slice(0, at);
  const kept = [...new URLSearchParams(at === -1 ? '' : beforeFragment.slice(at + 1))].filter(([key]) => !(key in params));
  const query = encodePairs([...kept, ...Object.entries(params)]);
  const separator = query || at !== -1 ? '?' : '';
  return `${base}${separator}${query}${fragment === undefined ? '' : `#${fragment}`}`;
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
  // The message redirect writes the target's query again in every flow (sorted, as the original's
  // prepRedirectURL does), adding the message to it only in a PKCE flow.
  if (verified.kind === 'message')
    return withFragment(withQuery(target, pkce ? { message: verified.message } : {}), { message: verified.message, sb: '' });
  if (verified.kind === 'code') return { status: 303, headers: { Location: withQuery(target, { code: verified.authCode }) } };
  const s = verified.session;
  // Tokens, numbers and a type name: nothing in them that the two encodings would write differently.
  const session = new URLSearchParams(
    Object.entries({
      access_token: s.access_token,
      expires_at: String(s.expires_at),
      expires_in: String(s.expires_in),
      refresh_token: s.refresh_token,
      sb: '',
      token_type: 'bearer',
      type,
    }),
  );
  return { status: 303, headers: { Location: withSessionFragment(target, session) } };
}

/** `error` only for the statuses the original names (a 422 or a 429 has none), then the code and description. */
export function redirectWithError(target: string, err: ApiError, pkce = false): ApiResponse {
  const name = ERROR_NAMES[err.status];
  const params = { ...(name ? { error: name } : {}), error_code: err.errorCode, error_description: err.message };
  return withFragment(pkce ? withQuery(target, params) : target, { ...params, sb: '' });
}
