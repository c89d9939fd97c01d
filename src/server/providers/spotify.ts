// Spotify accounts service and Web API. Spotify does not say whether the address is verified, so it never
// counts as verified (as in the original); the largest of the profile images becomes the avatar.
import { apiBaseUrl, baseUrl } from './base-url.js';
import { at, claims, list, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const accounts = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'accounts.spotify.com');
// The override replaces `https://api.spotify.com/v1` whole, as the original's does.
const api = (rt: ProviderRuntime) => apiBaseUrl(rt.config, 'api.spotify.com/v1');

const area = (image: unknown) => {
  const width = at(image, 'width');
  const height = at(image, 'height');
  return typeof width === 'number' && typeof height === 'number' ? width * height : 0;
};

function largestImage(images: unknown[]): string {
  let best: unknown = images[0];
  for (const image of images) if (area(image) > area(best)) best = image;
  return text(best, 'url');
}

export const spotify: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'spotify',
  defaultScopes: ['user-read-email'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${accounts(rt)}/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${accounts(rt)}/api/token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/me`, tokens.accessToken);
    const subject = requireSubject(text(user, 'id'), 'spotify');
    const email = text(user, 'email');
    const name = text(user, 'display_name');
    const avatar = largestImage(list(user, 'images'));
    return {
      subject,
      emails: email ? [{ email, verified: false, primary: true }] : [],
      claims: claims({ iss: api(rt), sub: subject, name, picture: avatar, avatar_url: avatar, full_name: name, provider_id: subject }),
    };
  },
};
