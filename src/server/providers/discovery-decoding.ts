// The check the original's OIDC library makes of a discovery document it fetches for a built-in provider
// (docs/oauth.md#discovery-documents): it decodes the document into its own struct, so a member of a JSON
// type that struct's field does not take (an `issuer` that is a number, a `jwks_uri` that is an object)
// fails the discovery, and the provider with it, in that library's words.
import { goDecodeProblem, underGoFieldNames } from '../http/go-field-types.js';

/** The library's Go type for the document (http/go-field-types.ts). */
const DOCUMENT_TYPE = 'oidc.providerJSON';

/**
 * The library's words for why `doc`, read from `response`, does not decode, or null when it does. The
 * library names the answer's Content-Type beside the decoder's own words.
 */
export function discoveryDecodeProblem(response: Response, doc: unknown): string | null {
  const problem = goDecodeProblem(doc, DOCUMENT_TYPE);
  if (problem === null) return null;
  const contentType = response.headers.get('content-type') ?? '';
  const why =
    contentType.split(';')[0].trim().toLowerCase() === 'application/json'
      ? `got Content-Type = application/json, but could not unmarshal as JSON: ${problem}`
      : `expected Content-Type = application/json, got ${JSON.stringify(contentType)}: ${problem}`;
  return `oidc: failed to decode provider discovery object: ${why}`;
}

/**
 * The document with each member the library's struct declares under its field's name, whatever its spelling
 * (`AUTHORIZATION_ENDPOINT`), as Go's decoder matches names; other members are kept as they are.
 */
export function underDocumentNames(doc: Record<string, unknown>): Record<string, unknown> {
  return underGoFieldNames(doc, DOCUMENT_TYPE);
}
