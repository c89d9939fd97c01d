// `custom:<id>` at /authorize and /callback, and at the id_token grant: the provider's row read now (never
// cached, so a disabled or deleted provider is refused from the next request on, on every thread and
// instance), its client secret opened, and its module and runtime built (docs/custom-providers.md#signing-in).
// Refusals carry the original's wording: "Unsupported provider: ..." at /authorize, its grant's own at the grant.
import { findCustomProvider, type CustomProviderRow } from '../../db/custom-oauth-providers.js';
import { apiError, type ErrorName } from '../errors.js';
import { secretBox } from '../mfa/encryption.js';
import type { CustomProviderName, ProviderRuntime, UsableProvider } from '../providers/types.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';
import { customModule, customRuntime } from './module.js';
import { discoveryFailed, discoveryUrlOf, fetchDiscovery } from './discovery.js';
import { customProviderConnections } from './public-connections.js';
import { goQuoted } from '../go-quoted.js';

/** `req`: a discovery made now gives up before its deadline (ensureDiscovery). */
export async function customProvider(
  ctx: AppContext,
  req: Pick<ApiRequest, 'msLeft'>,
  identifier: string,
  error: ErrorName,
): Promise<UsableProvider> {
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
  await ensureDiscovery(ctx, req, row);
  return { name: identifier as CustomProviderName, module: customModule(row), rt: customRuntime(ctx.config, row, secret) };
}

/**
 * `custom:<id>` at the id_token grant: an enabled OIDC row, refused in the original's words and codes,
 * which differ from /authorize's. No client secret is opened: checking a token needs none.
 */
export async function customIdTokenProvider(
  ctx: AppContext,
  req: Pick<ApiRequest, 'msLeft'>,
  identifier: string,
): Promise<{ row: CustomProviderRow; rt: ProviderRuntime }> {
  if (!ctx.config.customOAuth.enabled) throw apiError('validation_failed', 'Custom OAuth providers are disabled');
  const row = await findCustomProvider(ctx.db, identifier);
  if (!row) throw apiError('validation_failed', `Custom provider ${goQuoted(identifier)} not found`);
  if (!row.enabled) throw apiError('provider_disabled', `Custom provider ${goQuoted(identifier)} is disabled`);
  if (row.provider_type !== 'oidc') throw apiError('validation_failed', `Provider ${goQuoted(identifier)} is not an OIDC provider`);
  if (!row.issuer) throw apiError('validation_failed', `OIDC provider ${goQuoted(identifier)} missing issuer`);
  await ensureDiscovery(ctx, req, row);
  return { row, rt: customRuntime(ctx.config, row, '') };
}

/**
 * Every row the admin API writes holds its discovery document; one without (written elsewhere) is discovered
 * now. Its own bound (10 s) is as long as the request's default deadline, so a document that never came
 * raced the deadline into the 504: it gives up before the deadline instead (http/request-budget.ts), refused
 * as an unreachable document is (/authorize's and the grant's 400, /callback's redirect). Half the
 * time left at most: the sign-in's own calls to the provider (code exchange, keys) come after it.
 */
async function ensureDiscovery(ctx: AppContext, req: Pick<ApiRequest, 'msLeft'>, row: CustomProviderRow): Promise<void> {
  const issuer = row.issuer;
  if (row.provider_type !== 'oidc' || row.cached_discovery || !issuer) return;
  const url = discoveryUrlOf(issuer, row.discovery_url);
  const discover = () => fetchDiscovery(url, issuer, customProviderConnections(ctx.config));
  row.cached_discovery = await beforeDeadline(req, discover, () => discoveryFailed(url, 'no answer before the request deadline'), 0.5);
}
