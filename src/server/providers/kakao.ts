// Kakao Login through its REST API (the id_token grant for Kakao is the OIDC side, not this module). The
// address counts as verified only when Kakao reports it both verified and still valid.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { claims, flag, idText, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const auth = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'kauth.kakao.com');
const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'kapi.kakao.com');

export const kakao: OAuth2Provider = {
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
