// Where this service provider lives for IdPs: SAML_EXTERNAL_URL, else API_EXTERNAL_URL, with the original's
// paths under /sso/ — its entity ID is its metadata URL (docs/sso-saml.md#the-service-provider).
import type { Config } from '../config/types.js';

export interface SpUrls {
  entityId: string;
  metadataUrl: string;
  acsUrl: string;
}

export function spUrls(config: Config): SpUrls {
  // Joined to the setting as written, as the original's URL type keeps it: a host's capitals or an explicit
  // default port stay, so the entity ID an IdP registered with the original is still ours.
  const configured = config.saml.externalUrl || config.api.externalUrl || 'http://localhost';
  const base = configured.split('#')[0].split('?')[0];
  const dir = base.endsWith('/') ? base : `${base}/`;
  const metadataUrl = `${dir}sso/saml/metadata`;
  return { entityId: metadataUrl, metadataUrl, acsUrl: `${dir}sso/saml/acs` };
}
