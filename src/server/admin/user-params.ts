// The body of POST and PUT /admin/users[/{user_id}] (docs/api.md#admin): its schema, and its reading.
// Absent fields stay undefined, so an update touches only what the request names.
import { apiError } from '../errors.js';
import { parseGoDurationNs } from '../config/go-duration.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { trimSpace } from '../go-trim-space.js';
import { nowMicroseconds } from '../micro-clock.js';
import { DbTimestamp } from '../../db/timestamps.js';

export interface AdminUserParams {
  id?: string;
  aud?: string;
  role?: string;
  email?: string;
  phone?: string;
  password?: string;
  passwordHash?: string;
  emailConfirm: boolean;
  phoneConfirm: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  /** undefined: leave as is; null: unban; a Date: banned until then */
  bannedUntil?: Date | null;
}

// In the order the original reads them: the first field of a wrong type is the one the 400 names.
const FIELDS = {
  ban_duration: 'string',
  id: 'string',
  aud: 'string',
  role: 'string',
  email: 'string',
  phone: 'string',
  password: 'string',
  password_hash: 'string',
  email_confirm: 'boolean',
  phone_confirm: 'boolean',
  user_metadata: 'object',
  app_metadata: 'object',
} as const;
/** The body schema of POST and PUT /admin/users[/{user_id}]. */
export const adminUserBody = bodySchema(FIELDS);
export type AdminUserBody = BodyOf<typeof FIELDS>;

/**
 * Empty strings count as absent, except a password (on update, '' is a password that fails the policy).
 * A role is absent only when empty: the original trims it as it stores it, so one of white space alone
 * is stored as the empty role, not replaced by the default.
 */
export function readAdminUserParams(body: AdminUserBody, nowUs = nowMicroseconds()): AdminUserParams {
  return {
    id: body.id || undefined,
    aud: body.aud || undefined,
    role: body.role ? trimSpace(body.role) : undefined,
    email: body.email || undefined,
    phone: body.phone || undefined,
    password: body.password ?? undefined,
    passwordHash: body.password_hash || undefined,
    emailConfirm: body.email_confirm ?? false,
    phoneConfirm: body.phone_confirm ?? false,
    userMetadata: body.user_metadata ?? undefined,
    appMetadata: body.app_metadata ?? undefined,
    bannedUntil: body.ban_duration ? bannedUntil(body.ban_duration, nowUs) : undefined,
  };
}

/**
 * `none` (or a zero duration) unbans; otherwise banned until now + duration (docs/users-and-audit.md#bans),
 * `nowUs` in microseconds since 1970: the time is kept to the microsecond, as the original's column keeps
 * its clock's time, so the user JSON shows the same six-digit fraction.
 */
export function bannedUntil(banDuration: string, nowUs = nowMicroseconds()): Date | null {
  if (banDuration === 'none') return null;
  const parsed = parseGoDurationNs(banDuration);
  if ('error' in parsed) throw apiError('admin_ban_duration', `invalid format for ban duration: ${parsed.error}`);
  // Whole nanoseconds, as the original: anything under 1 ns ("0.5ns") is a zero duration, which unbans.
  if (parsed.ns === 0n) return null;
  return DbTimestamp.fromMicroseconds(nowUs + Math.round(Number(parsed.ns) / 1000));
}
