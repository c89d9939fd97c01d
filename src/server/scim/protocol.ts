// The SCIM protocol's message forms (RFC 7644): every SCIM answer, success or refusal, is JSON sent as
// application/scim+json (section 8.1). Refusals are the section 3.12 error message, not the service's
// {code, error_code, msg}: SCIM clients parse `schemas`, `status` and `detail`.
import type { ApiResponse } from '../http/types.js';
import { goJsonText } from '../http/go-json-text.js';

export const SCIM_MEDIA_TYPE = 'application/scim+json';

const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** A SCIM answer: the body as JSON, with the SCIM media type. */
export function scimAnswer(status: number, body: unknown): ApiResponse {
  return { status, headers: { 'Content-Type': SCIM_MEDIA_TYPE }, body: goJsonText(body) };
}

/**
 * An RFC 7644 section 3.12 error: `status` is the HTTP status as a string, as the RFC defines it; `scimType`
 * (the RFC's detail error keyword) and `detail` are left out when empty, as the original leaves them.
 */
export function scimError(status: number, detail: string, scimType = ''): ApiResponse {
  const body: Record<string, unknown> = { schemas: [ERROR_SCHEMA] };
  if (scimType) body.scimType = scimType;
  if (detail) body.detail = detail;
  body.status = String(status);
  return scimAnswer(status, body);
}

/**
 * An RFC 7644 section 3.4.2 list answer holding every resource at once: no paging, so the page is the
 * whole result (startIndex 1, itemsPerPage = totalResults). `Resources` is capitalised, as the RFC spells it.
 */
export function listAnswer(resources: unknown[]): ApiResponse {
  return scimAnswer(200, {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  });
}
