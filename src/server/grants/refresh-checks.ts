// What both refresh-token formats check alike before any lock (grants/refresh-token.ts for the
// 12-character tokens, grants/refresh-token-v2.ts for v2): the session limits and the OAuth client.
import { OAuthRefusal } from './oauth-refusal.js';
import { apiError, type ApiError } from '../errors.js';
import type { AuditRequest } from '../../db/audit-log.js';
import type { SessionClient } from '../../db/sign-in.js';
import type { ApiRequest } from '../http/types.js';

/**
 * The session limits and not_after, checked on the read before any lock as the original checks them; nothing is
 * written, the session stays until the cleanup removes it (docs/tokens-and-sessions.md#session-limits).
 */
export const SESSION_ENDED = {
  expired: 'refresh_session_expired',
  inactive: 'refresh_session_inactive',
  low_aal: 'refresh_session_low_aal',
  newer_login: 'refresh_session_newer_login',
} as const;

/** POST /oauth/token: the presented token's session must have been issued to the authenticated client. */
export function checkSessionClient(sessionClientId: string | null, clientId: string): void {
  if (!sessionClientId) throw new OAuthRefusal('invalid_client', 'Client authentication not allowed for non-OAuth session');
  if (sessionClientId !== clientId) throw new OAuthRefusal('invalid_client', "Client does not match the session's OAuth client");
}

/** Who asked for the refresh, as the session records it, and the request its audit entries are logged with. */
export type Client = SessionClient & { request: AuditRequest | null };

/** The refresh's client: no (or an empty) User-Agent header is recorded as NULL, as the original records it. */
export const clientOf = (req: ApiRequest): Client => ({ userAgent: req.headers['user-agent'] || null, ip: req.ip || null, request: req });

/**
 * A presented token of no format the service issues. POST /token checks the shape first (400 "Refresh
 * token is not valid"); the OAuth server's /oauth/token (`oauthClientId` set) does not, and answers it as
 * a token it cannot find, as the original does.
 */
export function malformedToken(oauthClientId: string | null): ApiError {
  return apiError(oauthClientId === null ? 'refresh_token_not_valid' : 'refresh_token_not_found');
}
