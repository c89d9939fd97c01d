// Which OAuth providers can actually run: enabled AND given what the flow needs. An enabled provider with
// missing credentials is named in one start-up warning and treated as disabled by /settings and /authorize
// instead of stopping the service, as the original fails only at /authorize. The id_token grant needs no
// secret or redirect URI (acceptsIdTokens).
import { OAUTH_PROVIDERS, type Config, type OAuthProviderConfig, type OAuthProviderName } from '../config/types.js';

/** Why `name` cannot run, in the original's words ("provider is not enabled", "missing OAuth secret"), or null. */
export function providerProblem(name: OAuthProviderName, p: OAuthProviderConfig): string | null {
  if (!p.enabled) return 'provider is not enabled';
  if (!p.clientId.split(',').some((id) => id.trim())) return 'missing OAuth client ID';
  if (!p.secret) return 'missing OAuth secret';
  if (!p.redirectUri) return 'missing redirect URI';
  if (name === 'keycloak' && !p.url) return 'missing realm URL (EXTERNAL_KEYCLOAK_URL)';
  return null;
}

export const isProviderUsable = (config: Config, name: OAuthProviderName) =>
  providerProblem(name, config.external.providers[name]) === null;

/**
 * Whether the id_token grant takes `name`'s tokens: switched on, the only check the original's grant makes,
 * so that a native app (Sign in with Apple with EXTERNAL_IOS_BUNDLE_ID, Google One Tap) signs in with a
 * client ID alone, no secret or redirect URI; keycloak also needs its realm URL, which is its issuer.
 */
export function acceptsIdTokens(config: Config, name: OAuthProviderName): boolean {
  const p = config.external.providers[name];
  return p.enabled && (name !== 'keycloak' || !!p.url);
}

/** One line per enabled provider that cannot run, for the start-up warning. */
export function misconfiguredProviders(config: Config): string[] {
  return OAUTH_PROVIDERS.filter((name) => config.external.providers[name].enabled)
    .map((name) => [name, providerProblem(name, config.external.providers[name])] as const)
    .filter(([, problem]) => problem !== null)
    .map(([name, problem]) => `${name}: ${problem}`);
}

/** The ids of EXTERNAL_X_CLIENT_ID: the first runs the flow, every one is an accepted id_token audience. */
export const clientIds = (p: OAuthProviderConfig) =>
  p.clientId
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
