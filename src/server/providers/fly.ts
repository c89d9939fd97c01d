// Fly.io: everything on api.fly.io; the person is read from the token's own description
// (/oauth/token/info), whose organisations, application and scopes become custom claims.
import { baseUrl } from './base-url.js';
import { at, claims, list, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const host = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'api.fly.io');

export const fly: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'fly',
  defaultScopes: ['read'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${host(rt)}/oauth/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${host(rt)}/oauth/token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const info = await getUserJson(rt, `${host(rt)}/oauth/token/info`, tokens.accessToken);
    const subject = requireSubject(text(info, 'user_id'), 'fly');
    const email = text(info, 'email');
    const createdAt = at(info, 'created_at');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: host(rt),
        sub: subject,
        full_name: text(info, 'user_name'),
        email,
        email_verified: true,
        provider_id: subject,
        custom_claims: {
          resource_owner_id: text(info, 'resource_owner_id'),
          organizations: list(info, 'organizations').map((o) => ({ id: text(o, 'id'), role: text(o, 'role') })),
          application: at(info, 'application') ?? null,
          scope: list(info, 'scope').filter((s) => typeof s === 'string'),
          created_at: typeof createdAt === 'number' ? createdAt : 0,
        },
      }),
    };
  },
};
