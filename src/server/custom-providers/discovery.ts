// An OIDC provider's discovery document, fetched when an operator creates or re-points the provider
// (docs/custom-providers.md#oidc-discovery): at most 10 s and 1 MiB, no redirect followed, each member it
// declares of the JSON type the original's decoder takes, its `issuer` exactly the configured one, and the
// endpoints a sign-in needs present. The document is stored with the row (cached_discovery), so a sign-in
// never waits on discovery.
import { apiError } from '../errors.js';
import { goDecodeProblem, underGoFieldNames } from '../http/go-field-types.js';
import { wellFormed } from '../http/well-formed.js';
import { readCappedText } from '../outbound-body.js';
import { addressRefusal } from '../providers/outbound.js';
import type { RestrictedConnections } from '../providers/types.js';

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 1 << 20;
/** The original's Go type for the document, which its members must decode into (http/go-field-types.ts). */
const DOCUMENT_TYPE = 'utilities.OIDCDiscoveryDocument';
const REQUIRED = ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;
const KEPT = [
  ...REQUIRED,
  'userinfo_endpoint',
  'scopes_supported',
  'response_types_supported',
  'grant_types_supported',
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
];

/** `{issuer}/.well-known/openid-configuration`, unless the operator named another discovery URL. */
export function discoveryUrlOf(issuer: string, discoveryUrl: string | null): string {
  return discoveryUrl || `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** The refusal of a discovery document that could not be had from `url`, saying why. */
export function discoveryFailed(url: string, why: string) {
  return apiError('validation_failed', `OIDC discovery from "${url}" failed: ${why}`);
}

/** `restricted`: the connection may reach the addresses it allows only (custom-providers/public-connections.ts). */
export async function fetchDiscovery(
  url: string,
  expectedIssuer: string,
  restricted?: RestrictedConnections,
): Promise<Record<string, unknown>> {
  let doc: Record<string, unknown>;
  try {
    doc = await read(url, restricted);
  } catch (err) {
    throw discoveryFailed(url, (err as Error).message);
  }
  if (doc.issuer !== expectedIssuer) {
    const got = typeof doc.issuer === 'string' ? doc.issuer : '';
    throw discoveryFailed(url, `oidc: issuer mismatch, expected "${expectedIssuer}" got "${got}"`);
  }
  const missing = REQUIRED.filter((field) => typeof doc[field] !== 'string' || !doc[field]);
  if (missing.length > 0) {
    throw apiError('validation_failed', `OIDC discovery document is missing required fields: ${missing.join(', ')}`);
  }
  return storable(url, Object.fromEntries(KEPT.filter((k) => doc[k] != null).map((k) => [k, doc[k]])));
}

/**
 * The kept members as jsonb can hold them: PostgreSQL refuses a lone UTF-16 surrogate and a NUL there, which
 * would fail the row's write as a 500. A lone surrogate becomes U+FFFD, as the original's Go decoder reads
 * it; a NUL refuses the document (the original's write fails on it; docs/differences.md).
 */
function storable(url: string, kept: Record<string, unknown>): Record<string, unknown> {
  const text = wellFormed(kept) as Record<string, unknown>;
  // JSON.stringify writes U+0000 as this escape, in keys and values alike
  if (JSON.stringify(text).includes('\\u0000')) throw discoveryFailed(url, 'the document holds a NUL character');
  return text;
}

async function read(url: string, restricted?: RestrictedConnections): Promise<Record<string, unknown>> {
  const refused = await restricted?.refused(url);
  if (refused) throw new Error(refused);
  // `dispatcher` is Node's fetch's own option (undici), not in the DOM RequestInit type.
  const connections = restricted ? ({ dispatcher: restricted.dispatcher } as RequestInit) : {};
  let response: Response;
  try {
    response = await fetch(url, {
      ...connections,
      redirect: 'manual',
      headers: { Accept: 'application/json' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    const refusal = addressRefusal(err);
    throw new Error(timedOut ? `no answer within ${TIMEOUT_MS / 1000} s` : (refusal ?? 'the host is unreachable'), { cause: err });
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    // the original's words, with the status line as the server sent it
    const status = response.statusText ? `${response.status} ${response.statusText}` : `${response.status}`;
    throw new Error(`oidc: discovery request to ${url} returned ${status}`);
  }
  let text: string;
  try {
    text = await readCappedText(response, MAX_BYTES, () => new DocumentTooLarge(`the document is larger than ${MAX_BYTES} bytes`));
  } catch (err) {
    if (err instanceof DocumentTooLarge) throw err;
    throw new Error('the answer was cut off', { cause: err });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('the answer is not JSON');
  }
  // The original decodes the document into its struct: a member (or the document) of a JSON type its field
  // does not take fails the decoding, in its decoder's words, before the issuer is compared.
  const problem = goDecodeProblem(body, DOCUMENT_TYPE);
  if (problem) throw new Error(`oidc: failed to decode discovery document from ${url}: ${problem}`);
  // null decodes as an empty document (its issuer then does not match); a member is its field's under any
  // spelling of the field's name, as Go's decoder matches names
  return underGoFieldNames((body ?? {}) as Record<string, unknown>, DOCUMENT_TYPE);
}

class DocumentTooLarge extends Error {}
