// GET /admin/users (one page, newest first by default) and GET /admin/users/{user_id} (docs/api.md#get-adminusers).
// The list does not load identities: they render as null there, as in the original.
import { listUsers } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { findFactorsByUser } from '../../db/mfa-factors.js';
import { userJson } from '../users/user-json.js';
import { adminAudience, type Admin } from '../auth/admin.js';
import { loadUser } from '../admin/load-user.js';
import { paginationHeaders, parseCreatedAtSort, parsePage } from '../admin/pagination.js';
import type { GuardedHandler } from '../http/types.js';

export const adminListUsers: GuardedHandler<Admin> = async (req, ctx) => {
  const aud = adminAudience(req, ctx);
  const page = parsePage(req.query);
  const ascending = parseCreatedAtSort(req.query);
  const { users, total } = await listUsers(ctx.db, { aud, ...page, filter: req.query.get('filter') ?? '', ascending });
  return {
    headers: paginationHeaders(req, page, total),
    body: { users: users.map((u) => userJson(u, null)), aud },
  };
};

export const adminGetUser: GuardedHandler<Admin> = async (req, ctx) => {
  const user = await loadUser(ctx.db, req);
  const [identities, factors] = await Promise.all([findIdentitiesByUser(ctx.db, user.id), findFactorsByUser(ctx.db, user.id)]);
  return { body: userJson(user, identities, factors) };
};
