// GET of an IdP's metadata_url: HTTPS only (checked by the caller), bounded by INTERNAL_HTTP_TIMEOUT and by
// size, no redirects followed. Every failure is a 400 saml_metadata_fetch_failed naming the URL: the
// original's wording for a non-200 answer, ours for an unreachable host or an oversized document (where the
// original answers 500 or reads without bound).
import { ApiError, apiError } from '../errors.js';

/** A metadata document larger than this is refused (real IdP metadata is a few KiB; federations use aggregates we do not take). */
export const METADATA_MAX_BYTES = 1024 * 1024;

export async function fetchSamlMetadata(url: string, timeoutSeconds: number): Promise<string> {
  let response: Response;
  const signal = AbortSignal.timeout(timeoutSeconds * 1000);
  try {
    response = await fetch(url, {
      redirect: 'manual',
      signal,
      headers: { Accept: 'application/xml;charset=UTF-8', 'Accept-Charset': 'UTF-8' },
    });
  } catch {
    throw apiError('saml_metadata_fetch_failed', `Error fetching SAML Metadata from URL '${url}'`);
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
    throw apiError('saml_metadata_fetch_failed', `Error fetching SAML Metadata from URL '${url}'`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
