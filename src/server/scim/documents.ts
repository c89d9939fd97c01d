// The SCIM discovery documents (RFC 7643 section 5, RFC 7644 section 4). The service provider
// configuration says what the protocol offers here: none of the optional features (PATCH, bulk, filter,
// password change, sort, ETags), and OAuth bearer tokens (RFC 6750) as the one, primary, way to
// authenticate, as the original advertises. No resource types and no schemas are served yet, so those two
// lists are empty.
import type { Config } from '../config/types.js';

/** Where SCIM lives under API_EXTERNAL_URL (RFC 7644 section 3.13: the version is part of the base path). */
export const SCIM_BASE_PATH = '/scim/v2';

const SERVICE_PROVIDER_CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';

// RFC 7643 section 5's authenticationSchemes entry for bearer tokens; the name and description are the
// wording of the RFC's own example (section 8.5), which SCIM clients show to administrators.
const BEARER_TOKEN_SCHEME = {
  type: 'oauthbearertoken',
  name: 'OAuth Bearer Token',
  description: 'Authentication scheme using the OAuth Bearer Token Standard',
  specUri: 'http://www.rfc-editor.org/info/rfc6750',
  primary: true,
};

/** The SCIM base URL: API_EXTERNAL_URL (its path kept, trailing slashes already removed at load) + /scim/v2. */
export const scimBaseUrl = (config: Pick<Config, 'api'>): string => config.api.externalUrl.replace(/\/+$/, '') + SCIM_BASE_PATH;

/** GET /scim/v2/ServiceProviderConfig: the document, with meta.location naming its own URL (RFC 7643 section 3.1). */
export function serviceProviderConfig(config: Pick<Config, 'api'>): Record<string, unknown> {
  const unsupported = { supported: false };
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    patch: unsupported,
    // bulk and filter carry their limits even when unsupported: the RFC marks them required
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: false, maxResults: 0 },
    changePassword: unsupported,
    sort: unsupported,
    etag: unsupported,
    authenticationSchemes: [BEARER_TOKEN_SCHEME],
    meta: { resourceType: 'ServiceProviderConfig', location: `${scimBaseUrl(config)}/ServiceProviderConfig` },
  };
}
