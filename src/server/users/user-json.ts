// The user object on the wire (docs/users-and-audit.md#user-json): absent email/phone render as "", optional timestamps
// appear only when set, secrets (password hash, tokens) never leave the database layer.
import type { UserRow } from '../../db/users.js';
import type { IdentityRow } from '../../db/identities.js';
import type { FactorRow } from '../../db/mfa-factors.js';
import { factorJson } from '../mfa/factor-json.js';

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

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : undefined);

export function identityJson(row: IdentityRow): IdentityJson {
  const out: IdentityJson = {
    identity_id: row.id,
    id: row.provider_id,
    user_id: row.user_id,
    provider: row.provider,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
  if (row.identity_data && Object.keys(row.identity_data).length) out.identity_data = row.identity_data;
  if (row.last_sign_in_at) out.last_sign_in_at = row.last_sign_in_at.toISOString();
  if (row.email) out.email = row.email;
  return out;
}

/**
 * `identities` null means "not loaded" (the admin list), as the original renders it. `factors` (the user's
 * MFA factors) appear only when there are any, as the original's omitempty does.
 */
export function userJson(user: UserRow, identities: IdentityRow[] | null, factors?: FactorRow[]): Record<string, unknown> {
  const optional: Record<string, unknown> = {
    email_confirmed_at: iso(user.email_confirmed_at),
    phone_confirmed_at: iso(user.phone_confirmed_at),
    confirmation_sent_at: iso(user.confirmation_sent_at),
    confirmed_at: iso(user.confirmed_at),
    invited_at: iso(user.invited_at),
    recovery_sent_at: iso(user.recovery_sent_at),
    new_email: user.email_change ?? undefined,
    email_change_sent_at: iso(user.email_change_sent_at),
    new_phone: user.phone_change ?? undefined,
    phone_change_sent_at: iso(user.phone_change_sent_at),
    reauthentication_sent_at: iso(user.reauthentication_sent_at),
    last_sign_in_at: iso(user.last_sign_in_at),
    banned_until: iso(user.banned_until),
    deleted_at: iso(user.deleted_at),
  };
  const json: Record<string, unknown> = { id: user.id, aud: user.aud, role: user.role, email: user.email ?? '', phone: user.phone ?? '' };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) json[key] = value;
  json.app_metadata = user.raw_app_meta_data ?? {};
  json.user_metadata = user.raw_user_meta_data ?? {};
  json.identities = identities ? identities.map(identityJson) : null;
  if (factors?.length) json.factors = factors.map(factorJson);
  json.created_at = user.created_at.toISOString();
  json.updated_at = user.updated_at.toISOString();
  json.is_anonymous = user.is_anonymous;
  return json;
}

export const isBanned = (user: Pick<UserRow, 'banned_until'>, now = new Date()) => !!user.banned_until && user.banned_until > now;
