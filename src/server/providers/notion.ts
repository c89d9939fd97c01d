// Notion public integrations: the token call takes a JSON body with the client credentials as HTTP Basic,
// and every API call names the API version (Notion-Version) it speaks. The person is the bot's owner;
// Notion says nothing about verification, and the original counts the address as verified.
import { baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const NOTION_VERSION = '2021-08-16';
const api = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'api.notion.com');

export const notion: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'notion',
  defaultScopes: [],
  scopeSeparator: ' ',
  // As the original: /authorize's `scopes` are not asked for.
  scopesFor: () => [],
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${api(rt)}/v1/oauth/authorize`),
  // Notion's authorization URL names who installs the integration; sign-in is always a user.
  authorizationParams: () => ({ owner: 'user' }),
  exchangeCode: (rt, code) =>
    exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/v1/oauth/token`, code, credentials: 'basic', encoding: 'json' }),
  async fetchProfile(rt, tokens) {
    const me = await getUserJson(rt, `${api(rt)}/v1/users/me`, tokens.accessToken, { 'Notion-Version': NOTION_VERSION });
    const owner = ['bot', 'owner', 'user'];
    const subject = requireSubject(text(me, ...owner, 'id'), 'notion');
    const email = text(me, ...owner, 'person', 'email');
    const name = text(me, ...owner, 'name');
    const avatar = text(me, ...owner, 'avatar_url');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({ iss: api(rt), sub: subject, name, picture: avatar, avatar_url: avatar, full_name: name, provider_id: subject }),
    };
  },
};
