// The body of POST and PUT /admin/users[/{user_id}] (REFERENCE §2.14), read once and type-checked.
// Absent fields stay undefined, so an update touches only what the request names.
import { badRequest } from '../errors.js';
import { parseGoDuration } from '../config/duration.js';

export interface AdminUserParams {
  id?: string; aud?: string; role?: string; email?: string; phone?: string;
  password?: string; passwordHash?: string; emailConfirm: boolean; phoneConfirm: boolean;
  userMetadata?: Record<string, unknown>; appMetadata?: Record<string, unknown>;
  /** undefined: leave as is; null: unban; a Date: banned until then */
  bannedUntil?: Date | null;
}

function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  return value;
}

function optionalBoolean(body: Record<string, unknown>, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw badRequest(`${name} must be a boolean`);
  return value;
}

function optionalObject(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${name} must be an object`);
  return value as Record<string, unknown>;
}

export function readAdminUserParams(body: Record<string, unknown>, now = Date.now()): AdminUserParams {
  const banDuration = optionalString(body, 'ban_duration');
  return {
    id: optionalString(body, 'id') || undefined,
    aud: optionalString(body, 'aud') || undefined,
    role: optionalString(body, 'role')?.trim() || undefined,
    email: optionalString(body, 'email') || undefined,
    phone: optionalString(body, 'phone') || undefined,
    password: optionalString(body, 'password'),
    passwordHash: optionalString(body, 'password_hash') || undefined,
    emailConfirm: optionalBoolean(body, 'email_confirm'),
    phoneConfirm: optionalBoolean(body, 'phone_confirm'),
    userMetadata: optionalObject(body, 'user_metadata'),
    appMetadata: optionalObject(body, 'app_metadata'),
    bannedUntil: banDuration ? bannedUntil(banDuration, now) : undefined,
  };
}

const MAX_GO_DURATION_MS = 9_223_372_036_854;

/** `none` (or a zero duration) unbans; otherwise banned until now + duration (REFERENCE §14.1). */
export function bannedUntil(banDuration: string, now = Date.now()): Date | null {
  if (banDuration === 'none') return null;
  const ms = parseGoDuration(banDuration);
  // Go durations are int64 nanoseconds (about 292 years); beyond that Go reports an invalid duration.
  if (ms === null || Math.abs(ms) > MAX_GO_DURATION_MS) throw badRequest(`invalid format for ban duration: ${goDurationError(banDuration)}`);
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

/** Merges metadata as the original does: a key set to null is removed. */
export function mergeMetadata(current: Record<string, unknown>, updates: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...current };
  for (const [key, value] of Object.entries(updates)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
