// What the original's SCIM server sends (docs/scim.md), shared by the SCIM tests: the ServiceProviderConfig in
// its member order (JSON.stringify then gives the exact text), the empty list, and the RFC 7644 refusals.

/** The whole document a client reads, for a service whose SCIM base URL is `base`. */
export const expectedConfig = (base: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  patch: { supported: false },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: false, maxResults: 0 },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'OAuth Bearer Token',
      description: 'Authentication scheme using the OAuth Bearer Token Standard',
      specUri: 'http://www.rfc-editor.org/info/rfc6750',
      primary: true,
    },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
});
export const EMPTY_LIST = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
  totalResults: 0,
  startIndex: 1,
  itemsPerPage: 0,
  Resources: [],
};
// No refusal of the original carries a scimType: it is left out, not sent empty.
export const scimError = (status: number, detail: string) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
  detail,
  status: String(status),
});
export const NOT_FOUND = scimError(404, 'Endpoint or resource does not exist');
export const FILTER_FORBIDDEN = scimError(403, 'Filtering is not supported on this endpoint');
