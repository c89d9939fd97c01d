// GET of an IdP's metadata_url: HTTPS only (checked by the caller), bounded by INTERNAL_HTTP_TIMEOUT and by
// size. Redirects are followed, as the original's HTTP client follows them (an IdP that moved its metadata
// keeps being refreshed), at most 10 and only to HTTPS. Every failure is a 400 saml_metadata_fetch_failed
// naming the URL: the original's wording for a non-200 answer, ours for an unreachable host, a redirect we do
// not follow or an oversized document (where the original answers 500 or reads without bound).
import { ApiError, apiError } from '../errors.js';

/** A metadata document larger than this is refused (real IdP metadata is a few KiB; federations use aggregates we do not take). */
export const METADATA_MAX_BYTES = 1024 * 1024;

/** As many redirects as Go's default HTTP client follows. */
const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The refusal of metadata that could not be had from `url` (unreachable, no answer in time, a redirect not followed). */
export function metadataFetchFailed(url: string) {
  return apiError('saml_metadata_fetch_failed', `Error fetching SAML Metadata from URL '${url}'`);
}

export async function fetchSamlMetadata(url: string, timeoutSeconds: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutSeconds * 1000);
  const failed = () => metadataFetchFailed(url);
  let response: Response;
  let at = url;
  for (let redirects = 0; ; redirects++) {
    try {
      response = await fetch(at, {
        redirect: 'manual',
        signal,
        headers: { Accept: 'application/xml;charset=UTF-8', 'Accept-Charset': 'UTF-8' },
      });
    } catch {
      throw failed();
    }
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) break;
    await response.body?.cancel();
    // Parsed against the URL that answered, as a relative Location must be; never to plain HTTP.
    const next = URL.canParse(location, at) ? new URL(location, at) : null;
    if (redirects >= MAX_REDIRECTS || next?.protocol !== 'https:') throw failed();
    at = next.href;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw apiError('saml_metadata_fetch_failed', `HTTP ${response.status} error fetching SAML Metadata from URL '${url}'`);
  }
  return readBounded(response, url);
}

async function readBounded(response: Response, url: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!response.body) return '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > METADATA_MAX_BYTES) {
        await reader.cancel();
        throw apiError('saml_metadata_fetch_failed', `SAML Metadata at URL '${url}' is larger than ${METADATA_MAX_BYTES} bytes`);
      }
      chunks.push(Buffer.from(value));
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw metadataFetchFailed(url);
  }
  return Buffer.concat(chunks).toString('utf8');
}
