// Figma: the authorization page on www.figma.com, token and /v1/me on api.figma.com. Figma accounts have
// confirmed addresses, so the one reported counts as verified (as in the original).
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'api.figma.com');

export const figma: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'figma',
  defaultScopes: ['current_user:read'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${baseUrl(rt.config.url, 'www.figma.com')}/oauth`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/v1/oauth/token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/v1/me`, tokens.accessToken);
    const subject = requireSubject(text(user, 'id'), 'figma');
    const email = text(user, 'email');
    const handle = text(user, 'handle');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        name: handle,
        email,
        email_verified: true,
        avatar_url: text(user, 'img_url'),
        full_name: handle,
        provider_id: subject,
      }),
    };
  },
};
