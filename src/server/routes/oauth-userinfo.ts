// GET /oauth/userinfo (docs/oauth-server.md#userinfo), OpenID Connect's UserInfo endpoint: sub always,
// and the claims of the scopes granted to the session the access token belongs to. A token of a session
// not issued to an app gets sub alone, as the original answers.
import { findSessionScopes } from '../../db/oauth-consents.js';
import type { Authenticated } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';
import { parseScopes } from '../oauth-server/scopes.js';

const metaString = (meta: Record<string, unknown> | null, ...keys: string[]): string | undefined => {
  for (const key of keys) {
    const v = meta?.[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
};

export const userinfo: GuardedHandler<Authenticated> = async (_req, ctx, { user, session }) => {
  const info: Record<string, unknown> = { sub: user.id };
  const scopes = parseScopes(await findSessionScopes(ctx.db, session.id));
  if (scopes.includes('email')) {
    if (user.email) info.email = user.email;
    if (user.email_confirmed_at) info.email_verified = true;
  }
  if (scopes.includes('profile')) {
    const meta = user.raw_user_meta_data;
    const name = metaString(meta, 'name') ?? (user.email || undefined);
    if (name) info.name = name;
    const picture = metaString(meta, 'picture', 'avatar_url');
    if (picture) info.picture = picture;
    const username = metaString(meta, 'preferred_username', 'username');
    if (username) info.preferred_username = username;
    info.updated_at = Math.floor(user.updated_at.getTime() / 1000);
    if (meta) info.user_metadata = meta;
  }
  if (scopes.includes('phone')) {
    if (user.phone) info.phone = user.phone;
    if (user.phone_confirmed_at) info.phone_verified = true;
  }
  return { body: info };
};
