// Facebook Login: the Graph API's /me, called with an appsecret_proof (HMAC-SHA256 of the access token
// under the app secret, which apps that require it refuse to answer without). Facebook only returns
// addresses it has confirmed, so the one it gives counts as verified (as in the original).
import { createHmac } from 'node:crypto';
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const graph = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'graph.facebook.com');
const profileUrl = (rt: ProviderRuntime) => `${graph(rt)}/me?fields=email,first_name,last_name,name,picture`;

export const facebook: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'facebook',
  defaultScopes: ['email'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${baseUrl(rt.config.url, 'www.facebook.com')}/dialog/oauth`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${graph(rt)}/oauth/access_token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const proof = createHmac('sha256', rt.config.secret).update(tokens.accessToken).digest('hex');
    const user = await getUserJson(rt, `${profileUrl(rt)}&appsecret_proof=${proof}`, tokens.accessToken);
    const subject = requireSubject(text(user, 'id'), 'facebook');
    const email = text(user, 'email');
    const fullName = `${text(user, 'first_name')} ${text(user, 'last_name')}`.trim();
    const alias = text(user, 'name');
    const picture = text(user, 'picture', 'data', 'url');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: profileUrl(rt),
        sub: subject,
        name: fullName,
        nickname: alias,
        picture,
        slug: alias,
        avatar_url: picture,
        full_name: fullName,
        provider_id: subject,
      }),
    };
  },
};
