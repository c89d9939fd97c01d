// GET /oauth/authorize's parameters after the client and redirect URI are trusted: the checks whose
// failure goes back to the client as error=invalid_request, in the original's order and wording
// (docs/oauth-server.md#authorization). PKCE is required; S256 and plain are accepted, as the original.
import type { AppContext } from '../context.js';
import { isSupportedScope, parseScopes } from './scopes.js';
import { uriParts } from './uri-parts.js';

export interface AuthorizeParams {
  scope: string;
  state: string | null;
  resource: string | null;
  codeChallenge: string;
  codeChallengeMethod: 's256' | 'plain';
  nonce: string | null;
}

/** The checked parameters, or the description of the first problem. */
export function readAuthorizeParams(query: URLSearchParams, ctx: AppContext, idTokens: boolean): AuthorizeParams | string {
  const responseType = query.get('response_type') || 'code';
  const scope = query.get('scope') || ctx.config.oauthServer.defaultScope;
  if (responseType !== 'code') return 'only response_type=code is supported';
  const scopes = parseScopes(scope);
  if (scopes.length === 0) return 'scope parameter cannot be empty';
  // ours: openid is unsupported without an asymmetric signing key (ID tokens are never HS256), so the
  // app learns it here rather than at the token endpoint
  const unsupported = scopes.find((s) => !isSupportedScope(s) || (s === 'openid' && !idTokens));
  if (unsupported) return `unsupported scope: ${unsupported}`;
  const resource = query.get('resource') || null;
  const resourceProblem = resource ? resourceProblemOf(resource) : null;
  if (resourceProblem) return resourceProblem;
  const challenge = query.get('code_challenge') ?? '';
  const method = (query.get('code_challenge_method') ?? '').toLowerCase();
  if (!challenge || !method) return 'PKCE flow requires both code_challenge and code_challenge_method';
  if (method !== 's256' && method !== 'plain') return "code_challenge_method must be 'S256' or 'plain'";
  if (challenge.length < 43 || challenge.length > 128) return 'code_challenge must be between 43 and 128 characters';
  // ours: the stored columns' bounds, answered as the client's mistake rather than failing the insert
  const state = query.get('state') || null;
  const nonce = query.get('nonce') || null;
  if (scope.length > 4096 || (state?.length ?? 0) > 4096 || (nonce?.length ?? 0) > 255) return 'scope, state or nonce is too long';
  return { scope, state, resource, codeChallenge: challenge, codeChallengeMethod: method, nonce };
}

/**
 * RFC 8707: an absolute URI without fragment or query, read as the original reads it (Go's url.Parse, so an
 * empty `#` or `?` is none, and the host and port are taken as written). Longer than the column: ours.
 */
function resourceProblemOf(resource: string): string | null {
  const parts = resource.length > 2048 ? null : uriParts(resource);
  if (!parts) return 'resource must be a valid URI';
  if (!parts.scheme) return 'resource must be an absolute URI';
  if (parts.fragment !== '') return 'resource must not include a fragment component';
  if (parts.query !== '') return 'resource must not include a query component';
  return null;
}
