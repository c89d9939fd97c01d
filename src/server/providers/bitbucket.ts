// Bitbucket Cloud: the user and every address of the account from the 2.0 API, each with Bitbucket's own
// confirmed/primary flags. Authorization and token on bitbucket.org, the API on api.bitbucket.org.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, flag, list, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { ExternalEmail, OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const site = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'bitbucket.org')}/site/oauth2`;
const api = (rt: ProviderRuntime) => `${apiBaseUrl(rt.config, 'api.bitbucket.org')}/2.0`;

export const bitbucket: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'bitbucket',
  defaultScopes: ['account', 'email'],
  scopeSeparator: ' ',
  // As the original: /authorize's `scopes` are not asked for.
  scopesFor: () => ['account', 'email'],
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${site(rt)}/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${site(rt)}/access_token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/user`, tokens.accessToken);
    const emails = await getUserJson(rt, `${api(rt)}/user/emails`, tokens.accessToken);
    const subject = requireSubject(text(user, 'uuid'), 'bitbucket');
    const found: ExternalEmail[] = list(emails, 'values')
      .filter((e) => text(e, 'email'))
      .map((e) => ({ email: text(e, 'email'), verified: flag(e, 'is_confirmed'), primary: flag(e, 'is_primary') }));
    // Bitbucket puts the avatar under links; the original's top-level `avatar` is read as a fallback.
    const avatar = text(user, 'links', 'avatar', 'href') || text(user, 'avatar', 'href');
    const name = text(user, 'display_name');
    return {
      subject,
      emails: [...found.filter((e) => e.primary), ...found.filter((e) => !e.primary)],
      claims: claims({ iss: api(rt), sub: subject, name, picture: avatar, avatar_url: avatar, full_name: name, provider_id: subject }),
    };
  },
};
