// The {user_id} of /admin/users/{user_id} routes (docs/api.md#get-adminusersuser_id): a malformed id is a 404
// validation_failed and an unknown one a 404 user_not_found, before any other work. Any spelling the
// original's UUID reading takes is looked up by its canonical form.
import { apiError } from '../errors.js';
import { findUserById, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import type { ApiRequest } from '../http/types.js';
import { canonicalUuid } from '../uuid-text.js';

export function userIdParam(req: ApiRequest): string {
  const id = canonicalUuid(req.params.user_id);
  if (!id) throw apiError('admin_user_id');
  return id;
}

export async function loadUser(q: Queryable, req: ApiRequest): Promise<UserRow> {
  const user = await findUserById(q, userIdParam(req));
  if (!user) throw apiError('admin_user_not_found');
  return user;
}
