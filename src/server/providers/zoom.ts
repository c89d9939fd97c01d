// Zoom: authorization and token on zoom.us, the user on api.zoom.us/v2. Zoom only confirms the address of
// accounts created with an email login (login_type 100); every other login type was vouched for by the
// identity provider behind it, so the address counts as verified unless it is an unconfirmed email login.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { at, claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const oauth = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'zoom.us')}/oauth`;
const api = (rt: ProviderRuntime) => `${apiBaseUrl(rt.config, 'api.zoom.us')}/v2`;

export const zoom: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'zoom',
  defaultScopes: [],
  scopeSeparator: ' ',
  // As the original: /authorize's `scopes` are not asked for.
  scopesFor: () => [],
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${oauth(rt)}/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${oauth(rt)}/token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/users/me`, tokens.accessToken);
    const subject = requireSubject(text(user, 'id'), 'zoom');
    const email = text(user, 'email');
    const loginType = at(user, 'login_type');
    const confirmed = at(user, 'verified');
    const verified =
      (typeof loginType === 'number' ? String(loginType) : text(user, 'login_type')) !== '100' ||
      (typeof confirmed === 'number' && confirmed !== 0);
    const name = `${text(user, 'first_name')} ${text(user, 'last_name')}`.trim();
    const avatar = text(user, 'pic_url');
    return {
      subject,
      emails: email ? [{ email, verified, primary: true }] : [],
      claims: claims({ iss: api(rt), sub: subject, name, picture: avatar, avatar_url: avatar, full_name: name, provider_id: subject }),
    };
  },
};
