// The answers of GET|POST /callback (REFERENCE §9.5, docs/oauth.md#errors): always a redirect, never a
// JSON page. Keys are sorted as the original's url.Values encoding sorts them.
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../http/types.js';
import type { TokenResponse } from '../sessions/issue.js';
import { withSessionFragment } from '../http/session-fragment.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};
// Refusals of the person rather than of the request: the original names them access_denied.
const ACCESS_DENIED = new Set(['signup_disabled', 'user_banned', 'provider_email_needs_verification']);

const byKey = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);
/** Sorted by key, a repeated key's values in their order (a stable sort), as url.Values.Encode writes them. */
const sorted = (entries: Iterable<[string, string]>) => new URLSearchParams([...entries].sort(byKey));
const encode = (entries: Iterable<[string, string]>) => sorted(entries).toString();

/** `target` with `params` in its query (existing parameters kept) and, when given, `fragment` replacing its
 * fragment (errors); without one the target's fragment stays, as the original's PKCE redirect keeps it. */
function withParams(target: string, params: Record<string, string>, fragment?: Record<string, string>): string {
  const url = new URL(target);
  // The target's own parameters stay, each value of a repeated one too; a parameter set here replaces them all.
  const kept = [...url.searchParams].filter(([key]) => !(key in params));
  url.search = encode([...kept, ...Object.entries(params)]);
  if (fragment) url.hash = encode(Object.entries(fragment));
  return url.href;
}

/** The error's copy in the fragment: only the fields that have a value, then `sb` (the original's mark of its redirects). */
const errorFragment = (params: Record<string, string>): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(params).filter(([, value]) => value !== '')),
  sb: '',
});

const errorName = (err: ApiError) => (ACCESS_DENIED.has(err.errorCode) ? 'access_denied' : (ERROR_NAMES[err.status] ?? 'server_error'));

/** A bad or missing `state`: 303 to SITE_URL, the error in the query only (the flow's redirect_to is unknown). */
export function stateError(siteUrl: string, err: ApiError): ApiResponse {
  const params = { error: errorName(err), error_code: err.errorCode, error_description: err.message };
  return { status: 303, headers: { Location: withParams(siteUrl, params) } };
}

/** Any other failure: 302 to the flow's target, the error in the query and the fragment (with `sb`, the original's mark of its redirects). */
export function flowError(target: string, err: ApiError): ApiResponse {
  const params = { error: errorName(err), error_code: err.errorCode, error_description: err.message };
  return { status: 302, headers: { Location: withParams(target, params, errorFragment(params)) } };
}

/** The provider itself refused (?error=...): passed on as it came, without an error_code. */
export function providerError(target: string, error: string, description: string): ApiResponse {
  const params: Record<string, string> = { error, error_description: description };
  return { status: 302, headers: { Location: withParams(target, params, errorFragment(params)) } };
}

/** Implicit flow: the session appended as a fragment (the target's own kept), with the provider's tokens. */
export function sessionRedirect(
  target: string,
  provider: string,
  s: TokenResponse,
  providerToken: string,
  providerRefreshToken: string,
): ApiResponse {
  const fragment: Record<string, string> = {
    access_token: s.access_token,
    expires_at: String(s.expires_at),
    expires_in: String(s.expires_in),
    provider, // the spec lists it in the fragment (SPEC "GET /callback"); clients ignore it
    provider_token: providerToken,
    refresh_token: s.refresh_token,
    sb: '',
    token_type: 'bearer',
  };
  if (providerRefreshToken) fragment.provider_refresh_token = providerRefreshToken;
  return { status: 302, headers: { Location: withSessionFragment(target, sorted(Object.entries(fragment))) } };
}

/** PKCE flow: the code the client exchanges at POST /token?grant_type=pkce; the target's fragment stays. */
export function codeRedirect(target: string, authCode: string): ApiResponse {
  return { status: 302, headers: { Location: withParams(target, { code: authCode }) } };
}
