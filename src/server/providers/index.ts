// The provider registry: provider name → module (one file per provider, src/server/providers/<name>.ts),
// and the runtime each module runs with, built once per HTTP thread and configuration.
import type { Config, OAuthProviderName } from '../config/types.js';
import type { ExternalProvider, ProviderRuntime } from './types.js';
import { createProviderRuntime } from './runtime.js';
import type { OidcProvider } from './oidc.js';
import { apple } from './apple.js';
import { azure } from './azure.js';
import { github } from './github.js';
import { google } from './google.js';
import { keycloak } from './keycloak.js';
import { linkedinOidc } from './linkedin_oidc.js';
import { vercelMarketplace } from './vercel_marketplace.js';
import { PLAIN_PROVIDERS } from './plain.js';

/** OpenID Connect providers: they also take part in the id_token grant. */
export const OIDC_PROVIDERS: Partial<Record<OAuthProviderName, OidcProvider>> = {
  apple,
  azure,
  google,
  keycloak,
  linkedin_oidc: linkedinOidc,
  vercel_marketplace: vercelMarketplace,
};

/** Every provider the configuration names has its module: a provider without one does not compile. */
export const PROVIDERS: Record<OAuthProviderName, ExternalProvider> = {
  apple,
  azure,
  google,
  keycloak,
  linkedin_oidc: linkedinOidc,
  vercel_marketplace: vercelMarketplace,
  ...PLAIN_PROVIDERS,
  github,
};

/** What the id_token grant needs of a module: to verify a token of its provider and map its claims. */
export type IdTokenProvider = Pick<OidcProvider, 'endpoints' | 'verify' | 'profile'>;

/**
 * The providers that can verify an id_token of theirs: every OIDC module, and any other module that offers
 * `endpoints`, `verify` and `profile` the same way (facebook's limited login, kakao). The id_token grant
 * takes the original's list of them (grants/id-token-source.ts).
 */
export function idTokenProvider(name: OAuthProviderName): IdTokenProvider | undefined {
  const module = PROVIDERS[name] as Partial<IdTokenProvider> | undefined;
  return module && typeof module.verify === 'function' && typeof module.profile === 'function' && typeof module.endpoints === 'function'
    ? (module as IdTokenProvider)
    : undefined;
}

const runtimes = new WeakMap<Config, Map<OAuthProviderName, ProviderRuntime>>();

/** The runtime of `name` under this configuration, made once. */
export function runtimeFor(config: Config, name: OAuthProviderName): ProviderRuntime {
  let byName = runtimes.get(config);
  if (!byName) {
    byName = new Map();
    runtimes.set(config, byName);
  }
  let rt = byName.get(name);
  if (!rt) {
    rt = createProviderRuntime(config.external.providers[name], config.external);
    byName.set(name, rt);
  }
  return rt;
}
