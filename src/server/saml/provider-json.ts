// An SSO provider as the admin API answers it, in the original's shape (docs/sso-saml.md#identity-providers).
import type { SsoProviderRow } from '../../db/sso-providers.js';

export function providerJson(p: SsoProviderRow, withMetadata = true): Record<string, unknown> {
  const saml: Record<string, unknown> = { entity_id: p.entity_id };
  if (withMetadata && p.metadata_xml) saml.metadata_xml = p.metadata_xml;
  if (p.metadata_url) saml.metadata_url = p.metadata_url;
  saml.attribute_mapping = p.attribute_mapping ?? {};
  if (p.name_id_format) saml.name_id_format = p.name_id_format;
  return {
    id: p.id,
    // Left out only when there is none: a stored "" is answered, as the original's omitempty on a pointer does.
    ...(p.resource_id !== null ? { resource_id: p.resource_id } : {}),
    disabled: p.disabled,
    saml,
    domains: p.domains.map((domain) => ({ domain })),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
