// GET /scim/v2/ServiceProviderConfig, /ResourceTypes and /Schemas (docs/scim.md), and the SCIM 404 for any
// other path under /scim/v2. Open to anyone, as in the original: discovery documents describe the server,
// not its data (RFC 7644 section 4). The whole prefix is switched by EXPERIMENTAL_SCIM_ENABLED (scim/feature.ts).
import type { Handler } from '../http/types.js';
import { serviceProviderConfig } from '../scim/documents.js';
import { listAnswer, scimAnswer, scimError } from '../scim/protocol.js';

export const scimServiceProviderConfig: Handler = (_req, ctx) => scimAnswer(200, serviceProviderConfig(ctx.config));

/**
 * A list endpoint. Nothing here can filter, and the ServiceProviderConfig says so (filter.supported false);
 * a request that asks anyway is refused 403 (RFC 7644 section 4's advice for discovery endpoints), so a
 * client never takes an unfiltered list for a filtered one. Any `filter`, even empty, as the original.
 */
const list =
  (resources: unknown[]): Handler =>
  (req) =>
    req.query.has('filter') ? scimError(403, 'Filtering is not supported on this endpoint') : listAnswer(resources);

// No resource types (Users, Groups) and no schemas are served yet: both lists are empty.
export const scimResourceTypes = list([]);
export const scimSchemas = list([]);

/** Any other path under /scim/v2: RFC 7644's 404, in its error form. */
export const scimNotFound: Handler = () => scimError(404, 'Endpoint or resource does not exist');
