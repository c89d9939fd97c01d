// Facebook Login: the Graph API's /me, called with an appsecret_proof (HMAC-SHA256 of the access token
// under the app secret, which apps that require it refuse to answer without). Facebook only returns
// addresses it has confirmed, so the one it gives counts as verified (as in the original). The id_token
// grant takes Limited Login's JWTs: issuer https://www.facebook.com, keys at its /.well-known/oauth/openid/jwks/.
import { createHmac } from 'node:crypto';
import { apiBaseUrl, baseUrl } from './base-url.js';
import { idTokenSide, type IdTokenSide } from './id-token-side.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const graph = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'graph.facebook.com');
const www = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'www.facebook.com');
const profileUrl = (rt: ProviderRuntime) => `${graph(rt)}/me?fields=email,first_name,last_name,name,picture`;

/** Limited Login's id_token: its address is one Facebook confirmed, as in the original. */
const limitedLogin = idTokenSide({
  endpoints: (rt) => ({
    issuer: www(rt),
    authorization: `${www(rt)}/dialog/oauth`,
    token: `${graph(rt)}/oauth/access_token`,
    jwksUri: `${www(rt)}/.well-known/oauth/openid/jwks/`,
  }),
  profile(token) {
    const subject = requireSubject(text(token, 'sub'), 'facebook');
    const email = text(token, 'email');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: text(token, 'iss'),
        sub: subject,
        name: text(token, 'name'),
        picture: text(token, 'picture'),
        provider_id: subject,
        email,
        email_verified: email ? true : undefined,
      }),
    };
  },
});

export const facebook: OAuth2Provider & IdTokenSide = {
  ...limitedLogin,
  protocol: 'oauth2',
  name: 'facebook',
  defaultScopes: ['email'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${www(rt)}/dialog/oauth`),
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
