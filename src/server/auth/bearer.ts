// Bearer authentication for user endpoints (docs/api.md#who-may-call): the checks run in the original's order,
// each with its status, code and message, because clients branch on them.
import { apiError } from '../errors.js';
import { findUserSession, findUserSessionIdentities, type UserSession } from '../../db/user-session.js';
import { JwtError, type VerifiedClaims } from './jwt.js';
import { isBanned } from '../users/user-json.js';
import { sessionPolicy } from '../sessions/policy.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import type { Authenticated, AuthenticatedWithIdentities } from './principal.js';

export type { Authenticated, AuthenticatedWithIdentities } from './principal.js';

/**
 * The original's pattern, after its HTTP reader trims spaces and tabs off the value: the scheme in any case,
 * exactly one space, then a token with no whitespace (Go's \S: not tab, newline, form feed, return or space,
 * so a no-break space is part of the token). Two spaces, a tab or a Unicode space after the scheme is 401
 * no_authorization there, so it is here too (test/bearer-header.test.ts).
 */
const BEARER = /^[ \t]*bearer ([^\t\n\f\r ]+)[ \t]*$/i;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The verified claims of the request's bearer token (401 no_authorization / 403 bad_jwt). */
export async function bearerClaims(req: ApiRequest, ctx: AppContext): Promise<VerifiedClaims> {
  const match = BEARER.exec(req.headers.authorization ?? '');
  if (!match) throw apiError('no_authorization');
  try {
    return await ctx.jwt.verify(match[1]);
  } catch (err) {
    if (err instanceof JwtError) throw apiError('bad_jwt', err.message);
    throw err;
  }
}

/** The bearer's user and session, checked: one round trip to the database (src/db/user-session.ts). */
export function authenticate(req: ApiRequest, ctx: AppContext): Promise<Authenticated> {
  return authenticated(req, ctx, false);
}

/**
 * authenticate() for POST /logout: a session the limits or its not_after have ended may still be signed out,
 * as the original lets it, so that "sign out everywhere" from such a session ends the user's others too.
 */
export function authenticateSigningOut(req: ApiRequest, ctx: AppContext): Promise<Authenticated> {
  return authenticated(req, ctx, true);
}

async function authenticated(req: ApiRequest, ctx: AppContext, endedAllowed: boolean): Promise<Authenticated> {
  const claims = await bearerClaims(req, ctx);
  const claim = subjectOf(claims, req, ctx);
  const found = await findUserSession(ctx.db, claims.sub!, lookedUp(claim), sessionPolicy(ctx.config));
  return checked(claims, claim, found, endedAllowed);
}

/** authenticate() and the user's identities, still in one round trip (GET /user). */
export async function authenticateWithIdentities(req: ApiRequest, ctx: AppContext): Promise<AuthenticatedWithIdentities> {
  const claims = await bearerClaims(req, ctx);
  const claim = subjectOf(claims, req, ctx);
  const found = await findUserSessionIdentities(ctx.db, claims.sub!, lookedUp(claim), sessionPolicy(ctx.config));
  const { user, session } = checked(claims, claim, found);
  // Built once rather than spread from checked()'s answer: this is every GET /user.
  return { claims, user, session, identities: found!.identities, factors: found!.factors }; // checked() threw if found was null
}

/** What a token's session_id asks for: a session to look up, none at all, or a claim that is no UUID. */
export type SessionClaim = string | typeof SESSIONLESS | typeof NOT_A_UUID;
const SESSIONLESS = Symbol('sessionless');
const NOT_A_UUID = Symbol('not a UUID');

/**
 * Checks the claims' subject and audience (their sub is then the user to look up) and reads the session
 * claim. A token without session_id (absent, null, empty or the nil UUID) belongs to no session, as tokens an
 * application signs itself with the JWT secret often do: the user is authenticated without one, as the
 * original does (docs/api.md#who-may-call). A session_id that is no UUID is refused, but only in
 * checked(), after user_not_found, as the original orders them (test/authenticate-order.test.ts).
 * Synchronous: one async layer fewer per request.
 */
function subjectOf(claims: VerifiedClaims, req: ApiRequest, ctx: AppContext): SessionClaim {
  if (!claims.sub) throw apiError('bad_jwt_missing_sub');
  // 403 like every other bad token (the original answers 400 here; docs/differences.md#security).
  if (!UUID.test(claims.sub)) throw apiError('bad_jwt_sub');
  if (!audienceMatches(claims.aud, requestAudience(req, ctx))) {
    throw apiError('audience_mismatch');
  }
  const claim = sessionClaim(claims);
  if (claim === SESSIONLESS && isIdToken(claims)) throw apiError('bad_jwt_id_token');
  return claim;
}

/**
 * An ID token of the OAuth server (oauth-server/id-token.ts): addressed to the client it names, and of no
 * session. It is signed with the same key as access tokens, so with `X-JWT-AUD` set to the client's id it
 * would otherwise pass as a sessionless user token: a credential for the whole account, handed to the
 * relying party, that no sign-out or revoked grant could end (the original accepts it;
 * docs/oauth-server.md#id-tokens).
 */
function isIdToken(claims: VerifiedClaims): boolean {
  const clientId = (claims as { client_id?: unknown }).client_id;
  return typeof clientId === 'string' && audienceMatches(claims.aud, clientId);
}

/**
 * The session a token names, read as the original reads it, for user and admin tokens alike: absent, null
 * (the original reads the claim into a string, where null becomes empty), empty or the nil UUID names none.
 */
export function sessionClaim(claims: VerifiedClaims): SessionClaim {
  const claimed = claims.session_id;
  if (claimed === undefined || claimed === null || claimed === '' || claimed === ZERO_UUID) return SESSIONLESS;
  return typeof claimed === 'string' && UUID.test(claimed) ? claimed : NOT_A_UUID;
}

/** The session id to look up, or null when no session can match. */
const lookedUp = (claim: SessionClaim): string | null => (typeof claim === 'string' ? claim : null);

/**
 * The token must be for the audience this request works in: X-JWT-AUD or JWT_AUD, never the token's own
 * (the original compared a token's aud with itself, so any aud passed; test/access-token-checks.test.ts).
 */
function audienceMatches(aud: unknown, expected: string): boolean {
  return Array.isArray(aud) ? aud.includes(expected) : aud === expected;
}

function checked(claims: VerifiedClaims, claim: SessionClaim, found: UserSession | null, endedAllowed = false): Authenticated {
  if (!found) throw apiError('user_not_found');
  if (claim === NOT_A_UUID) throw apiError('bad_jwt_session_id');
  if (claim === SESSIONLESS) {
    if (isBanned(found.user)) throw apiError('user_banned');
    return { claims, user: found.user, session: null };
  }
  if (!found.session) throw apiError('session_not_found');
  if (isBanned(found.user)) throw apiError('user_banned');
  // A session the limits or its not_after have ended is refused at once, not only at its next refresh
  // (docs/tokens-and-sessions.md#session-limits): the answer the original gives an admin bearer.
  if (found.sessionEnded && !endedAllowed) throw apiError('session_expired');
  return { claims, user: found.user, session: found.session };
}

/**
 * For an admin's token that names a session (a user whose role is an admin role): the user and the session
 * must still exist, the user must not be banned, and the session must not have ended, checked in the
 * original's order with its answers (user_not_found, session_not_found, user_banned, session_expired). A token
 * naming no session is not looked up.
 */
export async function requireTokenSession(claims: VerifiedClaims, ctx: AppContext): Promise<void> {
  const claim = sessionClaim(claims);
  if (claim === SESSIONLESS) return;
  if (!claims.sub) throw apiError('bad_jwt_missing_sub');
  if (!UUID.test(claims.sub)) throw apiError('bad_jwt_sub');
  const found = await findUserSession(ctx.db, claims.sub, lookedUp(claim), sessionPolicy(ctx.config));
  if (!found) throw apiError('user_not_found');
  if (claim === NOT_A_UUID) throw apiError('bad_jwt_session_id');
  if (!found.session) throw apiError('session_not_found');
  // A ban ends admin rights as it ends a user's own (the original checks it on user tokens only): otherwise an
  // admin-role user banned for misuse keeps full admin access until the token expires.
  if (isBanned(found.user)) throw apiError('user_banned');
  // not_after, the time limits and SESSIONS_ALLOW_LOW_AAL apply here, as in the original; SESSIONS_SINGLE_PER_USER does not.
  if (found.sessionEnded && found.sessionEnded !== 'newer_login') throw apiError('session_expired');
}

/** The audience of a request: X-JWT-AUD, else JWT_AUD (docs/tokens-and-sessions.md#audience, without the token's own aud). */
export function requestAudience(req: ApiRequest, ctx: AppContext): string {
  return req.headers['x-jwt-aud'] || ctx.config.jwt.aud;
}
