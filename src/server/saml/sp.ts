// Where this service provider lives for IdPs: SAML_EXTERNAL_URL, else API_EXTERNAL_URL, with the original's
// paths under /sso/ — its entity ID is its metadata URL (docs/sso-saml.md#the-service-provider).
import type { Config } from '../config/types.js';

export interface SpUrls {
  entityId: string;
  metadataUrl: string;
  acsUrl: string;
}

export function spUrls(config: Config): SpUrls {
  const base = new URL(config.saml.externalUrl || config.api.externalUrl || 'http://localhost');
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  const metadataUrl = new URL('sso/saml/metadata', base).href;
  return { entityId: metadataUrl, metadataUrl, acsUrl: new URL('sso/saml/acs', base).href };
}
