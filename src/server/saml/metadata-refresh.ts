// A provider's metadata at the ACS: the stored document, refetched first from metadata_url once stale —
// past its validUntil, past its cacheDuration since it was stored, or a day old when it names neither, as
// the original decides. A refetch that fails (or names another entity) is logged and the stored document
// used; one that succeeds is stored (docs/sso-saml.md#identity-providers).
import { ApiError } from '../errors.js';
import { refreshSamlMetadata, type SsoProviderRow } from '../../db/sso-providers.js';
import { fetchSamlMetadata } from './fetch-metadata.js';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';

const DAY = 24 * 3600 * 1000;

/** `req`: the refetch gives up well before its deadline (http/request-budget.ts), and the stored document is used. */
export async function freshMetadata(
  ctx: AppContext,
  provider: SsoProviderRow,
  req: Pick<ApiRequest, 'msLeft'>,
  now = Date.now(),
): Promise<IdpMetadata> {
  const stored = parseIdpMetadata(provider.metadata_xml);
  const url = provider.metadata_url;
  if (!url || !isStale(stored, provider.saml_updated_at.getTime(), now)) return stored;
  try {
    const fetch = () => fetchSamlMetadata(url, ctx.config.external.httpTimeoutSeconds);
    // Half the time left at most: the response is still to be verified and its user signed in after it.
    const raw = await beforeDeadline(req, fetch, () => new Error('no answer before the request deadline'), 0.5);
    const fetched = parseIdpMetadata(raw);
    if (fetched.entityId !== stored.entityId) throw new Error(`metadata_url now describes ${fetched.entityId}`);
    await refreshSamlMetadata(ctx.db, provider.id, raw);
    return fetched;
  } catch (err) {
    const reason = err instanceof ApiError || err instanceof Error ? err.message : String(err);
    ctx.log.warn({ sso_provider_id: provider.id, reason }, 'SAML metadata could not be refreshed, continuing with the stored metadata');
    return stored;
  }
}

function isStale(m: IdpMetadata, storedAt: number, now: number): boolean {
  if (m.validUntil && now > m.validUntil.getTime()) return true;
  if (m.cacheDurationMs !== null && now > storedAt + m.cacheDurationMs) return true;
  return !m.validUntil && m.cacheDurationMs === null && now > storedAt + DAY;
}
