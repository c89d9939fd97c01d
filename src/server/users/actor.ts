// The audit log's view of a user acting (REFERENCE §14.4): phone if set, else email, as username.
import type { UserRow } from '../../db/users.js';
import type { AuditActor } from '../../db/audit-log.js';

export const actorOf = (user: UserRow): AuditActor => ({ id: user.id, username: user.phone || user.email || '',
  name: typeof user.raw_user_meta_data?.full_name === 'string' ? user.raw_user_meta_data.full_name : undefined });
