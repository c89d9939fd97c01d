// Twitch: the Helix API wants the app's Client-Id header beside the bearer token. Twitch only returns a
// confirmed address with user:read:email, so the original counts it verified.
import { apiBaseUrl, baseUrl, flowClientId } from './base-url.js';
import { at, claims, list, requireSubject, text } from './json-fields.js';
import { ProviderError } from './outbound.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const id = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'id.twitch.tv')}/oauth2`;
const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'api.twitch.tv');

export const twitch: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'twitch',
  defaultScopes: ['user:read:email'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${id(rt)}/authorize`),
  // Twitch takes the client credentials only as body fields.
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${id(rt)}/token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const answer = await getUserJson(rt, `${api(rt)}/helix/users`, tokens.accessToken, { 'Client-Id': flowClientId(rt.config) });
    const user = list(answer, 'data')[0];
    if (user === undefined) throw new ProviderError('twitch answered no user for the token');
    const subject = requireSubject(text(user, 'id'), 'twitch');
    const email = text(user, 'email');
    const login = text(user, 'login');
    const displayName = text(user, 'display_name');
    const image = text(user, 'profile_image_url');
    const viewCount = at(user, 'view_count');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        picture: image,
        name: login,
        nickname: displayName,
        custom_claims: {
          broadcaster_type: text(user, 'broadcaster_type'),
          description: text(user, 'description'),
          type: text(user, 'type'),
          offline_image_url: text(user, 'offline_image_url'),
          view_count: typeof viewCount === 'number' ? viewCount : 0,
        },
        slug: displayName,
        avatar_url: image,
        full_name: login,
        provider_id: subject,
      }),
    };
  },
};
