// Discord: one address, verified when Discord says so; the avatar URL is built on Discord's CDN from the
// avatar hash (animated when it starts with `a_`), or the default avatar picked by the discriminator.
import { baseUrl } from './base-url.js';
import { claims, flag, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const api = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'discord.com')}/api`;

function avatarUrl(id: string, avatar: string, discriminator: string): string {
  if (!avatar) return `https://cdn.discordapp.com/embed/avatars/${(Number.parseInt(discriminator, 10) || 0) % 5}.png`;
  return `https://cdn.discordapp.com/avatars/${id}/${avatar}.${avatar.startsWith('a_') ? 'gif' : 'png'}`;
}

export const discord: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'discord',
  defaultScopes: ['email', 'identify'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${api(rt)}/oauth2/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/oauth2/token`, code, credentials: 'basic' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${api(rt)}/users/@me`, tokens.accessToken);
    const subject = requireSubject(text(user, 'id'), 'discord');
    const email = text(user, 'email');
    const username = text(user, 'username');
    const discriminator = text(user, 'discriminator');
    const picture = avatarUrl(subject, text(user, 'avatar'), discriminator);
    return {
      subject,
      emails: email ? [{ email, verified: flag(user, 'verified'), primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        name: `${username}#${discriminator}`,
        picture,
        custom_claims: { global_name: text(user, 'global_name') },
        avatar_url: picture,
        full_name: username,
        provider_id: subject,
      }),
    };
  },
};
