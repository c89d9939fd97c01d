// Linking domains (docs/oauth.md#linking-domains): an email address links accounts only among identities
// whose providers share a domain. The name is worked out at every sign-in from the configuration, never
// stored, so moving a provider to another domain changes only the decisions made after the restart.
import { apiError, ERRORS } from '../errors.js';

/** Email and phone sign-ins, and every provider the configuration does not place elsewhere. */
export const DEFAULT_LINKING_DOMAIN = 'default';

/**
 * The linking domain of `provider`. Each SSO provider is a domain of its own whatever the map says: an
 * identity provider vouches only for its own users, so its accounts must not merge with another's.
 */
export function linkingDomainOf(provider: string, domains: Readonly<Record<string, string>>): string {
  if (provider.startsWith('sso:')) return provider;
  // hasOwn: a provider named like an Object.prototype member (custom:… ids are free text) is not in the map.
  return Object.hasOwn(domains, provider) ? domains[provider] : DEFAULT_LINKING_DOMAIN;
}

/** Several accounts hold the address within one domain: the original's 500, which names the domain. */
export const multipleAccountsIn = (domain: string) =>
  apiError('oauth_multiple_accounts', `${ERRORS.oauth_multiple_accounts.msg}: ${domain}`);
