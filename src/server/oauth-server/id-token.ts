// ID tokens for scope openid (docs/oauth-server.md#id-tokens): signed with the service's asymmetric
// signing key (never HS256, as the original), addressed to the client, valid one hour, and carrying only
// the claims the granted scopes name.
import type { UserRow } from '../../db/users.js';
import type { IdTokenClaims } from '../auth/jwt.js';
import type { AppContext } from '../context.js';
import { issuerOf } from './issuer.js';

const metaString = (meta: Record<string, unknown> | null, ...keys: string[]): string | undefined => {
  for (const key of keys) {
    const v = meta?.[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
};

/** The `profile` scope's claims, in ID tokens and at /oauth/userinfo alike: those the user has. */
export function profileClaims(user: UserRow): { name?: string; picture?: string; preferred_username?: string; updated_at: number } {
  const meta = user.raw_user_meta_data;
  const name = metaString(meta, 'name') ?? (user.email || undefined);
  const picture = metaString(meta, 'picture', 'avatar_url');
  const username = metaString(meta, 'preferred_username', 'username');
  return {
    ...(name ? { name } : {}),
    ...(picture ? { picture } : {}),
    ...(username ? { preferred_username: username } : {}),
    updated_at: Math.floor(user.updated_at.getTime() / 1000),
  };
}

export function idTokenClaims(ctx: AppContext, user: UserRow, clientId: string, scopes: string[], nonce: string | null): IdTokenClaims {
  const iat = Math.floor(Date.now() / 1000);
  const authTime = user.last_sign_in_at ? Math.floor(user.last_sign_in_at.getTime() / 1000) : iat;
  const claims: IdTokenClaims = {
    iss: issuerOf(ctx.config),
    sub: user.id,
    aud: clientId,
    exp: iat + 3600,
    iat,
    ...(nonce ? { nonce } : {}),
    auth_time: authTime,
    email_verified: false,
    phone_number_verified: false,
    client_id: clientId,
  };
  if (scopes.includes('email')) {
    if (user.email) claims.email = user.email;
    claims.email_verified = !!user.email_confirmed_at;
  }
  if (scopes.includes('phone')) {
    if (user.phone) claims.phone_number = user.phone;
    claims.phone_number_verified = !!user.phone_confirmed_at;
  }
  if (scopes.includes('profile')) Object.assign(claims, profileClaims(user));
  return orderedLikeTheOriginal(claims);
}

const ORDER: Array<keyof IdTokenClaims> = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nonce',
  'auth_time',
  'email',
  'email_verified',
  'phone_number',
  'phone_number_verified',
  'name',
  'picture',
  'updated_at',
  'preferred_username',
  'client_id',
];

function orderedLikeTheOriginal(claims: IdTokenClaims): IdTokenClaims {
  const out: Record<string, unknown> = {};
  for (const key of ORDER) if (claims[key] !== undefined) out[key] = claims[key];
  return out as unknown as IdTokenClaims;
}
