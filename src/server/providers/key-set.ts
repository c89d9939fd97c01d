// An issuer's JSON Web Key Set for checking its id_tokens, fetched with the provider runtime's own fetch
// (outbound.ts): INTERNAL_HTTP_TIMEOUT bounds the whole answer, its body included, the answer is read up to
// PROVIDER_ANSWER_MAX_BYTES, and the runtime's proxy and address restrictions apply. jose's remote key set
// bounds only the wait for the headers and reads any size: a key set endpoint that stalled after its
// headers held the one fetch jose shares for good, so every later token of that issuer waited on it.
// Otherwise it behaves as jose's did: fetched on first use, again after MAX_AGE_MS, and again when a token
// names a key not in the set (at most once per COOLDOWN_MS).
import { createLocalJWKSet, errors as joseErrors, type CompactVerifyGetKey, type JSONWebKeySet } from 'jose';
import { jsonObject } from './outbound.js';
import type { ProviderFetch } from './types.js';

const MAX_AGE_MS = 10 * 60_000;
const COOLDOWN_MS = 30_000;

export function remoteKeySet(fetch: ProviderFetch, jwksUri: string): CompactVerifyGetKey {
  let local: CompactVerifyGetKey | null = null;
  let fetchedAt = 0;
  // Concurrent checks share one fetch; it always ends (the bounded fetch), and a failed one is not kept.
  let pending: Promise<CompactVerifyGetKey> | null = null;
  const reload = () =>
    (pending ??= (async () => {
      try {
        const body = await jsonObject(await fetch(jwksUri, { headers: { Accept: 'application/json' } }));
        local = createLocalJWKSet(body as unknown as JSONWebKeySet);
        fetchedAt = Date.now();
        return local;
      } finally {
        pending = null;
      }
    })());

  return async (header, token) => {
    const keys = local && Date.now() - fetchedAt < MAX_AGE_MS ? local : await reload();
    try {
      return await keys(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - fetchedAt < COOLDOWN_MS) throw err;
      return (await reload())(header, token);
    }
  };
}
