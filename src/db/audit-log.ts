// audit_log_entries: one row per auditable action (docs/users-and-audit.md#audit-log), and the log line
// `audit_event` each entry also gets, as the original writes one. AUDIT_LOG_DISABLE_POSTGRES leaves the
// rows out and keeps the lines: the log is then the only trail.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { afterCommit, type Queryable } from './pool.js';

export type AuditAction =
  | 'login'
  | 'logout'
  | 'invite_accepted'
  | 'user_signedup'
  | 'user_invited'
  | 'user_deleted'
  | 'token_revoked'
  | 'token_refreshed'
  | 'user_modified'
  | 'user_recovery_requested'
  | 'user_reauthenticate_requested'
  | 'user_confirmation_requested'
  | 'user_repeated_signup'
  | 'user_updated_password'
  | 'factor_in_progress'
  | 'factor_unenrolled'
  | 'challenge_created'
  | 'verification_attempted'
  | 'factor_deleted'
  | 'factor_updated'
  | 'passkey_created'
  | 'passkey_updated'
  | 'passkey_deleted'
  | 'identity_linked'
  | 'identity_unlinked';

const LOG_TYPE: Record<AuditAction, string> = {
  login: 'account',
  logout: 'account',
  invite_accepted: 'account',
  user_signedup: 'team',
  user_invited: 'team',
  user_deleted: 'team',
  token_revoked: 'token',
  token_refreshed: 'token',
  user_modified: 'user',
  user_recovery_requested: 'user',
  user_reauthenticate_requested: 'user',
  user_confirmation_requested: 'user',
  user_repeated_signup: 'user',
  user_updated_password: 'user',
  factor_in_progress: 'factor',
  factor_unenrolled: 'factor',
  challenge_created: 'factor',
  verification_attempted: 'factor',
  factor_deleted: 'factor',
  factor_updated: 'factor',
  passkey_created: 'user',
  passkey_updated: 'user',
  passkey_deleted: 'user',
  identity_linked: 'user',
  identity_unlinked: 'user',
};

export interface AuditActor {
  id: string;
  username: string;
  /** the acting user is an SSO user (users.is_sso_user): the payload's actor_via_sso */
  viaSso?: boolean;
  name?: string;
}

export type AuditPayload = Record<string, unknown>;

/**
 * The payload of one audit row. Built here only, so the statements that write an entry alongside other
 * rows (the sign-in in sign-in.ts, the rotation in refresh-tokens.ts) write the same shape as writeAudit.
 */
export function auditPayload(actor: AuditActor, action: AuditAction, traits?: Record<string, unknown>): AuditPayload {
  const payload: AuditPayload = {
    actor_id: actor.id,
    actor_via_sso: actor.viaSso === true,
    actor_username: actor.username,
    action,
    log_type: LOG_TYPE[action],
  };
  if (actor.name) payload.actor_name = actor.name;
  if (traits) payload.traits = traits;
  return payload;
}

/**
 * The request an entry is written for. Its id and User-Agent go on the entry's log line, and the payload
 * of its last entry on the request's own line as `auth_event` (`audited`), as the original logs them
 * (docs/users-and-audit.md#audit-log). An API request (http/types.ts) is one; background jobs have none.
 */
export interface AuditRequest {
  requestId: string;
  headers: Record<string, string>;
  audited?(payload: AuditPayload): void;
}

/** One entry: its id (the row's, and the log line's audit_log_id), payload, client address and request. */
export interface AuditEntry {
  id: string;
  payload: AuditPayload;
  ip: string;
  request?: AuditRequest | null;
}

export function auditEntry(
  request: AuditRequest | null,
  actor: AuditActor,
  action: AuditAction,
  traits?: Record<string, unknown>,
  ip = '',
): AuditEntry {
  return { id: randomUUID(), payload: auditPayload(actor, action, traits), ip, request };
}

/**
 * Where entries go, set once per thread from the configuration (configureAuditTrail, at the context's
 * creation): the module-level state spares the fifty writers of entries a parameter each.
 */
interface AuditTrail {
  log: Logger | null;
  toDatabase: boolean;
}
let trail: AuditTrail = { log: null, toDatabase: true };

export function configureAuditTrail(next: AuditTrail): void {
  trail = next;
}

/** Whether entries are written to audit_log_entries (not with AUDIT_LOG_DISABLE_POSTGRES). */
export function auditToDatabase(): boolean {
  return trail.toDatabase;
}

/** The rows a statement inserts, as JSON `[{id, payload, ip}]`: none with AUDIT_LOG_DISABLE_POSTGRES. */
export function storedAudit(entries: AuditEntry[]): string {
  return trail.toDatabase ? JSON.stringify(entries.map(({ id, payload, ip }) => ({ id, payload, ip }))) : '[]';
}

/**
 * The log line of each entry written on `q` (the original's `audit_event` line), once its transaction
 * commits: an attempt that rolls back, as sendingTx's first one does to take a send permit, logs nothing.
 */
export function announceAudit(q: Queryable, entries: AuditEntry[]): void {
  afterCommit(q, () => announceNow(entries));
}

function announceNow(entries: AuditEntry[]): void {
  const createdAt = new Date().toISOString();
  for (const e of entries) {
    e.request?.audited?.(e.payload);
    if (!trail.log) continue;
    const line: Record<string, unknown> = { ...e.payload, audit_log_id: e.id, ip_address: e.ip, created_at: createdAt };
    if (e.request?.requestId) line.request_id = e.request.requestId;
    const userAgent = e.request?.headers['user-agent'];
    if (userAgent) line.user_agent = userAgent;
    trail.log.info({ auth_audit_event: line }, 'audit_event');
  }
}

export async function writeAudit(
  q: Queryable,
  request: AuditRequest | null,
  actor: AuditActor,
  action: AuditAction,
  traits?: Record<string, unknown>,
  ip = '',
): Promise<void> {
  const entry = auditEntry(request, actor, action, traits, ip);
  if (trail.toDatabase) {
    await q.query({
      name: 'audit_insert_entry',
      text: 'insert into audit_log_entries (id, payload, ip_address) values ($1, $2, $3)',
      values: [entry.id, entry.payload, entry.ip],
    });
  }
  announceAudit(q, [entry]);
}

export interface AuditLogRow {
  id: string;
  payload: Record<string, unknown>;
  ip_address: string;
  created_at: Date;
}

/**
 * One page of the log, newest first, optionally where any of `fields` of the payload contains `value`
 * (case-insensitive; a LIKE pattern as in the original). `fields` are fixed names from the caller's table.
 */
export async function listAuditEntries(
  q: Queryable,
  p: { page: number; perPage: number; fields: string[]; value: string },
): Promise<{ entries: AuditLogRow[]; total: number }> {
  const values: unknown[] = [];
  let where = 'true';
  if (p.fields.length) {
    values.push(`%${p.value}%`);
    where = p.fields.map((f) => `payload ->> '${f.replace(/[^a-z_]/g, '')}' ilike $1`).join(' or ');
  }
  const n = values.length;
  const [page, count] = await Promise.all([
    q.query<AuditLogRow>(`select * from audit_log_entries where ${where} order by created_at desc, id limit $${n + 1} offset $${n + 2}`, [
      ...values,
      p.perPage,
      (p.page - 1) * p.perPage,
    ]),
    q.query<{ total: string }>(`select count(*) as total from audit_log_entries where ${where}`, values),
  ]);
  return { entries: page.rows, total: Number(count.rows[0].total) };
}
