// Twitter's OAuth 1.0a sign-in (X's OAuth 2.0 is x.ts): a request token bound to the callback, the user's
// consent at /oauth/authenticate, then an access token for the verifier. Every request is signed with
// HMAC-SHA1 by the oauth-1.0a library (RFC 5849); this module only supplies the HMAC from node:crypto.
import { createHmac, randomBytes } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { apiBaseUrl, baseUrl, flowClientId } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { jsonObject, ProviderError, providerText } from './outbound.js';
import type { OAuth1Provider, ProviderRuntime } from './types.js';

const api = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'api.twitter.com');
const profileUrl = (rt: ProviderRuntime) => `${apiBaseUrl(rt.config, 'api.twitter.com')}/1.1/account/verify_credentials.json`;

function signer(rt: ProviderRuntime): OAuth {
  const oauth = new OAuth({
    consumer: { key: flowClientId(rt.config), secret: rt.config.secret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
  });
  // The library's nonce comes from Math.random; a nonce guards against replay, so take it from the CSPRNG.
  oauth.getNonce = () => randomBytes(16).toString('hex');
  return oauth;
}

/** Authorization header for one request; `protocol` holds oauth_callback / oauth_verifier, which are signed too. */
function authorization(rt: ProviderRuntime, method: string, url: string, token?: OAuth.Token, protocol: Record<string, string> = {}) {
  const oauth = signer(rt);
  const signed = oauth.authorize({ url, method, data: protocol }, token);
  return oauth.toHeader({ ...signed, ...protocol }).Authorization;
}

/** Token endpoints answer form-encoded pairs. */
async function signedTokenCall(rt: ProviderRuntime, url: string, token: OAuth.Token | undefined, protocol: Record<string, string>) {
  const response = await rt.fetch(url, { method: 'POST', headers: { Authorization: authorization(rt, 'POST', url, token, protocol) } });
  const body = await providerText(response);
  const pairs = new URLSearchParams(body);
  const key = pairs.get('oauth_token') ?? '';
  const secret = pairs.get('oauth_token_secret') ?? '';
  if (!key || !secret) throw new ProviderError(`${new URL(url).host} answered without a token`);
  return { key, secret, pairs };
}

export const twitter: OAuth1Provider = {
  protocol: 'oauth1',
  name: 'twitter',
  async requestToken(rt, callbackUrl) {
    const { key, secret, pairs } = await signedTokenCall(rt, `${api(rt)}/oauth/request_token`, undefined, { oauth_callback: callbackUrl });
    // Without the confirmation the provider ignored the callback (OAuth 1.0a §6.1.2), and the user would not come back.
    if (pairs.get('oauth_callback_confirmed') !== 'true') throw new ProviderError('twitter did not confirm the callback URL');
    const authorizeUrl = new URL(`${api(rt)}/oauth/authenticate`);
    authorizeUrl.searchParams.set('oauth_token', key);
    return { token: key, secret, authorizeUrl: authorizeUrl.toString() };
  },
  async accessToken(rt, token, secret, verifier) {
    const {
      key,
      secret: tokenSecret,
      pairs,
    } = await signedTokenCall(rt, `${api(rt)}/oauth/access_token`, { key: token, secret }, { oauth_verifier: verifier });
    return { accessToken: key, refreshToken: '', idToken: '', response: Object.fromEntries(pairs), tokenSecret };
  },
  async fetchProfile(rt, tokens) {
    const url = `${profileUrl(rt)}?include_entities=false&skip_status=true&include_email=true`;
    const header = authorization(rt, 'GET', url, { key: tokens.accessToken, secret: tokens.tokenSecret });
    const user = await jsonObject(await rt.fetch(url, { headers: { Authorization: header, Accept: 'application/json' } }));
    const subject = requireSubject(text(user, 'id_str'), 'twitter');
    const email = text(user, 'email');
    const screenName = text(user, 'screen_name');
    const name = text(user, 'name');
    const avatar = text(user, 'profile_image_url_https');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: profileUrl(rt),
        sub: subject,
        name,
        picture: avatar,
        preferred_username: screenName,
        user_name: screenName,
        full_name: name,
        avatar_url: avatar,
        provider_id: subject,
      }),
    };
  },
};
