// The minimal handler's own work, shared by the handler limit (handler-thread.mjs) and the JavaScript-only
// comparison (bench/user-path.mjs): HS256 verify and sign with node:crypto, and the user JSON built
// straight from the row, with the same keys the service writes.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

export function hs256(secret) {
  const hmacKey = Buffer.from(secret, 'utf8');
  return {
    /** The claims of a valid HS256 token whose exp is in the future, else null: the checks a bearer needs. */
    verify(token) {
      const dot = token.lastIndexOf('.');
      const first = token.indexOf('.');
      if (first < 0 || dot === first) return null;
      const expected = createHmac('sha256', hmacKey).update(token.slice(0, dot)).digest();
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      const header = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString());
      if (header.alg !== 'HS256') return null;
      const claims = JSON.parse(Buffer.from(token.slice(first + 1, dot), 'base64url').toString());
      return typeof claims.exp === 'number' && claims.exp > Date.now() / 1000 ? claims : null;
    },
    sign(claims) {
      const input = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${input}.${createHmac('sha256', hmacKey).update(input).digest('base64url')}`;
    },
  };
}

const iso = (d) => (d ? d.toISOString() : undefined);

/** The user JSON's fields, built directly from the row (the same keys the service writes). */
export function userJson(u, identities, factors) {
  return {
    id: u.id,
    aud: u.aud,
    role: u.role,
    email: u.email ?? '',
    phone: u.phone ?? '',
    email_confirmed_at: iso(u.email_confirmed_at),
    confirmed_at: iso(u.confirmed_at),
    last_sign_in_at: iso(u.last_sign_in_at),
    app_metadata: u.raw_app_meta_data ?? {},
    user_metadata: u.raw_user_meta_data ?? {},
    identities: identities.map((i) => ({
      identity_id: i.id,
      id: i.provider_id,
      user_id: i.user_id,
      identity_data: i.identity_data,
      provider: i.provider,
      last_sign_in_at: i.last_sign_in_at,
      created_at: i.created_at,
      updated_at: i.updated_at,
      email: i.email ?? undefined,
    })),
    ...(factors.length ? { factors } : {}),
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
    is_anonymous: u.is_anonymous,
  };
}
