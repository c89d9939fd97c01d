// The audit log's view of a user acting (docs/users-and-audit.md#audit-log): phone if set, else email, as username.
import type { UserRow } from '../../db/users.js';
import type { AuditActor } from '../../db/audit-log.js';

/** The user columns an audit row's actor is made of (the refresh grant has them before it reads the whole row). */
export type ActingUser = Pick<UserRow, 'id' | 'phone' | 'email' | 'raw_user_meta_data' | 'is_sso_user'>;

export const actorOf = (user: ActingUser): AuditActor => ({
  id: user.id,
  username: user.phone || user.email || '',
  viaSso: user.is_sso_user,
  name: typeof user.raw_user_meta_data?.full_name === 'string' ? user.raw_user_meta_data.full_name : undefined,
});
