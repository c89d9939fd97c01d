// The {user_id} of /admin/users/{user_id} routes (docs/api.md#get-adminusersuser_id): a malformed id is a 404
// validation_failed and an unknown one a 404 user_not_found, before any other work.
import { apiError } from '../errors.js';
import { findUserById, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import type { ApiRequest } from '../http/types.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function userIdParam(req: ApiRequest): string {
  const id = req.params.user_id ?? '';
  if (!UUID.test(id)) throw apiError('admin_user_id');
  return id.toLowerCase();
}

export async function loadUser(q: Queryable, req: ApiRequest): Promise<UserRow> {
  const user = await findUserById(q, userIdParam(req));
  if (!user) throw apiError('admin_user_not_found');
  return user;
}
