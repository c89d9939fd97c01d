// The user a send hook gets (docs/hooks.md#send-email, #send-sms): as GET /user shows it, identities always
// (an empty list when there are none) and factors when there are any, as the original's user, read with
// them, marshals. Read on the send's own transaction when it has one, so rows it wrote are seen.
import type { Queryable } from '../../db/pool.js';
import { findIdentitiesAndFactors } from '../../db/user-identities-factors.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import { userJson } from '../users/user-json.js';

export async function hookUserJson(ctx: Pick<AppContext, 'db'>, user: UserRow, q?: Queryable): Promise<Record<string, unknown>> {
  const { identities, factors } = await findIdentitiesAndFactors(q ?? ctx.db, user.id);
  return userJson(user, identities, factors);
}
