// GET /oauth/userinfo (docs/oauth-server.md#userinfo), OpenID Connect's UserInfo endpoint: sub always,
// and the claims of the scopes granted to the session the access token belongs to. A token of a session
// not issued to an app gets sub alone, as the original answers. The original answers a map, whose members
// (user_metadata's too, at every depth) its encoder writes sorted by key.
import { findSessionScopes } from '../../db/oauth-consents.js';
import type { Authenticated } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';
import { parseScopes } from '../oauth-server/scopes.js';
import { profileClaims } from '../oauth-server/id-token.js';
import { goMapJson } from '../http/go-map-json.js';

const HEADERS = { 'Content-Type': 'application/json' };

export const userinfo: GuardedHandler<Authenticated> = async (_req, ctx, { user, session }) => {
  const info: Record<string, unknown> = { sub: user.id };
  // A token that names no session was issued to no app either: sub alone, as the original.
  if (!session) return { headers: HEADERS, body: goMapJson(info) };
  const scopes = parseScopes(await findSessionScopes(ctx.db, session.id));
  if (scopes.includes('email')) {
    if (user.email) info.email = user.email;
    if (user.email_confirmed_at) info.email_verified = true;
  }
  if (scopes.includes('profile')) {
    Object.assign(info, profileClaims(user));
    if (user.raw_user_meta_data) info.user_metadata = user.raw_user_meta_data;
  }
  if (scopes.includes('phone')) {
    if (user.phone) info.phone = user.phone;
    if (user.phone_confirmed_at) info.phone_verified = true;
  }
  return { headers: HEADERS, body: goMapJson(info) };
};
