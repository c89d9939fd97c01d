// SAML_ENABLED gates every SSO route before anything else, as the original's requireSAMLEnabled does:
// with it off they answer 404 saml_provider_disabled (docs/sso-saml.md).
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function samlEnabled(ctx: AppContext): void {
  if (!ctx.config.saml.enabled) throw apiError('saml_provider_disabled');
}
