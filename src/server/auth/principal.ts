// Who is calling: what the dispatcher hands a guarded handler once its guard has passed. Types only, so
// the HTTP layer's types can name them without importing the checks that produce them.
import type { AuditActor } from '../../db/audit-log.js';
import type { IdentityRow } from '../../db/identities.js';
import type { SessionRow } from '../../db/sessions.js';
import type { UserRow } from '../../db/users.js';
import type { FactorRow } from '../../db/mfa-factors.js';
import type { VerifiedClaims } from './jwt.js';

/**
 * A user (guard 'user') with the live session the token names, or null for a token that names none (signed
 * by an application itself; docs/api.md#who-may-call). Handlers that need a session say so
 * (requireSession, auth/session-required.ts).
 */
export interface Authenticated {
  claims: VerifiedClaims;
  user: UserRow;
  session: Pick<SessionRow, 'id'> | null;
}

/** The same, with the user's identities and MFA factors read in the same statement (guard 'user+identities'). */
export type AuthenticatedWithIdentities = Authenticated & { identities: IdentityRow[]; factors: FactorRow[] };

/** A bearer whose role is an admin role (guard 'admin'), audited as a pseudo-user named after the role. */
export interface Admin {
  claims: VerifiedClaims;
  actor: AuditActor;
}

/** The per-client rate-limit buckets (limits/per-client.ts). */
export const CLIENT_BUCKETS = [
  'token',
  'verify',
  'otp',
  'magiclink',
  'recover',
  'resend',
  'user_update',
  'signup',
  'anonymous',
  'mfa_challenge',
  'mfa_verify',
  'passkey',
  'web3',
  'sso',
  'saml_assertion',
  'oauth_client_register',
] as const;
export type ClientBucket = (typeof CLIENT_BUCKETS)[number];
