// The ProviderRuntime every provider module receives (types.ts): its settings, outbound HTTP bounded by
// INTERNAL_HTTP_TIMEOUT, and id_token verification against the issuer's published keys. Key sets and
// discovery documents are cached per HTTP thread (a key set is fetched again when an unknown kid appears;
// discovery documents are kept EXTERNAL_OIDC_PROVIDER_CACHE_TTL, an hour by default, as the original does).
import { compactVerify, errors as joseErrors, type CompactVerifyGetKey } from 'jose';
import type { Config, OAuthProviderConfig } from '../config/types.js';
import { boundedFetch, DiscoveryError, jsonObject, ProviderError } from './outbound.js';
import { remoteKeySet } from './key-set.js';
import { discoveryDecodeProblem, underDocumentNames } from './discovery-decoding.js';
import { readVerifierClaims } from './go-oidc-claims.js';
import type { DiscoveryDocument, IdTokenExpectation, ProviderFetch, ProviderRuntime, RestrictedConnections } from './types.js';

/**
 * An id_token that failed a check: the callback answers every one with its profile error; the id_token
 * grant answers "Bad ID token", except for the two refusals it words apart (`refusal`): no `sub`, and an
 * `aud` naming none of the accepted clients (`audience`: the token's, as the original prints it).
 */
export class IdTokenError extends Error {
  constructor(
    message: string,
    readonly refusal: 'invalid' | 'no_subject' | 'audience' = 'invalid',
    readonly audience: string[] = [],
    /**
     * The signed claims, with the two worded refusals: the original reads the token's claims and checks its
     * at_hash before it looks at `sub` or `aud`, so the grant still answers "Bad ID token" when those fail.
     */
    readonly claims?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'IdTokenError';
  }
}

// Per HTTP thread (each thread has its own module instances): discovery documents by the URL they are read
// from, key sets by JWKS URL.
// Bounded, least recently used out first: an id_token's issuer picks the entry for some providers (any
// Microsoft tenant for Azure's id_token grant), so a client naming tenant after tenant must not grow them
// without end; an evicted provider is only fetched again.
const MAX_CACHED = 256;
const discoveries = new Map<string, CachedDiscovery>();
const keySets = new Map<string, CompactVerifyGetKey>();

/** The entry, marked as just used (a Map keeps insertion order: the first key is the least recently used). */
function recall<V>(cache: Map<string, V>, key: string): V | undefined {
  const value = cache.get(key);
  if (value !== undefined) {
    cache.delete(key);
    cache.set(key, value);
  }
  return value;
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.set(key, value);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
}

interface CachedDiscovery {
  /** the last document fetched, and when */
  doc?: DiscoveryDocument;
  fetchedAt: number;
  /** the fetch under way: requests meanwhile wait for it rather than start their own */
  fetching?: Promise<DiscoveryDocument>;
}

/**
 * The issuer's OIDC discovery document, fetched again once it is `ttlMs` old. As the original: when that
 * fetch fails, the last document is used while the issuer is unreachable (and the next request tries
 * again), so an outage of its discovery endpoint does not stop sign-ins; with no document yet, the
 * failure is the request's.
 */
function discover(fetch: ProviderFetch, issuer: string, ttlMs: number, discoveryUrl?: string): Promise<DiscoveryDocument> {
  const key = discoveryUrl ?? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let entry = recall(discoveries, key);
  if (entry?.doc && Date.now() - entry.fetchedAt < ttlMs) return Promise.resolve(entry.doc);
  if (entry?.fetching) return entry.fetching;
  if (!entry) remember(discoveries, key, (entry = { fetchedAt: 0 }));
  const cached = entry;
  const fetching = fetchDiscovery(fetch, key, issuer).then(
    (doc) => {
      cached.doc = doc;
      cached.fetchedAt = Date.now();
      return doc;
    },
    (err: unknown) => {
      if (cached.doc) return cached.doc;
      discoveries.delete(key);
      throw err;
    },
  );
  cached.fetching = fetching;
  const settled = () => {
    if (cached.fetching === fetching) cached.fetching = undefined;
  };
  fetching.then(settled, settled);
  return fetching;
}

async function fetchDiscovery(fetch: ProviderFetch, url: string, issuer: string): Promise<DiscoveryDocument> {
  try {
    const response = await fetch(url, { headers: { Accept: 'application/json' } });
    const decoded = await jsonObject(response);
    const undecodable = discoveryDecodeProblem(response, decoded);
    if (undecodable !== null) throw new ProviderError(undecodable);
    const body = underDocumentNames(decoded);
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (typeof body[field] !== 'string') throw new ProviderError(`${issuer}: discovery document lacks ${field}`);
    }
    return body as DiscoveryDocument;
  } catch (err) {
    throw err instanceof ProviderError ? new DiscoveryError(err) : err;
  }
}

/**
 * The key set of a JWKS URL (key-set.ts), kept per thread. A restricted one is checked before every use, as
 * a cached set may be used, or fetched again, long after the address was first allowed.
 */
async function keySet(fetch: ProviderFetch, jwksUri: string, restricted?: RestrictedConnections): Promise<CompactVerifyGetKey> {
  const refused = await restricted?.refused(jwksUri);
  if (refused) throw new ProviderError(`${new URL(jwksUri).host}: ${refused}`);
  // Fetched with the first runtime's fetch: every runtime of one kind (restricted or not) connects alike.
  const key = restricted ? `restricted ${jwksUri}` : jwksUri;
  let set = recall(keySets, key);
  if (!set) remember(keySets, key, (set = remoteKeySet(fetch, jwksUri)));
  return set;
}

/** `restricted`: the connections of a provider that may reach public addresses only (custom providers). */
export function createProviderRuntime(
  config: OAuthProviderConfig,
  external: Pick<Config['external'], 'httpTimeoutSeconds' | 'oidcProviderCacheTtlSeconds'>,
  restricted?: RestrictedConnections,
): ProviderRuntime {
  const timeoutSeconds = external.httpTimeoutSeconds;
  const fetch = boundedFetch(timeoutSeconds, restricted);
  const discoverIssuer = (issuer: string, discoveryUrl?: string) =>
    discover(fetch, issuer, external.oidcProviderCacheTtlSeconds * 1000, discoveryUrl);
  return {
    config,
    fetch,
    discover: discoverIssuer,
    verifyIdToken: (token, expect) => verifyIdToken(discoverIssuer, fetch, token, expect, restricted),
  };
}

/**
 * How far ahead of this host's clock a token's `nbf` may be, as the original's verifier allows (an issuer
 * such as Microsoft's sets `nbf` to the moment it signs). `exp` gets no such allowance there, nor here.
 */
const NBF_LEEWAY_SECONDS = 300;

async function verifyIdToken(
  discoverIssuer: (issuer: string) => Promise<DiscoveryDocument>,
  fetch: ProviderFetch,
  token: string,
  expect: IdTokenExpectation,
  restricted?: RestrictedConnections,
): Promise<Record<string, unknown>> {
  const issuers = Array.isArray(expect.issuer) ? expect.issuer : [expect.issuer];
  const jwksUri = expect.jwksUri ?? (await discoverIssuer(issuers[0])).jwks_uri;
  let raw: Record<string, unknown>;
  try {
    // The signature alone: no `algorithms` list means jose takes the algorithm from the matching JWK (its
    // `alg`, or the key type), so a token can only verify with the algorithm its issuer's key is for;
    // `none` and HS* never match. The claims are read and checked below as go-oidc reads them, which
    // jose's JWT checks cannot express (names in any case, numbers written as strings).
    const { payload, protectedHeader } = await compactVerify(token, await keySet(fetch, jwksUri, restricted), {
      algorithms: expect.algorithms,
    });
    if (protectedHeader.b64 === false) throw new IdTokenError('unencoded payload');
    raw = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch (err) {
    throw err instanceof IdTokenError ? err : new IdTokenError(describe(err));
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new IdTokenError('the payload is not a JSON object');
  const { claims, payload, misfit } = readVerifierClaims(raw);
  if (misfit !== null) throw new IdTokenError(`failed to unmarshal claims: ${misfit}`);
  if (!issuers.includes(claims.iss)) throw new IdTokenError('unexpected issuer');
  // A missing exp is Go's zero time, long past: expired there, logged here by its own cause.
  if (claims.exp === null) throw new IdTokenError('token has no exp claim');
  // Compared, as the original does, in whole seconds against the exact time.
  if (claims.exp * 1000 < Date.now()) throw new IdTokenError('token is expired');
  if (claims.nbf !== null && Date.now() + NBF_LEEWAY_SECONDS * 1000 < claims.nbf * 1000) throw new IdTokenError('token is not valid yet');
  if (expect.nonceHash !== undefined && claims.nonce !== expect.nonceHash) throw new IdTokenError('Nonces mismatch');
  // Absent, null or empty, as the original reads it into a string.
  if (claims.sub === '') throw new IdTokenError('id_token has no sub claim', 'no_subject', [], payload);
  // An empty accepted id (a client_id left empty) matches nothing, as in the original.
  if (!expect.audience.some((id) => id !== '' && claims.aud.includes(id)))
    throw new IdTokenError('unacceptable audience', 'audience', claims.aud, payload);
  return payload;
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'signature algorithm not allowed';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the issuer matches the token';
  if (err instanceof ProviderError) return err.message;
  if (err instanceof joseErrors.JOSEError) return err.message;
  return 'malformed token';
}
