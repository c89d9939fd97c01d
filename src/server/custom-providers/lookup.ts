// `custom:<id>` at /authorize and /callback: the provider's row read now (never cached, so a disabled or
// deleted provider is refused from the next request on, on every thread and instance), its client secret
// opened, and its module and runtime built (docs/custom-providers.md#signing-in). Refusals carry the
// original's "Unsupported provider: ..." wording.
import { findCustomProvider } from '../../db/custom-oauth-providers.js';
import { apiError, type ErrorName } from '../errors.js';
import { secretBox } from '../mfa/encryption.js';
import type { CustomProviderName, UsableProvider } from '../providers/types.js';
import type { AppContext } from '../context.js';
import { customModule, customRuntime } from './module.js';
import { discoveryUrlOf, fetchDiscovery } from './discovery.js';
import { customProviderConnections } from './public-connections.js';

export async function customProvider(ctx: AppContext, identifier: string, error: ErrorName): Promise<UsableProvider> {
  const refuse = (why: string) => apiError(error, `Unsupported provider: ${why}`);
  if (!ctx.config.customOAuth.enabled) throw refuse('custom OAuth providers are disabled');
  const row = await findCustomProvider(ctx.db, identifier);
  if (!row) throw refuse(`custom provider ${identifier} not found`);
  if (!row.enabled) throw refuse(`custom provider ${identifier} is disabled`);
  let secret: string;
  try {
    secret = secretBox(ctx.config).open(row.id, row.client_secret).value;
  } catch (err) {
    ctx.log.error({ err, provider: identifier }, 'custom provider client secret does not open');
    throw refuse(`error decrypting client secret for provider ${identifier}`);
  }
  // Every row the admin API writes holds its discovery document; one without (written elsewhere) is discovered now.
  if (row.provider_type === 'oidc' && !row.cached_discovery && row.issuer) {
    row.cached_discovery = await fetchDiscovery(
      discoveryUrlOf(row.issuer, row.discovery_url),
      row.issuer,
      customProviderConnections(ctx.config),
    );
  }
  return { name: identifier as CustomProviderName, module: customModule(row), rt: customRuntime(ctx.config, row, secret) };
}
