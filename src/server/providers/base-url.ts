// Where a provider lives. Every endpoint is `https://<default host>` unless EXTERNAL_<PROVIDER>_URL gives
// another base (a self-hosted GitLab, a test server); the user API, where it is on a host of its own, may
// be moved apart by EXTERNAL_<PROVIDER>_API_URL (docs/oauth-providers.md).
import type { OAuthProviderConfig } from '../config/types.js';

/** The configured base without trailing slashes (as the original trims one), else `https://<defaultHost>`. */
export function baseUrl(configured: string, defaultHost: string): string {
  return configured ? configured.replace(/\/+$/, '') : `https://${defaultHost}`;
}

/**
 * The user API's base: EXTERNAL_<PROVIDER>_API_URL; else EXTERNAL_<PROVIDER>_URL, because the original has one
 * override that moves every host of a provider at once; else the API's default host.
 */
export function apiBaseUrl(config: OAuthProviderConfig, defaultHost: string): string {
  return baseUrl(config.apiUrl || config.url, defaultHost);
}

/** EXTERNAL_<PROVIDER>_CLIENT_ID is a comma list; the first id is the one that runs the code flow. */
export function flowClientId(config: OAuthProviderConfig): string {
  return config.clientId.split(',')[0].trim();
}
