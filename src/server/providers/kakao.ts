// Kakao Login through its REST API; the address counts as verified only when Kakao reports it both
// verified and still valid. The id_token grant takes Kakao's OIDC id_tokens (issuer https://kauth.kakao.com,
// keys at its /.well-known/jwks.json), whose address the original trusts as verified.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { idTokenSide, type IdTokenSide } from './id-token-side.js';
import { claims, flag, idText, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const auth = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'kauth.kakao.com');
const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'kapi.kakao.com');

const oidc = idTokenSide({
  endpoints: (rt) => ({
    issuer: auth(rt),
    authorization: `${auth(rt)}/oauth/authorize`,
    token: `${auth(rt)}/oauth/token`,
    jwksUri: `${auth(rt)}/.well-known/jwks.json`,
  }),
  profile(token) {
    const subject = requireSubject(text(token, 'sub'), 'kakao');
    const email = text(token, 'email');
    const nickname = text(token, 'nickname');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: text(token, 'iss'),
        sub: subject,
        name: nickname,
        preferred_username: nickname,
        picture: text(token, 'picture'),
        provider_id: subject,
      }),
    };
  },
});

export const kakao: OAuth2Provider & IdTokenSide = {
  ...oidc,
  protocol: 'oauth2',
  name: 'kakao',
  defaultScopes: ['account_email', 'profile_image', 'profile_nickname'],
  // Kakao documents its scope list as comma-separated.
  scopeSeparator: ',',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${auth(rt)}/oauth/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${auth(rt)}/oauth/token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/v2/user/me`, tokens.accessToken);
    const subject = requireSubject(idText(user, 'id'), 'kakao');
    const email = text(user, 'kakao_account', 'email');
    const verified = flag(user, 'kakao_account', 'is_email_verified') && flag(user, 'kakao_account', 'is_email_valid');
    const nickname = text(user, 'kakao_account', 'profile', 'nickname');
    return {
      subject,
      emails: email ? [{ email, verified, primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        name: nickname,
        preferred_username: nickname,
        avatar_url: text(user, 'kakao_account', 'profile', 'profile_image_url'),
        full_name: nickname,
        provider_id: subject,
        user_name: nickname,
      }),
    };
  },
};
