// Slack's deprecated v1 "Sign in with Slack" (kept for existing apps; new ones use slack_oidc). Slack says
// nothing about verification here and the original counts the address as verified. Slack reports its
// errors inside HTTP 200 bodies (`ok: false`): the code exchange refuses those, and a profile without a
// user id is refused.
import { baseUrl } from './base-url.js';
import { claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const host = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'slack.com');

export const slack: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'slack',
  defaultScopes: ['profile', 'email', 'openid'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${host(rt)}/oauth/authorize`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${host(rt)}/api/oauth.access`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const user = await getUserJson(rt, `${host(rt)}/api/openid.connect.userInfo`, tokens.accessToken);
    const subject = requireSubject(text(user, 'https://slack.com/user_id'), 'slack');
    const email = text(user, 'email');
    const name = text(user, 'name');
    const picture = text(user, 'picture');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
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
