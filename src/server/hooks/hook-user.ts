// The user a send hook gets (docs/hooks.md#send-email, #send-sms): as GET /user shows it, identities always
// (an empty list when there are none) and factors when there are any, as the original's user, read with
// them, marshals. Read on the send's own transaction when it has one, so rows it wrote are seen; a send is
// no hot path, so the two small reads are worth a payload hooks can rely on.
import { findIdentitiesByUser } from '../../db/identities.js';
import { findFactorsByUser } from '../../db/mfa-factors.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import { userJson } from '../users/user-json.js';

export async function hookUserJson(ctx: Pick<AppContext, 'db'>, user: UserRow, q?: Queryable): Promise<Record<string, unknown>> {
  const db = q ?? ctx.db;
  const identities = await findIdentitiesByUser(db, user.id);
  const factors = await findFactorsByUser(db, user.id);
  return userJson(user, identities, factors);
}
