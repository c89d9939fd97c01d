// The answers of GET|POST /callback (REFERENCE §9.5, docs/oauth.md#errors) and the SAML ACS's: always a
// redirect, never a JSON page, byte for byte as the original builds them (http/go-url.ts): the target read
// and written back by Go's URL parser, its query by url.Values (sorted, url.QueryEscape).
import type { ApiError } from '../errors.js';
import type { ApiResponse } from '../http/types.js';
import type { TokenResponse } from '../sessions/issue.js';
import { withSessionFragment } from '../http/session-fragment.js';
import { goEncode, goFragmentEscape, goParse, goQueryGet, goQueryWith, goString, goWithQuery } from '../http/go-url.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};
// Refusals of the person rather than of the request: the original names them access_denied.
const ACCESS_DENIED = new Set(['signup_disabled', 'user_banned', 'provider_email_needs_verification']);

const errorName = (err: ApiError) => (ACCESS_DENIED.has(err.errorCode) ? 'access_denied' : (ERROR_NAMES[err.status] ?? 'server_error'));
const errorParams = (err: ApiError) => ({ error: errorName(err), error_code: err.errorCode, error_description: err.message });

/** SITE_URL with the error set in its query, as the original's getErrorQueryString leaves it; 303. */
function siteError(siteUrl: string, err: ApiError, requestUri: boolean): ApiResponse {
  const u = goParse(siteUrl, requestUri);
  return { status: 303, headers: { Location: goString(goWithQuery(u, errorParams(err))) } };
}

/**
 * A bad or missing `state`: 303 to SITE_URL, the error in the query only (the flow's redirect_to is unknown).
 * The original reads SITE_URL here with url.ParseRequestURI, which takes no fragment: a `#` in it stays in
 * the path (written %23) or the query.
 */
export const stateError = (siteUrl: string, err: ApiError): ApiResponse => siteError(siteUrl, err, true);

/** A refused SAML response: the same 303 to SITE_URL, read by url.Parse there (its fragment kept). */
export const acsError = (siteUrl: string, err: ApiError): ApiResponse => siteError(siteUrl, err, false);

/**
 * The original's redirectErrors: the target's query with `params` set; its fragment replaced by the
 * query's error, error_description and error_code where they have a value, then `sb` (the original's mark of
 * its redirects), encoded and then escaped once more as URL.String escapes a fragment (each `%` as `%25`).
 */
function withError(target: string, params: Record<string, string>): ApiResponse {
  const u = goParse(target);
  const pairs = goQueryWith(u.query, params);
  // Values.Get of the query just written: an error_code of the target's own stands when none is set here.
  const shown = ['error', 'error_code', 'error_description'].map((name) => [name, goQueryGet(pairs, name)]).filter(([, value]) => value);
  const fragment = goFragmentEscape([...shown.map(([name, value]) => `${name}=${value}`), 'sb='].join('&'));
  return { status: 302, headers: { Location: goString({ ...u, query: goEncode(pairs), fragment }) } };
}

/** Any other failure: 302 to the flow's target, the error in the query and the fragment. */
export const flowError = (target: string, err: ApiError): ApiResponse => withError(target, errorParams(err));

/** The provider itself refused (?error=...): passed on as it came, without an error_code. */
export const providerError = (target: string, error: string, description: string): ApiResponse =>
  withError(target, { error, error_description: description });

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
  return { status: 302, headers: { Location: withSessionFragment(target, fragment) } };
}

/** PKCE flow (the original's prepPKCERedirectURL): `code` set in the target's query; the fragment stays. */
export function codeRedirect(target: string, authCode: string): ApiResponse {
  return { status: 302, headers: { Location: goString(goWithQuery(goParse(target), { code: authCode })) } };
}
