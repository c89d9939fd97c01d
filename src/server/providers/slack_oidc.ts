// "Sign in with Slack" over OpenID Connect: the person from Slack's userInfo endpoint, whose
// `email_verified` decides whether the address is verified. Errors come inside HTTP 200 bodies
// (`ok: false`), refused as in slack.ts.
import { baseUrl } from './base-url.js';
import { claims, flag, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const host = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'slack.com');

export const slackOidc: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'slack_oidc',
  defaultScopes: ['profile', 'email', 'openid'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${host(rt)}/openid/connect/authorize`),
  exchangeCode: (rt, code) =>
    exchangeAuthorizationCode(rt, { tokenUrl: `${host(rt)}/api/openid.connect.token`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${host(rt)}/api/openid.connect.userInfo`, tokens.accessToken);
    const subject = requireSubject(text(user, 'https://slack.com/user_id'), 'slack_oidc');
    const email = text(user, 'email');
    const name = text(user, 'name');
    const picture = text(user, 'picture');
    return {
      subject,
      emails: email ? [{ email, verified: flag(user, 'email_verified'), primary: true }] : [],
      claims: claims({
        iss: `${host(rt)}/api`,
        sub: subject,
        name,
        picture,
        custom_claims: { 'https://slack.com/team_id': text(user, 'https://slack.com/team_id') },
        avatar_url: picture,
        full_name: name,
        provider_id: subject,
      }),
    };
  },
};
