// X (formerly Twitter) with OAuth 2.0: X requires PKCE from every client, so the flow sends a challenge
// and the verifier comes back here for the token call (client credentials as HTTP Basic, as X wants from
// confidential clients). X only returns `confirmed_email`, so an address it gives is verified.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { ProviderError } from './outbound.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'api.x.com');
const USER_FIELDS = 'id,name,username,confirmed_email,profile_image_url,url,created_at';

export const x: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'x',
  defaultScopes: ['users.email', 'tweet.read', 'users.read', 'offline.access'],
  scopeSeparator: ' ',
  pkceToProvider: true,
  authorizationEndpoint: (rt) => Promise.resolve(`${baseUrl(rt.config.url, 'x.com')}/i/oauth2/authorize`),
  async exchangeCode(rt, code, codeVerifier) {
    if (!codeVerifier) throw new ProviderError('x needs the PKCE verifier of the authorization request');
    return exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/2/oauth2/token`, code, codeVerifier, credentials: 'basic' });
  },
  async fetchProfile(rt, tokens) {
    const answer = await getUserJson(rt, `${api(rt)}/2/users/me?user.fields=${USER_FIELDS}`, tokens.accessToken);
    const subject = requireSubject(text(answer, 'data', 'id'), 'x');
    const field = (key: string) => text(answer, 'data', key);
    const email = field('confirmed_email');
    const username = field('username');
    const image = field('profile_image_url');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        name: field('name'),
        preferred_username: username,
        picture: image,
        profile: `https://x.com/${username}`,
        website: field('url'),
        custom_claims: { created_at: field('created_at') },
        avatar_url: image,
        full_name: field('name'),
        provider_id: subject,
        user_name: username,
      }),
    };
  },
};
