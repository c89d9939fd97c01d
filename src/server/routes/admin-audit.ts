// GET /admin/audit (docs/users-and-audit.md#audit-log): the audit log, newest first, paged like the user list, filtered by
// `query=author:<x>|action:<x>|type:<x>` (a case-insensitive substring of those payload fields).
import { apiError } from '../errors.js';
import { listAuditEntries } from '../../db/audit-log.js';
import { rfc3339Nano } from '../../db/timestamps.js';
import { paginationHeaders, parsePage } from '../admin/pagination.js';
import type { Admin } from '../auth/admin.js';
import type { GuardedHandler } from '../http/types.js';

const SCOPES: Record<string, string[]> = { author: ['actor_username', 'actor_name'], action: ['action'], type: ['log_type'] };

export const adminAuditLog: GuardedHandler<Admin> = async (req, ctx) => {
  const page = parsePage(req.query);
  const query = req.query.get('query') ?? '';
  let fields: string[] = [];
  let value = '';
  if (query) {
    const at = query.indexOf(':');
    fields = SCOPES[at < 0 ? query : query.slice(0, at)] ?? [];
    if (at < 0 || !fields.length) throw apiError('admin_audit_scope', `Invalid query scope: ${query}`);
    value = query.slice(at + 1);
  }
  const { entries, total } = await listAuditEntries(ctx.db, { ...page, fields, value });
  return {
    headers: paginationHeaders(req, page, total),
    // The original's fields; its rows' instance_id (of its multi-tenant past) is not answered there either.
    body: entries.map((e) => ({
      id: e.id,
      payload: e.payload,
      created_at: rfc3339Nano(e.created_at),
      ip_address: e.ip_address,
    })),
  };
};
