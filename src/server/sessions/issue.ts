// Issuing sessions and the token response every grant returns. A new sign-in creates a session, its
// first refresh token (stored hashed), the AMR entry of the method used, and an access token.
import type { Queryable } from '../../db/pool.js';
import { updateUser, type UserRow } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { insertSession, listAmr, recordAmr, type SessionRow } from '../../db/sessions.js';
import { insertRefreshToken } from '../../db/refresh-tokens.js';
import { buildAccessTokenClaims } from '../jwt.js';
import { newRefreshToken, sha256Hex } from '../tokens.js';
import { userJson } from '../users/user-json.js';
import type { AppContext } from '../app.js';
import type { ApiRequest } from '../types.js';

export interface TokenResponse {
  access_token: string; token_type: 'bearer'; expires_in: number; expires_at: number; refresh_token: string;
  user: Record<string, unknown>;
  [extra: string]: unknown;
}

const AAL2_METHODS = new Set(['totp', 'mfa/phone', 'mfa/webauthn']);

/** Signs an access token for a session from its recorded AMR. */
export async function signAccessToken(ctx: AppContext, user: UserRow, session: Pick<SessionRow, 'id'>, amr: Array<{ method: string; timestamp: number }>): Promise<{ token: string; exp: number }> {
  const claims = buildAccessTokenClaims({
    user: { id: user.id, aud: user.aud, email: user.email, phone: user.phone, role: user.role,
      app_metadata: user.raw_app_meta_data, user_metadata: user.raw_user_meta_data, is_anonymous: user.is_anonymous },
    sessionId: session.id,
    aal: amr.some((a) => AAL2_METHODS.has(a.method)) ? 'aal2' : 'aal1',
    amr,
    now: Date.now() / 1000,
    jwt: ctx.config.jwt,
  });
  return { token: await ctx.jwt.sign(claims), exp: claims.exp };
}

export async function tokenResponse(ctx: AppContext, q: Queryable, user: UserRow, session: Pick<SessionRow, 'id'>, refreshToken: string): Promise<TokenResponse> {
  const [amr, identities] = await Promise.all([listAmr(q, session.id), findIdentitiesByUser(q, user.id)]);
  const { token, exp } = await signAccessToken(ctx, user, session, amr);
  return {
    access_token: token, token_type: 'bearer', expires_in: ctx.config.jwt.exp, expires_at: exp,
    refresh_token: refreshToken, user: userJson(user, identities),
  };
}

/** Signs the user in with `method` (password, otp, anonymous, ...): a new session and its first token. */
export async function issueSession(ctx: AppContext, q: Queryable, user: UserRow, method: string, req: ApiRequest): Promise<TokenResponse> {
  const session = await insertSession(q, { userId: user.id, userAgent: req.headers['user-agent'] ?? '', ip: req.ip });
  const refreshToken = newRefreshToken();
  await insertRefreshToken(q, { tokenHash: sha256Hex(refreshToken), userId: user.id, sessionId: session.id });
  await recordAmr(q, session.id, method);
  const signedIn = await updateUser(q, user.id, { last_sign_in_at: new Date() });
  return tokenResponse(ctx, q, signedIn, session, refreshToken);
}
