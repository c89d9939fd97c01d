// One imported user, checked and normalised (docs/adopting-gotrue.md#importing-users). Accepts the
// original's column names (raw_user_meta_data, encrypted_password) and its API's (user_metadata,
// app_metadata), '' or null for absent values, and stores what our writers store: lower-case email,
// phone digits without '+', NULL for absent. A password hash must be one sign-in can verify.
import { parseStoredHash } from '../../workers/password-formats.js';
import { DbTimestamp, rfc3339Nano } from '../../db/timestamps.js';
import { nowTimestamp } from '../micro-clock.js';

export interface ImportedIdentity {
  id: string | null;
  provider_id: string;
  provider: string;
  identity_data: Record<string, unknown>;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ImportedUser {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  phone: string | null;
  encrypted_password: string | null;
  email_confirmed_at: string | null;
  phone_confirmed_at: string | null;
  invited_at: string | null;
  last_sign_in_at: string | null;
  raw_app_meta_data: Record<string, unknown>;
  raw_user_meta_data: Record<string, unknown>;
  banned_until: string | null;
  deleted_at: string | null;
  is_anonymous: boolean;
  is_sso_user: boolean;
  created_at: string;
  updated_at: string;
  identities: ImportedIdentity[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class RecordError extends Error {}

/** Checks one source record; throws RecordError naming the first problem. */
export function toImportedUser(input: unknown, now = rfc3339Nano(nowTimestamp())): ImportedUser {
  if (!isObject(input)) throw new RecordError('not a JSON object');
  const id = text(input.id);
  if (!id || !UUID.test(id)) throw new RecordError('"id" must be a UUID');
  const password = text(input.encrypted_password) ?? text(input.password_hash);
  if (password && !parseStoredHash(password))
    throw new RecordError('"encrypted_password" is not a bcrypt or argon2 hash sign-in can verify');
  const createdAt = time(input.created_at, 'created_at') ?? now;
  const identities = input.identities ?? [];
  if (!Array.isArray(identities)) throw new RecordError('"identities" must be an array');
  return {
    id: id.toLowerCase(),
    aud: text(input.aud) ?? 'authenticated',
    role: text(input.role) ?? 'authenticated',
    email: text(input.email)?.toLowerCase() ?? null,
    phone: text(input.phone)?.replace(/^\+/, '') ?? null,
    encrypted_password: password,
    email_confirmed_at: time(input.email_confirmed_at, 'email_confirmed_at'),
    phone_confirmed_at: time(input.phone_confirmed_at, 'phone_confirmed_at'),
    invited_at: time(input.invited_at, 'invited_at'),
    last_sign_in_at: time(input.last_sign_in_at, 'last_sign_in_at'),
    raw_app_meta_data: metadata(input.raw_app_meta_data ?? input.app_metadata, 'app_metadata'),
    raw_user_meta_data: metadata(input.raw_user_meta_data ?? input.user_metadata, 'user_metadata'),
    banned_until: time(input.banned_until, 'banned_until'),
    deleted_at: time(input.deleted_at, 'deleted_at'),
    is_anonymous: input.is_anonymous === true,
    is_sso_user: input.is_sso_user === true,
    created_at: createdAt,
    updated_at: time(input.updated_at, 'updated_at') ?? createdAt,
    identities: identities.map((i, n) => toIdentity(i, n, id.toLowerCase(), createdAt)),
  };
}

function toIdentity(input: unknown, n: number, userId: string, createdAt: string): ImportedIdentity {
  if (!isObject(input)) throw new RecordError(`identities[${n}] is not an object`);
  const provider = text(input.provider);
  if (!provider) throw new RecordError(`identities[${n}].provider is missing`);
  const data = metadata(input.identity_data, `identities[${n}].identity_data`);
  // Before late 2023 the original's identities.id was the provider's subject; provider_id came later.
  const providerId = text(input.provider_id) ?? (typeof data.sub === 'string' ? data.sub : null) ?? (provider === 'email' ? userId : null);
  if (!providerId) throw new RecordError(`identities[${n}].provider_id is missing`);
  const id = text(input.id);
  return {
    id: id && UUID.test(id) && text(input.provider_id) ? id : null,
    provider_id: providerId,
    provider,
    identity_data: data,
    last_sign_in_at: time(input.last_sign_in_at, `identities[${n}].last_sign_in_at`),
    created_at: time(input.created_at, `identities[${n}].created_at`) ?? createdAt,
    updated_at: time(input.updated_at, `identities[${n}].updated_at`) ?? createdAt,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function text(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new RecordError(`expected a string, got ${JSON.stringify(v)}`);
  return v.trim() === '' ? null : v.trim();
}

// The fraction of a second in a time's text, for the microseconds a Date cannot hold.
const FRACTION = /:\d{2}\.(\d+)/;

/**
 * A time as the text written to the column, to the microsecond: the original's database holds six digits
 * (`to_jsonb` writes them all), and a JSON Lines export may too, where a Date keeps three.
 */
function time(v: unknown, name: string): string | null {
  if (v instanceof Date) return v instanceof DbTimestamp ? rfc3339Nano(v) : v.toISOString();
  const t = text(v);
  if (t === null) return null;
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw new RecordError(`"${name}" is not a timestamp`);
  const beyondMilliseconds = (FRACTION.exec(t)?.[1] ?? '').slice(3, 6).padEnd(3, '0');
  return rfc3339Nano(new DbTimestamp(ms, Number(beyondMilliseconds)));
}

function metadata(v: unknown, name: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v === 'string') {
    try {
      return metadata(JSON.parse(v), name);
    } catch {
      throw new RecordError(`"${name}" is not a JSON object`);
    }
  }
  if (!isObject(v)) throw new RecordError(`"${name}" is not a JSON object`);
  return v;
}
