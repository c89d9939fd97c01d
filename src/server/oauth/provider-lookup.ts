// The module and runtime of a provider named in a request, or the original's "Unsupported provider: ..." refusal.
// A `custom:<id>` name is looked up in custom_oauth_providers at every request (docs/custom-providers.md#signing-in).
import { OAUTH_PROVIDERS, type OAuthProviderName } from '../config/types.js';
import { apiError, type ErrorName } from '../errors.js';
import { PROVIDERS, runtimeFor } from '../providers/index.js';
import { providerProblem } from '../providers/configured.js';
import type { UsableProvider } from '../providers/types.js';
import { customProvider } from '../custom-providers/lookup.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';

const isProviderName = (name: string): name is OAuthProviderName => (OAUTH_PROVIDERS as readonly string[]).includes(name);

/**
 * `error` names the table entry to refuse with: /authorize answers validation_failed, /callback oauth_provider_not_supported.
 * `req`: a custom provider's discovery, when made now, gives up before its deadline (custom-providers/lookup.ts).
 */
export async function usableProvider(
  ctx: AppContext,
  req: Pick<ApiRequest, 'msLeft'>,
  given: string,
  error: ErrorName = 'provider_unsupported',
): Promise<UsableProvider> {
  // Provider names are matched in any case, as the original lower-cases them (?provider=GitHub).
  const name = given.toLowerCase();
  if (name.startsWith('custom:')) return customProvider(ctx, req, name, error);
  const module = isProviderName(name) ? PROVIDERS[name] : undefined;
  if (!isProviderName(name) || !module) throw apiError(error, `Unsupported provider: Provider ${name} could not be found`);
  const problem = providerProblem(name, ctx.config.external.providers[name]);
  if (problem) throw apiError(error, `Unsupported provider: ${problem}`);
  return { name, module, rt: runtimeFor(ctx.config, name) };
}
