// SAML_ENABLED gates the SSO sign-in routes before anything else, as the original's requireSAMLEnabled does:
// with it off they answer 404 saml_provider_disabled (docs/api.md#saml-single-sign-on). The admin routes
// are not gated, there either.
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function samlEnabled(ctx: AppContext): void {
  if (!ctx.config.saml.enabled) throw apiError('saml_provider_disabled');
}
