// Issuing sessions and the token response every grant returns. A new sign-in creates a session, its
// first refresh token (stored hashed), the AMR entry of the method used, and an access token.
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { IdentityRow } from '../../db/identities.js';
import type { FactorRow } from '../../db/mfa-factors.js';
import type { AmrRow, SessionRow } from '../../db/sessions.js';
import { findAmrAndIdentities, signIn } from '../../db/sign-in.js';
import { auditPayload, type AuditAction, type AuditActor } from '../../db/audit-log.js';
import { buildAccessTokenClaims } from '../auth/jwt.js';
import { newRefreshToken, sha256Hex } from '../crypto/tokens.js';
import { userJson } from '../users/user-json.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: Record<string, unknown>;
  [extra: string]: unknown;
}

const AAL2_METHODS = new Set(['totp', 'mfa/phone', 'mfa/webauthn']);

/** Signs an access token for a session from its recorded AMR. */
export async function signAccessToken(
  ctx: AppContext,
  user: UserRow,
  session: Pick<SessionRow, 'id'>,
  amr: Array<{ method: string; timestamp: number }>,
): Promise<{ token: string; exp: number }> {
  const claims = buildAccessTokenClaims({
    user: {
      id: user.id,
      aud: user.aud,
      email: user.email,
      phone: user.phone,
      role: user.role,
      app_metadata: user.raw_app_meta_data,
      user_metadata: user.raw_user_meta_data,
      is_anonymous: user.is_anonymous,
    },
    sessionId: session.id,
    aal: amr.some((a) => AAL2_METHODS.has(a.method)) ? 'aal2' : 'aal1',
    amr,
    now: Date.now() / 1000,
    jwt: ctx.config.jwt,
  });
  return { token: await ctx.jwt.sign(claims), exp: claims.exp };
}

/** What a token response reads besides the user: the session's AMR and the user's identities. */
export interface ResponseReads {
  amr: AmrRow[];
  identities: IdentityRow[];
  /** the user's MFA factors, listed in the response's user as the original does */
  factors: FactorRow[];
}

/**
 * The token response for an existing session (the refresh grant): its AMR and the identities in one read,
 * or none when the caller's own statement already returned them (`reads`: the refresh grant's rotation).
 */
export async function tokenResponse(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  session: Pick<SessionRow, 'id'>,
  refreshToken: string,
  reads?: ResponseReads,
): Promise<TokenResponse> {
  const { amr, identities, factors } = reads ?? (await findAmrAndIdentities(q, session.id, user.id));
  return answer(ctx, user, session, amr, identities, factors, refreshToken);
}

async function answer(
  ctx: AppContext,
  user: UserRow,
  session: Pick<SessionRow, 'id'>,
  amr: AmrRow[],
  identities: IdentityRow[],
  factors: FactorRow[],
  refreshToken: string,
): Promise<TokenResponse> {
  const { token, exp } = await signAccessToken(ctx, user, session, amr);
  return {
    access_token: token,
    token_type: 'bearer',
    expires_in: ctx.config.jwt.exp,
    expires_at: exp,
    refresh_token: refreshToken,
    user: userJson(user, identities, factors),
  };
}

export interface SignInOptions {
  /** the audit entry of this sign-in, written in the same statement */
  audit?: { actor: AuditActor; action: AuditAction; traits?: Record<string, unknown> };
  /** a new password hash to store with the sign-in (the password grant's upgrade of an older hash) */
  passwordHash?: string;
}

/**
 * Signs the user in with `method` (password, otp, anonymous, ...): a new session and its first token, in
 * one statement (src/db/sign-in.ts) whether `q` is the pool or a caller's transaction.
 */
export async function issueSession(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  method: string,
  req: ApiRequest,
  options: SignInOptions = {},
): Promise<TokenResponse> {
  const refreshToken = newRefreshToken();
  const { audit, passwordHash } = options;
  const signedIn = await signIn(q, {
    userId: user.id,
    method,
    userAgent: req.headers['user-agent'] ?? '',
    ip: req.ip,
    refreshTokenHash: sha256Hex(refreshToken),
    signedInAt: new Date(),
    passwordHash,
    audit: audit ? auditPayload(audit.actor, audit.action, audit.traits) : null,
  });
  return answer(ctx, signedIn.user, { id: signedIn.sessionId }, signedIn.amr, signedIn.identities, signedIn.factors, refreshToken);
}
