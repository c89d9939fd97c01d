// The ProviderRuntime every provider module receives (types.ts): its settings, outbound HTTP bounded by
// INTERNAL_HTTP_TIMEOUT, and id_token verification against the issuer's published keys. Key sets and
// discovery documents are cached per HTTP thread (jose refetches a key set when an unknown kid appears;
// discovery documents are kept an hour, as the original does).
import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import type { OAuthProviderConfig } from '../config/types.js';
import { boundedFetch, jsonObject, ProviderError } from './outbound.js';
import type { IdTokenExpectation, ProviderFetch, ProviderRuntime, RestrictedConnections } from './types.js';

const DISCOVERY_TTL_MS = 60 * 60 * 1000;

/** An id_token that failed a check: the flow answers it as "Bad ID token" / the callback's error. */
export class IdTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdTokenError';
  }
}

export interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  [key: string]: unknown;
}

// Per HTTP thread (each thread has its own module instances): discovery documents by issuer, key sets by JWKS URL.
const discoveries = new Map<string, { at: number; doc: Promise<DiscoveryDocument> }>();
const keySets = new Map<string, JWTVerifyGetKey>();

/** The issuer's OIDC discovery document, cached an hour; a failed lookup is retried by the next request. */
export function discover(fetch: ProviderFetch, issuer: string): Promise<DiscoveryDocument> {
  const key = issuer.replace(/\/+$/, '');
  const cached = discoveries.get(key);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.doc;
  const doc = (async () => {
    const body = await jsonObject(await fetch(`${key}/.well-known/openid-configuration`, { headers: { Accept: 'application/json' } }));
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (typeof body[field] !== 'string') throw new ProviderError(`${key}: discovery document lacks ${field}`);
    }
    return body as DiscoveryDocument;
  })();
  discoveries.set(key, { at: Date.now(), doc });
  doc.catch(() => discoveries.delete(key));
  return doc;
}

/** jose's remote key set for a JWKS URL: fetched on first use, refetched when a token names an unknown kid. */
function keySet(jwksUri: string, timeoutSeconds: number, restricted?: RestrictedConnections): JWTVerifyGetKey {
  const key = restricted ? `restricted ${jwksUri}` : jwksUri;
  let set = keySets.get(key);
  if (!set) {
    const refused = restricted?.refusedLiteral(jwksUri);
    if (refused) throw new ProviderError(`${new URL(jwksUri).host}: ${refused}`);
    set = createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: timeoutSeconds * 1000,
      cooldownDuration: 30_000,
      ...(restricted && jwksUri.startsWith('https:') ? { agent: restricted.httpsAgent } : {}),
    });
    keySets.set(key, set);
  }
  return set;
}

/** `restricted`: the connections of a provider that may reach public addresses only (custom providers). */
export function createProviderRuntime(
  config: OAuthProviderConfig,
  timeoutSeconds: number,
  restricted?: RestrictedConnections,
): ProviderRuntime {
  const fetch = boundedFetch(timeoutSeconds, restricted);
  return {
    config,
    fetch,
    verifyIdToken: (token, expect) => verifyIdToken(fetch, timeoutSeconds, token, expect, restricted),
  };
}

async function verifyIdToken(
  fetch: ProviderFetch,
  timeoutSeconds: number,
  token: string,
  expect: IdTokenExpectation,
  restricted?: RestrictedConnections,
): Promise<Record<string, unknown>> {
  const issuers = Array.isArray(expect.issuer) ? expect.issuer : [expect.issuer];
  const jwksUri = expect.jwksUri ?? (await discover(fetch, issuers[0])).jwks_uri;
  let payload: Record<string, unknown>;
  try {
    // No `algorithms` list: jose takes the algorithm from the matching JWK (its `alg`, or the key type),
    // so a token can only verify with the algorithm its issuer's key is for; `none` and HS* never match.
    ({ payload } = await jwtVerify(token, keySet(jwksUri, timeoutSeconds, restricted), {
      issuer: issuers,
      audience: expect.audience,
      algorithms: expect.algorithms,
    }));
  } catch (err) {
    throw new IdTokenError(describe(err));
  }
  if (expect.nonceHash !== undefined && payload.nonce !== expect.nonceHash) throw new IdTokenError('Nonces mismatch');
  if (typeof payload.sub !== 'string' || !payload.sub) throw new IdTokenError('id_token has no sub claim');
  return payload;
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'token is expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'unacceptable audience';
    if (err.claim === 'iss') return 'unexpected issuer';
    return `claim ${err.claim} is invalid`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'signature algorithm not allowed';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the issuer matches the token';
  if (err instanceof ProviderError) return err.message;
  if (err instanceof joseErrors.JOSEError) return err.message;
  return 'malformed token';
}
