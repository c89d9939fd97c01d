// A custom provider as the admin API shows it: the original's field names, never the client secret, the
// type-specific fields only when set (its `omitempty`), the stored discovery document as discovery_document.
import type { CustomProviderRow } from '../../db/custom-oauth-providers.js';

export function providerJson(p: CustomProviderRow): Record<string, unknown> {
  const optional = (key: string, value: unknown) => (value === null || value === undefined ? {} : { [key]: value });
  return {
    id: p.id,
    provider_type: p.provider_type,
    identifier: p.identifier,
    name: p.name,
    client_id: p.client_id,
    acceptable_client_ids: p.acceptable_client_ids,
    scopes: p.scopes,
    pkce_enabled: p.pkce_enabled,
    attribute_mapping: p.attribute_mapping,
    custom_claims_allowlist: p.custom_claims_allowlist,
    authorization_params: p.authorization_params,
    enabled: p.enabled,
    email_optional: p.email_optional,
    ...optional('issuer', p.issuer),
    ...optional('discovery_url', p.discovery_url),
    skip_nonce_check: p.skip_nonce_check,
    ...optional('discovery_document', p.cached_discovery),
    ...optional('authorization_url', p.authorization_url),
    ...optional('token_url', p.token_url),
    ...optional('userinfo_url', p.userinfo_url),
    ...optional('jwks_uri', p.jwks_uri),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
