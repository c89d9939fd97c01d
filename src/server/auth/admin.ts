// Admin authentication (docs/tokens-and-sessions.md#admin-role-check): a verified bearer JWT whose `role`
// claim is one of JWT_ADMIN_ROLES. No `sub` is needed: a service_role key has none. Admin actions are
// audited under a pseudo-user with the zero UUID, named after the role (docs/tokens-and-sessions.md#admin-role-check).
import { apiError } from '../errors.js';
import { bearerClaims, requireTokenSession } from './bearer.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import type { Admin } from './principal.js';

export type { Admin } from './principal.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * 401 no_authorization without a bearer token, 403 bad_jwt for a bad one, 403 not_admin for any other role.
 * A token that belongs to a session (a user whose role is an admin role) is refused once that session or
 * its user is gone, or the session limits ended it, so signing out also ends its admin rights
 * (docs/tokens-and-sessions.md#admin-role-check), with the original's answers (bearer.ts).
 */
export async function requireAdmin(req: ApiRequest, ctx: AppContext): Promise<Admin> {
  const claims = await bearerClaims(req, ctx);
  await requireTokenSession(claims, ctx);
  const role = typeof claims.role === 'string' ? claims.role : '';
  if (!role || !ctx.config.jwt.adminRoles.includes(role)) throw apiError('not_admin');
  return { claims, actor: { id: ZERO_UUID, username: role } };
}

/** The audience admin requests work in: X-JWT-AUD, else JWT_AUD; an admin token's own aud is ignored (docs/tokens-and-sessions.md#audience). */
export function adminAudience(req: ApiRequest, ctx: AppContext): string {
  return req.headers['x-jwt-aud'] || ctx.config.jwt.aud;
}
