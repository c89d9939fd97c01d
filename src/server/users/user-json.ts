// The user object on the wire (docs/users-and-audit.md#user-json): absent email/phone render as "", optional timestamps
// appear only when set, secrets (password hash, tokens) never leave the database layer.
import type { UserRow } from '../../db/users.js';
import type { IdentityRow } from '../../db/identities.js';
import type { FactorRow } from '../../db/mfa-factors.js';
import { factorJson } from '../mfa/factor-json.js';
import { rfc3339Nano } from '../../db/timestamps.js';

export interface IdentityJson {
  identity_id: string;
  id: string;
  user_id: string;
  identity_data?: Record<string, unknown>;
  provider: string;
  last_sign_in_at?: string;
  created_at: string;
  updated_at: string;
  email?: string;
}

export function identityJson(row: IdentityRow): IdentityJson {
  // Members in the original's order (its Identity struct), the optional ones only when set.
  const out = { identity_id: row.id, id: row.provider_id, user_id: row.user_id } as IdentityJson;
  if (row.identity_data && Object.keys(row.identity_data).length) out.identity_data = row.identity_data;
  out.provider = row.provider;
  if (row.last_sign_in_at) out.last_sign_in_at = rfc3339Nano(row.last_sign_in_at);
  out.created_at = rfc3339Nano(row.created_at);
  out.updated_at = rfc3339Nano(row.updated_at);
  if (row.email) out.email = row.email;
  return out;
}

/**
 * `identities` null means "not loaded" (the admin list), as the original renders it. `factors` (the user's
 * MFA factors) appear only when there are any, as the original's omitempty does.
 */
export function userJson(user: UserRow, identities: IdentityRow[] | null, factors?: FactorRow[]): Record<string, unknown> {
  // Built member by member in the wire order (no intermediate object, no Object.entries): this runs on
  // every GET /user and token response (bench/README.md#where-time-goes).
  const json: Record<string, unknown> = { id: user.id, aud: user.aud, role: user.role, email: user.email ?? '', phone: user.phone ?? '' };
  setDate(json, 'email_confirmed_at', user.email_confirmed_at);
  setDate(json, 'phone_confirmed_at', user.phone_confirmed_at);
  setDate(json, 'confirmation_sent_at', user.confirmation_sent_at);
  setDate(json, 'confirmed_at', user.confirmed_at);
  setDate(json, 'invited_at', user.invited_at);
  setDate(json, 'recovery_sent_at', user.recovery_sent_at);
  // Truthiness, not null: a row a script wrote as the original's seeds do holds '' for "none".
  if (user.email_change) json.new_email = user.email_change;
  setDate(json, 'email_change_sent_at', user.email_change_sent_at);
  if (user.phone_change) json.new_phone = user.phone_change;
  setDate(json, 'phone_change_sent_at', user.phone_change_sent_at);
  setDate(json, 'reauthentication_sent_at', user.reauthentication_sent_at);
  setDate(json, 'last_sign_in_at', user.last_sign_in_at);
  setDate(json, 'banned_until', user.banned_until);
  setDate(json, 'deleted_at', user.deleted_at);
  json.app_metadata = user.raw_app_meta_data ?? {};
  json.user_metadata = user.raw_user_meta_data ?? {};
  json.identities = identities ? identities.map(identityJson) : null;
  if (factors?.length) json.factors = factors.map(factorJson);
  json.created_at = rfc3339Nano(user.created_at);
  json.updated_at = rfc3339Nano(user.updated_at);
  json.is_anonymous = user.is_anonymous;
  return json;
}

/** An optional timestamp: present only when set. */
function setDate(json: Record<string, unknown>, key: string, value: Date | null | undefined): void {
  if (value) json[key] = rfc3339Nano(value);
}

export const isBanned = (user: Pick<UserRow, 'banned_until'>, now = new Date()) => !!user.banned_until && user.banned_until > now;
