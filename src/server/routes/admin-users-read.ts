// GET /admin/users (one page, newest first by default; by page number, or by cursor when the experimental
// switch allows) and GET /admin/users/{user_id} (docs/api.md#get-adminusers).
// The list does not load identities: they render as null there, as in the original.
import { listUsers, listUsersAfter } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { findFactorsByUser } from '../../db/mfa-factors.js';
import { userJson } from '../users/user-json.js';
import { adminAudience, type Admin } from '../auth/admin.js';
import { loadUser } from '../admin/load-user.js';
import { paginationHeaders, parseCreatedAtSort, parsePage } from '../admin/pagination.js';
import { cursorLinkHeader, encodeCursor, parseCursorParams, useCursorPagination } from '../admin/cursor-pagination.js';
import type { GuardedHandler } from '../http/types.js';

export const adminListUsers: GuardedHandler<Admin> = async (req, ctx) => {
  const aud = adminAudience(req, ctx);
  // The sort is checked first in both modes, so a bad sort is reported before a bad page or cursor.
  const ascending = parseCreatedAtSort(req.query);
  const filter = req.query.get('filter') ?? '';
  if (useCursorPagination(ctx.config.experimental.cursorPaginationEnabled, req.query)) {
    const { limit, after } = parseCursorParams(req.query);
    const { users, next } = await listUsersAfter(ctx.db, { aud, filter, ascending, limit, after });
    const nextCursor = next && encodeCursor(next);
    return {
      headers: nextCursor ? cursorLinkHeader(req, nextCursor) : undefined,
      body: {
        users: users.map((u) => userJson(u, null)),
        aud,
        pagination: nextCursor ? { next_cursor: nextCursor, has_more: true } : { has_more: false },
      },
    };
  }
  const page = parsePage(req.query);
  const { users, total } = await listUsers(ctx.db, { aud, ...page, filter, ascending });
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
