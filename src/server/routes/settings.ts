// GET /settings — the spec's keys (external, disable_signup, autoconfirm) plus the original's
// (mailer_autoconfirm, phone_autoconfirm, sms_provider, saml_enabled, ...): docs/api.md#get-settings.
// A provider shows true only when enabled and fully configured (providers/configured.ts).
// The answer depends only on the configuration, so it is serialised once.
import type { Config, OAuthProviderName } from '../config/types.js';
import type { ApiResponse, Handler } from '../http/types.js';
import { isProviderUsable } from '../providers/configured.js';
import { goJsonText } from '../http/go-json-text.js';

/**
 * The providers `external` lists, in the original's order (its ProviderSettings), email and phone among
 * them. `x` and `vercel_marketplace` are not listed, as the original does not list them.
 */
const LISTED: ReadonlyArray<OAuthProviderName | 'email' | 'phone'> = [
  'apple',
  'azure',
  'bitbucket',
  'discord',
  'facebook',
  'snapchat',
  'figma',
  'fly',
  'github',
  'gitlab',
  'google',
  'keycloak',
  'kakao',
  'linkedin',
  'linkedin_oidc',
  'notion',
  'spotify',
  'slack',
  'slack_oidc',
  'workos',
  'twitch',
  'twitter',
  'email',
  'phone',
  'zoom',
];

export function settingsBody(config: Config): Record<string, unknown> {
  const external: Record<string, boolean> = { anonymous_users: config.external.anonymousUsersEnabled };
  for (const name of LISTED) {
    if (name === 'email') external.email = config.external.emailEnabled;
    else if (name === 'phone') external.phone = config.external.phoneEnabled;
    else external[name] = isProviderUsable(config, name);
  }
  return {
    external,
    disable_signup: config.disableSignup,
    autoconfirm: config.mailer.autoconfirm,
    mailer_autoconfirm: config.mailer.autoconfirm,
    phone_autoconfirm: config.sms.autoconfirm,
    sms_provider: config.sms.provider,
    saml_enabled: config.saml.enabled,
    saml_private_key_next_configured: config.saml.enabled && config.saml.privateKeyNext !== '',
    passkeys_enabled: config.passkey.enabled,
  };
}

// The whole response, built once per configuration: the HTTP layer copies what it writes and never
// mutates a handler's response.
const cache = new WeakMap<Config, ApiResponse>();

export const settings: Handler = (_req, ctx) => {
  let response = cache.get(ctx.config);
  if (!response) {
    response = Object.freeze({
      body: goJsonText(settingsBody(ctx.config)),
      headers: Object.freeze({ 'Content-Type': 'application/json' }),
    });
    cache.set(ctx.config, response);
  }
  return response;
};
