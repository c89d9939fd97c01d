// A custom provider as the admin API shows it: the original's field names, never the client secret, the
// type-specific fields only when set (its `omitempty`), the stored discovery document as discovery_document.
import type { CustomProviderRow } from '../../db/custom-oauth-providers.js';

// The discovery document's members the original stores and shows, in its order; the first three and jwks_uri
// always, the others only when set. We keep more of the document (its signing algorithms, for sign-ins), but
// show only these, so the answer is the original's.
const SHOWN_DISCOVERY = ['issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'];
const ALWAYS_SHOWN = new Set(['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri']);
const SHOWN_LISTS = ['scopes_supported', 'response_types_supported', 'grant_types_supported', 'subject_types_supported'];

function shownDiscovery(doc: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!doc) return null;
  const shown: Record<string, unknown> = {};
  for (const key of SHOWN_DISCOVERY) {
    const value = typeof doc[key] === 'string' ? doc[key] : '';
    if (value || ALWAYS_SHOWN.has(key)) shown[key] = value;
  }
  for (const key of SHOWN_LISTS) if (Array.isArray(doc[key]) && doc[key].length > 0) shown[key] = doc[key];
  return shown;
}

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
    ...optional('discovery_document', shownDiscovery(p.cached_discovery)),
    ...optional('authorization_url', p.authorization_url),
    ...optional('token_url', p.token_url),
    ...optional('userinfo_url', p.userinfo_url),
    ...optional('jwks_uri', p.jwks_uri),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
