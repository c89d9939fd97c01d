// The body of POST and PUT /admin/users[/{user_id}] (docs/api.md#admin): its schema, and its reading.
// Absent fields stay undefined, so an update touches only what the request names.
import { apiError } from '../errors.js';
import { parseGoDuration } from '../config/duration.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { trimSpace } from '../go-trim-space.js';

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
export function readAdminUserParams(body: AdminUserBody, now = Date.now()): AdminUserParams {
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
    bannedUntil: body.ban_duration ? bannedUntil(body.ban_duration, now) : undefined,
  };
}

const MAX_GO_DURATION_MS = 9_223_372_036_854;

/** `none` (or a zero duration) unbans; otherwise banned until now + duration (docs/users-and-audit.md#bans). */
export function bannedUntil(banDuration: string, now = Date.now()): Date | null {
  if (banDuration === 'none') return null;
  const ms = parseGoDuration(banDuration);
  // Go durations are int64 nanoseconds (about 292 years); beyond that Go reports an invalid duration.
  if (ms === null || Math.abs(ms) > MAX_GO_DURATION_MS)
    throw apiError('admin_ban_duration', `invalid format for ban duration: ${goDurationError(banDuration)}`);
  return ms === 0 ? null : new Date(now + ms);
}

// The text of Go's time.ParseDuration error, which the original puts into its message.
function goDurationError(text: string): string {
  const quoted = JSON.stringify(text);
  if (/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(text)) return `time: missing unit in duration ${quoted}`;
  const unit = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)([^\d.]+)/.exec(text)?.[1];
  if (unit && !/^(ns|us|µs|μs|ms|s|m|h)$/.test(unit)) return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`;
  return `time: invalid duration ${quoted}`;
}
