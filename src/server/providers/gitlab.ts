// GitLab, gitlab.com or a self-managed instance named by EXTERNAL_GITLAB_URL. The account's primary
// address counts as verified once GitLab has `confirmed_at` for the account; the extra addresses of
// /user/emails are never taken as verified (as in the original).
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, idText, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { ExternalEmail, OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson, getUserJsonArray } from './user-api.js';

const host = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'gitlab.com');
const api = (rt: ProviderRuntime) => `${apiBaseUrl(rt.config, 'gitlab.com')}/api/v4`;

export const gitlab: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'gitlab',
  defaultScopes: ['read_user'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${host(rt)}/oauth/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${host(rt)}/oauth/token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/user`, tokens.accessToken);
    const others = await getUserJsonArray(rt, `${api(rt)}/user/emails`, tokens.accessToken);
    const subject = requireSubject(idText(user, 'id'), 'gitlab');
    const primary = text(user, 'email');
    const emails: ExternalEmail[] = primary ? [{ email: primary, verified: text(user, 'confirmed_at') !== '', primary: true }] : [];
    for (const entry of others) {
      const email = text(entry, 'email');
      if (email && email !== primary) emails.push({ email, verified: false, primary: false });
    }
    const name = text(user, 'name');
    const avatar = text(user, 'avatar_url');
    return {
      subject,
      emails,
      claims: claims({ iss: host(rt), sub: subject, name, picture: avatar, avatar_url: avatar, full_name: name, provider_id: subject }),
    };
  },
};
