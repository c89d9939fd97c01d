// The module and runtime of a provider named in a request, or the original's "Unsupported provider: ..." refusal.
import { OAUTH_PROVIDERS, type OAuthProviderName } from '../config/types.js';
import { apiError, type ErrorName } from '../errors.js';
import { PROVIDERS, runtimeFor } from '../providers/index.js';
import { providerProblem } from '../providers/configured.js';
import type { ExternalProvider, ProviderRuntime } from '../providers/types.js';
import type { AppContext } from '../context.js';

export interface UsableProvider {
  name: OAuthProviderName;
  module: ExternalProvider;
  rt: ProviderRuntime;
}

const isProviderName = (name: string): name is OAuthProviderName => (OAUTH_PROVIDERS as readonly string[]).includes(name);

/** `error` names the table entry to refuse with: /authorize answers validation_failed, /callback oauth_provider_not_supported. */
export function usableProvider(ctx: AppContext, name: string, error: ErrorName = 'provider_unsupported'): UsableProvider {
  const module = isProviderName(name) ? PROVIDERS[name] : undefined;
  if (!isProviderName(name) || !module) throw apiError(error, `Unsupported provider: Provider ${name} could not be found`);
  const problem = providerProblem(name, ctx.config.external.providers[name]);
  if (problem) throw apiError(error, `Unsupported provider: ${problem}`);
  return { name, module, rt: runtimeFor(ctx.config, name) };
}
