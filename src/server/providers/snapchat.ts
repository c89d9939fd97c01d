// Snap Kit Login: the person is read from kit.snapchat.com's GraphQL `me` query. Snapchat only shares an
// address it holds as confirmed, so the original counts it verified; its issuer is the fixed token URL.
// Its OpenID Connect id_tokens are taken by the id_token grant (snapchat-id-token.ts).
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';
import type { IdTokenSide } from './id-token-side.js';
import { snapchatIdToken } from './snapchat-id-token.js';

const ISSUER = 'https://accounts.snapchat.com/accounts/oauth2/token';
const ME_QUERY = '{me { externalId displayName bitmoji { avatar id } email } }';
const accounts = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'accounts.snapchat.com')}/accounts/oauth2`;

export const snapchat: OAuth2Provider & IdTokenSide = {
  ...snapchatIdToken,
  protocol: 'oauth2',
  name: 'snapchat',
  defaultScopes: [
    'https://auth.snapchat.com/oauth2/api/user.external_id',
    'https://auth.snapchat.com/oauth2/api/user.display_name',
    'https://auth.snapchat.com/oauth2/api/user.bitmoji.avatar',
  ],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${accounts(rt)}/auth`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${accounts(rt)}/token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const url = new URL(`${apiBaseUrl(rt.config, 'kit.snapchat.com')}/v1/me`);
    url.searchParams.set('query', ME_QUERY);
    const answer = await getUserJson(rt, url.toString(), tokens.accessToken);
    const me = ['data', 'me'];
    const subject = requireSubject(text(answer, ...me, 'externalId'), 'snapchat');
    const email = text(answer, ...me, 'email');
    const name = text(answer, ...me, 'displayName');
    const avatar = text(answer, ...me, 'bitmoji', 'avatar');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: ISSUER,
        sub: subject,
        name,
        picture: avatar,
        slug: name,
        avatar_url: avatar,
        full_name: name,
        provider_id: subject,
      }),
    };
  },
};
