// What both refresh-token formats check alike before any lock (grants/refresh-token.ts for the
// 12-character tokens, grants/refresh-token-v2.ts for v2): the session limits and the OAuth client.
import { OAuthRefusal } from './oauth-refusal.js';
import type { AuditRequest } from '../../db/audit-log.js';

/**
 * The session limits, checked on the read before any lock as the original checks them; nothing is
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
export type Client = { userAgent: string; ip: string; request: AuditRequest | null };
