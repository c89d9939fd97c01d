// Issuing sessions and the token response every grant returns. A new sign-in creates a session, its
// first refresh token (stored hashed), the AMR entry of the method used, and an access token.
// With the custom access token hook on, the hook shapes the claims before signing (docs/hooks.md#custom-access-token).
import type pg from 'pg';
import { apiError } from '../errors.js';
import { tx, type Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { IdentityRow } from '../../db/identities.js';
import type { FactorRow } from '../../db/mfa-factors.js';
import type { AmrRow, SessionRow } from '../../db/sessions.js';
import { findAmrAndIdentities, signIn } from '../../db/sign-in.js';
import { auditEntry, type AuditAction, type AuditActor } from '../../db/audit-log.js';
import { buildAccessTokenClaims, type AccessTokenClaims } from '../auth/jwt.js';
import { newRefreshToken, newUuid, sha256Hex } from '../crypto/tokens.js';
import { encodeV2Token } from '../crypto/refresh-token-v2.js';
import { newSessionKey } from './refresh-key.js';
import { userJson } from '../users/user-json.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { hookCallsOverHttp, type HookRequest } from '../hooks/invoke.js';
import type { HookName } from '../config/types.js';
import { customizeAccessToken } from '../hooks/custom-access-token.js';

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

/** How the token came to be: the hook's authentication_method, the request, and the caller's transaction client if any. */
export interface Issuing {
  method: string;
  req: HookRequest;
  /** the caller's transaction client, which a Postgres function hook then runs on (hooks/pg-transport.ts) */
  q?: Queryable;
}

/**
 * The session as a token response needs it: its id, and when it was created if the access token may have
 * to be capped by SESSIONS_ALLOW_LOW_AAL (a token below aal2: sign-ins and the refresh grant pass it;
 * an MFA verification, always aal2, need not).
 */
export type IssuedSession = Pick<SessionRow, 'id'> & Partial<Pick<SessionRow, 'created_at'>>;

/**
 * SESSIONS_ALLOW_LOW_AAL (docs/tokens-and-sessions.md#session-limits): an aal1 token of a user who has a
 * verified MFA factor expires no later than the session's creation + that duration, the time from which
 * the refresh grant and the bearer checks refuse the session. Null when nothing caps the token. As in the
 * original the token's aal is its AMR's, and the user's highest is aal2 with any verified factor.
 */
function lowAalExpiry(ctx: AppContext, session: IssuedSession, aal: string, factors: FactorRow[]): number | null {
  const window = ctx.config.sessions.allowLowAalSeconds;
  if (!window || aal !== 'aal1' || !session.created_at || !factors.some((f) => f.status === 'verified')) return null;
  return Math.floor(session.created_at.getTime() / 1000 + window);
}

/**
 * Signs an access token for a session from its recorded AMR. `latestExp` caps the token's exp (the
 * hook, if any, sees the capped claims); `expiresIn` is then what is left of it, as the original answers.
 */
export async function signAccessToken(
  ctx: AppContext,
  user: UserRow,
  session: Pick<SessionRow, 'id'>,
  amr: Array<{ method: string; timestamp: number }>,
  issuing: Issuing,
  latestExp: number | null = null,
  oauth: OAuthClaims | null = null,
): Promise<{ token: string; exp: number; expiresIn: number }> {
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
    aal: aalOf(amr),
    amr,
    now: Date.now() / 1000,
    jwt: ctx.config.jwt,
  });
  if (latestExp !== null && latestExp < claims.exp) claims.exp = latestExp;
  if (oauth) {
    claims.client_id = oauth.client_id;
    if (oauth.scope) claims.scope = oauth.scope;
  }
  const expiresIn = claims.exp - claims.iat;
  if (!ctx.config.hooks.customAccessToken.enabled) return { token: await ctx.jwt.sign(claims), exp: claims.exp, expiresIn };
  const shaped = await customizeAccessToken(ctx, { claims, authenticationMethod: issuing.method }, issuing.req, issuing.q);
  // The schema check guarantees an integer exp; expires_at answers the one signed.
  return { token: await ctx.jwt.sign(shaped as unknown as AccessTokenClaims), exp: shaped.exp as number, expiresIn };
}

/** The claims of a token issued to an OAuth server client (docs/oauth-server.md#tokens). */
export interface OAuthClaims {
  client_id: string;
  scope: string;
}

/** aal2 when the session's AMR holds a second factor (docs/mfa.md#assurance-levels). */
const aalOf = (amr: Array<{ method: string }>): 'aal1' | 'aal2' => (amr.some((a) => AAL2_METHODS.has(a.method)) ? 'aal2' : 'aal1');

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
 * A custom access token hook failing here leaves the rotation committed, which is harmless: the same
 * refresh token presented again is answered with the same child (grants/refresh-token.ts).
 */
export async function tokenResponse(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  session: IssuedSession,
  refreshToken: string,
  reads: ResponseReads | undefined,
  req: HookRequest,
  /** what the custom access token hook is told (authentication_method): the refresh grant's, or an MFA factor's */
  method = 'token_refresh',
  oauth: OAuthClaims | null = null,
): Promise<TokenResponse> {
  const { amr, identities, factors } = reads ?? (await findAmrAndIdentities(q, session.id, user.id));
  // q reaches a Postgres function hook: inside a caller's transaction it runs on that connection.
  return answer(ctx, user, session, amr, identities, factors, refreshToken, { method, req, q }, oauth);
}

/** An sso/saml claim names the SSO provider of the user's SSO identity, as the original's amr does (docs/sso-saml.md#sessions). */
function withSsoProvider(amr: AmrRow[], identities: IdentityRow[]): Array<AmrRow & { provider?: string }> {
  const sso = identities.find((i) => i.provider.startsWith('sso:'));
  if (!sso) return amr;
  return amr.map((a) => (a.method === 'sso/saml' ? { ...a, provider: sso.provider.slice('sso:'.length) } : a));
}

async function answer(
  ctx: AppContext,
  user: UserRow,
  session: IssuedSession,
  amr: AmrRow[],
  identities: IdentityRow[],
  factors: FactorRow[],
  refreshToken: string,
  issuing: Issuing,
  oauth: OAuthClaims | null = null,
): Promise<TokenResponse> {
  const latestExp = lowAalExpiry(ctx, session, aalOf(amr), factors);
  const { token, exp, expiresIn } = await signAccessToken(ctx, user, session, withSsoProvider(amr, identities), issuing, latestExp, oauth);
  return {
    access_token: token,
    token_type: 'bearer',
    expires_in: expiresIn,
    expires_at: exp,
    refresh_token: refreshToken,
    user: userJson(user, identities, factors),
  };
}

export interface SignInOptions {
  /**
   * the audit entry of this sign-in, written in the same statement; `ip` is the entry's ip_address, which
   * the original fills for some sign-ins (passkeys: the client's address) and leaves empty for most
   */
  audit?: { actor: AuditActor; action: AuditAction; traits?: Record<string, unknown>; ip?: string };
  /** a new password hash to store with the sign-in (the password grant's upgrade of an older hash) */
  passwordHash?: string;
  /**
   * the stored password the sign-in's password was checked against: a password changed meanwhile makes the
   * sign-in fail as for a user deleted meanwhile (user_not_found), and writes nothing
   */
  checkedPassword?: string | null;
  /** the session's not_after (docs/sso-saml.md#sessions) */
  notAfter?: Date | null;
  /** a session issued to an OAuth server client through /oauth/token */
  oauth?: OAuthClaims;
}

/**
 * Signs the user in with `method` (password, otp, anonymous, ...): a new session and its first token, in
 * one statement (src/db/sign-in.ts) whether `q` is the pool or a caller's transaction.
 */
/**
 * Whether a token may fail after its session's writes: with the custom access token hook on, or a KMS
 * signing key, it is made inside the transaction that writes them, as the original signs inside its own
 * (docs/tokens-and-sessions.md#aws-kms-signing-keys), so its failure leaves nothing behind.
 */
export function signsInTransaction(ctx: Pick<AppContext, 'config' | 'jwt'>): boolean {
  return ctx.config.hooks.customAccessToken.enabled || ctx.jwt.remoteSigning;
}

/**
 * The transaction of a sign-in, which may wait inside it on the network: on the custom access token hook or
 * KMS signing its session (signsInTransaction), or on the HTTP hooks in `waitsOn` (before-user-created). Such
 * a transaction holds one of the thread's hook slots while open, taken before its connection as a sending
 * slot is (delivery/sending-slots.ts), so a stalled hook keeps fewer than half the pool's connections idle in
 * transaction and GET /user, sign-outs and the rest still find one. Apart from the sending slots: a stalled
 * mail relay stops no sign-in, and the two sets together leave a connection free. Without such a wait, a
 * plain transaction.
 */
export async function issuingTx<T>(
  ctx: AppContext,
  fn: (c: pg.PoolClient) => Promise<T>,
  signal: AbortSignal | undefined,
  waitsOn: HookName[] = [],
): Promise<T> {
  const waits = signsInTransaction(ctx) || waitsOn.some((hook) => hookCallsOverHttp(ctx, hook));
  if (!waits) return tx(ctx.db, fn, signal);
  const release = await ctx.hookSlots.acquire(signal);
  try {
    return await tx(ctx.db, fn, signal);
  } finally {
    release();
  }
}

export async function issueSession(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  method: string,
  req: ApiRequest,
  options: SignInOptions = {},
): Promise<TokenResponse> {
  // A signature that failed after a sign-in committed on its own would leave a session nobody holds.
  if (signsInTransaction(ctx) && !('release' in q)) {
    return issuingTx(ctx, (c) => issueSession(ctx, c, user, method, req, options), req.signal);
  }
  const { audit, passwordHash, checkedPassword, notAfter, oauth } = options;
  // Under SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2 the session is a v2 one: no token row, its first
  // token (counter 0) signed with a key of its own (docs/tokens-and-sessions.md#v2-refresh-tokens).
  const v2 = ctx.config.security.refreshTokenAlgorithmVersion === 2 ? newV2Session(ctx) : null;
  const refreshToken = v2 ? v2.token : newRefreshToken();
  const signedIn = await signIn(q, {
    userId: user.id,
    method,
    // NULL, not '', without a User-Agent header (or a client address): what the original stores.
    userAgent: req.headers['user-agent'] || null,
    ip: req.ip || null,
    refreshTokenHash: v2 ? null : sha256Hex(refreshToken),
    v2,
    passwordHash,
    checkedPassword,
    notAfter,
    audit: audit ? auditEntry(req, audit.actor, audit.action, audit.traits, audit.ip) : null,
    oauthClientId: oauth?.client_id ?? null,
    scopes: oauth?.scope ?? null,
  });
  // Deleted, or soft-deleted, by a concurrent request since the caller found the user (or, for a checked
  // password, that password replaced since).
  if (!signedIn) throw apiError('user_not_found');
  const session = { id: signedIn.sessionId, created_at: signedIn.sessionCreatedAt };
  return answer(
    ctx,
    signedIn.user,
    session,
    signedIn.amr,
    signedIn.identities,
    signedIn.factors,
    refreshToken,
    { method, req, q },
    oauth ?? null,
  );
}

/** A v2 session's id, its key as stored, and its first token. */
function newV2Session(ctx: AppContext): { sessionId: string; storedKey: string; token: string } {
  const sessionId = newUuid();
  const { key, stored } = newSessionKey(ctx.config, sessionId);
  return { sessionId, storedKey: stored, token: encodeV2Token(sessionId, 0n, key) };
}
