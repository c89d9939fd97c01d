// Bearer authentication for user endpoints (REFERENCE §1.5): the checks run in the original's order,
// each with its status, code and message, because clients branch on them.
import { ApiError } from './errors.js';
import { findUserById, type UserRow } from '../db/users.js';
import { findSession, type SessionRow } from '../db/sessions.js';
import { JwtError, type VerifiedClaims } from './jwt.js';
import { isBanned } from './users/user-json.js';
import type { AppContext } from './app.js';
import type { ApiRequest } from './types.js';

const BEARER = /^bearer\s+(\S+)\s*$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Authenticated { claims: VerifiedClaims; user: UserRow; session: SessionRow }

/** The verified claims of the request's bearer token (401 no_authorization / 403 bad_jwt). */
export async function bearerClaims(req: ApiRequest, ctx: AppContext): Promise<VerifiedClaims> {
  const match = BEARER.exec(req.headers.authorization ?? '');
  if (!match) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
  try {
    return await ctx.jwt.verify(match[1]);
  } catch (err) {
    if (err instanceof JwtError) throw new ApiError(403, 'bad_jwt', err.message);
    throw err;
  }
}

export async function authenticate(req: ApiRequest, ctx: AppContext): Promise<Authenticated> {
  const claims = await bearerClaims(req, ctx);
  if (!claims.sub) throw new ApiError(403, 'bad_jwt', 'invalid claim: missing sub claim');
  if (!UUID.test(claims.sub)) throw new ApiError(400, 'bad_jwt', 'invalid claim: sub claim must be a UUID');
  const user = await findUserById(ctx.db, claims.sub);
  if (!user) throw new ApiError(403, 'user_not_found', 'User from sub claim in JWT does not exist');
  if (typeof claims.session_id !== 'string' || !UUID.test(claims.session_id)) {
    throw new ApiError(403, 'bad_jwt', 'invalid claim: session_id claim must be a UUID');
  }
  const session = await findSession(ctx.db, claims.session_id);
  if (!session) throw new ApiError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
  if (isBanned(user)) throw new ApiError(403, 'user_banned', 'User is banned');
  return { claims, user, session };
}

/** The audience of a request: X-JWT-AUD, else the token's, else JWT_AUD (REFERENCE §1.6). */
export function requestAudience(req: ApiRequest, ctx: AppContext, claims?: VerifiedClaims): string {
  const tokenAud = typeof claims?.aud === 'string' ? claims.aud : undefined;
  return req.headers['x-jwt-aud'] || tokenAud || ctx.config.jwt.aud;
}
