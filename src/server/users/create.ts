// Creating a user with its email or phone identity (docs/users-and-audit.md#metadata-at-sign-up): app_metadata
// names the provider; a sign-up's identity data takes the client's data under the keys it lacks and
// user_metadata is that same object; an invitation's user_metadata is the admin's data alone.
import { randomUUID } from 'node:crypto';
import { updateUser, type UserRow } from '../../db/users.js';
import { insertNewUser } from './insert-new-user.js';
import { insertIdentity, markEmailVerifiedEverywhere, mergeIdentityData, type IdentityRow } from '../../db/identities.js';
import type { Queryable } from '../../db/pool.js';
import { nowTimestamp } from '../micro-clock.js';

export type AddressProvider = 'email' | 'phone';

export interface NewUser {
  provider: AddressProvider;
  address: string;
  aud: string;
  role: string;
  passwordHash: string | null;
  data: Record<string, unknown>;
  confirmed: boolean;
  /** POST /invite and generate_link: `data` is the user's metadata as sent, and none of it goes into the identity */
  metadataAsSent?: boolean;
  invitedAt?: Date;
  id?: string;
}

export function identityData(provider: AddressProvider, id: string, address: string, verified: boolean): Record<string, unknown> {
  return provider === 'email'
    ? { sub: id, email: address, email_verified: verified, phone_verified: false }
    : { sub: id, phone: address, email_verified: false, phone_verified: verified };
}

/**
 * The identity data of a new user, as the original builds it from its claims: `sub`, the email (a phone
 * sign-up's identity names no address) and both flags; then, for a sign-up, each key of the client's data
 * that is not one of those, so `data` cannot pose as a verified address.
 */
function newIdentityData(u: NewUser, id: string): Record<string, unknown> {
  const base: Record<string, unknown> = {
    sub: id,
    ...(u.provider === 'email' ? { email: u.address } : {}),
    email_verified: u.confirmed && u.provider === 'email',
    phone_verified: u.confirmed && u.provider === 'phone',
  };
  return u.metadataAsSent ? base : { ...u.data, ...base };
}

/** A sign-up's user_metadata is its identity data, without the keys `data` set to null, as the original merges it. */
function newUserMetadata(u: NewUser, id: string): Record<string, unknown> {
  if (u.metadataAsSent) return { ...u.data };
  return Object.fromEntries(Object.entries(newIdentityData(u, id)).filter(([, value]) => value !== null));
}

/** The row a new user would have, before it is written (also the template of the no-enumeration fake). */
export function newUserRow(u: NewUser, now = nowTimestamp()): UserRow {
  const id = u.id ?? randomUUID();
  return {
    ...blankUserRow(id, now),
    aud: u.aud,
    role: u.role,
    email: u.provider === 'email' ? u.address : null,
    phone: u.provider === 'phone' ? u.address : null,
    encrypted_password: u.passwordHash,
    email_confirmed_at: u.confirmed && u.provider === 'email' ? now : null,
    phone_confirmed_at: u.confirmed && u.provider === 'phone' ? now : null,
    confirmed_at: u.confirmed ? now : null,
    invited_at: u.invitedAt ?? null,
    raw_app_meta_data: { provider: u.provider, providers: [u.provider] },
    raw_user_meta_data: newUserMetadata(u, id),
  };
}

/** The columns of a user with no mail or code outstanding and no address change pending. */
export const NO_PENDING_MAIL_OR_CHANGES = {
  confirmation_sent_at: null,
  recovery_sent_at: null,
  email_change: null,
  email_change_sent_at: null,
  email_change_confirm_status: 0,
  phone_change: null,
  phone_change_sent_at: null,
  reauthentication_sent_at: null,
} as const satisfies Partial<UserRow>;

/** A user row with nothing set yet but its id and times, as the columns' defaults would leave it. */
export function blankUserRow(id: string, now = nowTimestamp()): UserRow {
  return {
    id,
    aud: '',
    role: '',
    email: null,
    phone: null,
    encrypted_password: null,
    email_confirmed_at: null,
    phone_confirmed_at: null,
    confirmed_at: null,
    invited_at: null,
    ...NO_PENDING_MAIL_OR_CHANGES,
    last_sign_in_at: null,
    raw_app_meta_data: {},
    raw_user_meta_data: {},
    banned_until: null,
    deleted_at: null,
    is_anonymous: false,
    is_sso_user: false,
    created_at: now,
    updated_at: now,
  };
}

/** Inserts the user and identity; null when the address is already taken (e.g. a concurrent signup). */
export async function createUser(q: Queryable, u: NewUser): Promise<{ user: UserRow; identity: IdentityRow } | null> {
  const row = newUserRow(u);
  const { confirmed_at: _c, created_at: _a, updated_at: _b, ...fields } = row;
  const user = await insertNewUser(q, fields);
  if (!user) return null;
  const identity = await insertIdentity(q, {
    userId: user.id,
    provider: u.provider,
    providerId: user.id,
    data: newIdentityData(u, user.id),
  });
  return { user, identity };
}

/**
 * Marks the email or phone confirmed, in the user and in its identity data. A confirmed address keeps its
 * confirmation time unless `again` (the original's phone confirmation, which every SMS code sign-in repeats,
 * sets it to now each time). `everyIdentity`: a confirmation token's, which marks every identity carrying
 * the email verified, an OAuth one included, as the original's confirmation does.
 */
export async function confirmAddress(
  q: Queryable,
  user: UserRow,
  provider: AddressProvider,
  o: { again?: boolean; everyIdentity?: boolean } = {},
): Promise<UserRow> {
  const flag = provider === 'email' ? 'email_verified' : 'phone_verified';
  if (provider === 'email' && o.everyIdentity && user.email) await markEmailVerifiedEverywhere(q, user.id, user.email);
  else await mergeIdentityData(q, user.id, provider, { [flag]: true });
  const confirmedAt = (provider === 'email' ? user.email_confirmed_at : user.phone_confirmed_at) ?? null;
  const at = o.again || !confirmedAt ? nowTimestamp() : confirmedAt;
  return updateUser(q, user.id, {
    ...(provider === 'email' ? { email_confirmed_at: at } : { phone_confirmed_at: at }),
    raw_user_meta_data: { ...user.raw_user_meta_data, [flag]: true },
  });
}

export const isAddressConfirmed = (user: UserRow, provider: AddressProvider) =>
  provider === 'email' ? !!user.email_confirmed_at : !!user.phone_confirmed_at;
