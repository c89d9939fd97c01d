// Access tokens: signing and verification with jose 5 on node:crypto KeyObjects (JWT_SECRET, JWT_KEYS), or
// signing through AWS KMS for a KMS key (kms-signer.ts), verified like any RSA key with its public half.
// jose's API is async but with a KeyObject the signature is computed synchronously inside it, so the promise costs only a
// microtask, far less than a crypto-pool round trip (bench/README.md, crypto-choices). So JWTs are
// signed and verified inline on the HTTP thread.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, errors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose';
import type { Config } from '../config/types.js';
import { buildKeySet, SUPPORTED_ALGORITHMS, type SigningKey } from './keys.js';
import { createKmsSigner } from './kms-signer.js';
import { parseHeader, signHs256, verifyHs256 } from './hs256.js';
import { claimTypeProblem } from './claim-types.js';
import { readClaims, timeProblem } from './claim-reading.js';
import { segmentProblem } from './segment-base64.js';

/** docs/tokens-and-sessions.md#access-token-claims. Field order is the JSON order the original emits; keep it. */
export interface AccessTokenClaims {
  iss?: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  email: string;
  phone: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  role: string;
  aal: 'aal1' | 'aal2';
  amr: AmrEntry[];
  session_id: string;
  is_anonymous: boolean;
  /** a token issued to an OAuth server client: the client and the scopes granted (docs/oauth-server.md#tokens) */
  client_id?: string;
  scope?: string;
}

/** An OpenID Connect ID token (docs/oauth-server.md#id-tokens), the original's members in its order. */
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  nonce?: string;
  auth_time: number;
  email?: string;
  email_verified: boolean;
  phone_number?: string;
  phone_number_verified: boolean;
  name?: string;
  picture?: string;
  updated_at?: number;
  preferred_username?: string;
  client_id: string;
}

/** An anon or service_role key (`portcullis token`): a role and a lifetime, no user. */
export interface ApiKeyClaims {
  iss?: string;
  role: string;
  iat: number;
  exp: number;
}

export interface AmrEntry {
  method: string;
  timestamp: number;
  provider?: string;
}

/**
 * What a verified token is known to carry: a signature we accept, claims under the original's field names
 * (claim-reading.ts), and an `exp` that has not passed when it has one. Everything else is the caller's to
 * check (anon/service_role keys have no sub or session_id; docs/tokens-and-sessions.md#verification).
 */
export type VerifiedClaims = Partial<AccessTokenClaims> & JWTPayload;

export interface JwtService {
  /** The algorithm new tokens are signed with; verification accepts only the configured ones. */
  readonly algorithm: string;
  /** the public JWKs of the asymmetric keys, for /.well-known/jwks.json */
  readonly publicKeys: ReadonlyArray<Record<string, unknown>>;
  /** true when signing calls AWS KMS: a round trip that can fail, so sign-ins sign inside their transaction (sessions/issue.ts) */
  readonly remoteSigning: boolean;
  /** Throws an ApiError when a KMS key cannot sign (kms-signer.ts); local keys never fail. */
  sign(claims: AccessTokenClaims | ApiKeyClaims | IdTokenClaims): Promise<string>;
  /** Throws JwtError whose message is the original's 403 bad_jwt message. */
  verify(token: string): Promise<VerifiedClaims>;
}

export class JwtError extends Error {
  constructor(readonly reason: string) {
    super(`invalid JWT: unable to parse or verify signature, ${reason}`);
    this.name = 'JwtError';
  }
}

export function createJwtService(jwt: Config['jwt']): JwtService {
  if (!jwt.secret && !jwt.keys.length) throw new TypeError('createJwtService: neither jwt.secret nor jwt.keys is set');
  // JWT_SECRET, when set, is the fallback key: HS256 tokens whose kid names none of JWT_KEYS (none, JWT_KEY_ID,
  // another) are checked against it while HS256 is accepted (below), as the original does
  // (docs/tokens-and-sessions.md#verification). With JWT_KEYS and no JWT_SECRET such tokens are refused.
  const secret: KeyObject | null = jwt.secret ? createSecretKey(Buffer.from(jwt.secret, 'utf8')) : null;
  const keys = jwt.keys.length ? buildKeySet(jwt.keys) : [];
  const signer = keys.find((k) => k.signs);
  const algorithm = signer?.alg ?? 'HS256';
  if (!signer && !secret) throw new TypeError('createJwtService: no key in jwt.keys signs and jwt.secret is empty');
  const header: JWTHeaderParameters = signer
    ? { alg: signer.alg, kid: signer.kid, typ: 'JWT' }
    : { alg: 'HS256', ...(jwt.keyId ? { kid: jwt.keyId } : {}), typ: 'JWT' };
  // The algorithms verification accepts, as the original reads them: JWT_VALID_METHODS, else those of the
  // JWT_KEYS (HS256 when there are none). So with JWT_KEYS set and no HS256 key among them, tokens under
  // JWT_SECRET are refused: taking the legacy secret out of JWT_KEYS revokes the keys it signed.
  const accepted = new Set(jwt.validMethods.length ? jwt.validMethods : keys.length ? keys.map((k) => k.alg) : ['HS256']);
  // Each key still accepts only its own algorithm.
  const pinned = (alg: string) => (accepted.has(alg) ? [alg] : []);
  const byKid = new Map(keys.map((k) => [k.kid, { key: k.verifyKey, algorithms: pinned(k.alg) }]));
  const secretKey = secret && { key: secret, algorithms: pinned('HS256') };
  /** keys checked by the HS256 fast path (hs256.ts): secret keys that accept exactly HS256 */
  const hmacOnly = (key: KeyObject, algorithms: string[]) => key.type === 'secret' && algorithms.length === 1 && algorithms[0] === 'HS256';
  /** A header jose cannot read: any key, so that jose reports the token as malformed. */
  const anyKey = secretKey ?? byKid.values().next().value!;

  /**
   * The key of a token whose kid names none of JWT_KEYS, as the original's key lookup falls back: JWT_SECRET
   * for HS256, when HS256 is accepted; any other algorithm is refused naming the kid.
   */
  function fallbackKey(header: Record<string, unknown>, token: string): { key: KeyObject; algorithms: string[] } {
    const alg = header.alg;
    const problem = algorithmProblem(alg, accepted);
    if (!problem && alg === 'HS256' && secretKey) return secretKey;
    // A token that is not three segments is malformed before anything else, in the original's parser.
    if (!threeSegments(token)) throw new JwtError(SEGMENTS);
    if (problem) throw new JwtError(problem);
    if (alg === 'HS256') throw new JwtError('token signature is invalid: key is invalid');
    throw new JwtError(
      `token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${goValue(header.kid)} for algorithm ${String(alg)}`,
    );
  }

  return {
    algorithm,
    publicKeys: keys.flatMap((k) => (k.publicJwk ? [k.publicJwk] : [])),
    remoteSigning: Boolean(signer?.kms),
    sign: signerOf(signer, header, secret, jwt.kms),
    async verify(token) {
      try {
        const dot = token.indexOf('.');
        const canonical = dot > 0 ? parseHeader(token.slice(0, dot)) : null;
        // A canonical header is read directly; anything else goes through jose's decoding.
        const header = canonical ?? headerOf(token);
        const decodeProblem = undecodableSegment(token, header, accepted);
        if (decodeProblem) throw new JwtError(decodeProblem);
        const kid = header && typeof header.kid === 'string' ? header.kid : undefined;
        const found = (kid !== undefined && byKid.get(kid)) || (header ? fallbackKey(header, token) : anyKey);
        const { key, algorithms } = found;
        const fast = canonical && hmacOnly(key, algorithms) ? verifyHs256(token, canonical, key) : null;
        // No audience check here: the original compares aud later, per request (docs/tokens-and-sessions.md#audience).
        const payload = fast ?? (await signatureVerified(token, key, algorithms));
        const problem = claimTypeProblem(payload, () => payloadText(token));
        if (problem) throw new JwtError(problem);
        // The claims as the original's struct holds them (any spelling of a name, a NumericDate written as a
        // string), then its exp and nbf checks on them: each when present, as golang-jwt v5 does unless asked
        // to require them.
        const claims = readClaims(payload);
        const expiry = timeProblem(claims);
        if (expiry) throw new JwtError(expiry);
        return claims as VerifiedClaims;
      } catch (error) {
        if (error instanceof JwtError) throw error;
        throw new JwtError(describe(error, token));
      }
    },
  };
}

const SEGMENTS = 'token is malformed: token contains an invalid number of segments';

/**
 * The claims of a token jose verifies the signature of. jose then checks exp, nbf and iat under those exact
 * names and as numbers only, which is not how the original reads them (claim-reading.ts): a refusal of those
 * claims alone, which jose makes only once the signature has verified, hands their claims on to be read
 * and checked as the original does.
 */
async function signatureVerified(token: string, key: KeyObject, algorithms: string[]): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, key, { algorithms })).payload;
  } catch (error) {
    if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) return error.payload;
    throw error;
  }
}

/** Whether a compact token has its three segments (two dots), counted without splitting it. */
function threeSegments(token: string): boolean {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  return second > 0 && token.indexOf('.', second + 1) < 0;
}

/**
 * The algorithms golang-jwt v5 knows: the ones keys here can carry, and RSA-PSS and "none", which it names
 * though no key here verifies them; another name in a token's header is "unavailable" there.
 */
const KNOWN_ALGORITHMS: ReadonlySet<string> = new Set([...SUPPORTED_ALGORITHMS, 'PS256', 'PS384', 'PS512', 'none']);

/** No algorithm: algorithmProblem() then refuses every known one as not accepted. */
const NONE: ReadonlySet<string> = new Set();

/** Why a header's alg is refused before any key is looked at, in golang-jwt's words, or null. */
function algorithmProblem(alg: unknown, accepted: ReadonlySet<string>): string | null {
  if (typeof alg !== 'string') return 'token is unverifiable: signing method (alg) is unspecified';
  if (!KNOWN_ALGORITHMS.has(alg)) return 'token is unverifiable: signing method (alg) is unavailable';
  return accepted.has(alg) ? null : `token signature is invalid: signing method ${alg} is invalid`;
}

/** A header value as Go's %v prints it: the original names an unknown kid so. */
function goValue(value: unknown): string {
  if (value === undefined || value === null) return '<nil>';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The signing function, chosen once: KMS (kms-signer.ts), a local private key through jose, or JWT_SECRET. */
function signerOf(
  signer: SigningKey | undefined,
  header: JWTHeaderParameters,
  secret: KeyObject | null,
  kms: Config['jwt']['kms'],
): JwtService['sign'] {
  if (signer?.kms) {
    const signWithKms = createKmsSigner({ kms: signer.kms, verifyKey: signer.verifyKey }, kms);
    return (claims) => signWithKms(header, claims);
  }
  const key = signer ? signer.signKey! : secret!;
  // JWT_SECRET signing: the same bytes jose makes (hs256.ts), without its layers.
  if (!signer) return (claims) => Promise.resolve(signHs256(header, claims, key));
  return (claims) => new SignJWT({ ...claims }).setProtectedHeader(header).sign(key);
}

/**
 * Why the original's parser cannot base64-decode a segment of the token, in its order, or null: the header,
 * then (once the header reads as JSON) the claims, then, once the algorithm passes, the signature. A token
 * without three segments, or whose header or algorithm fails, is left to the checks that name those.
 */
function undecodableSegment(token: string, header: Record<string, unknown> | null, accepted: ReadonlySet<string>): string | null {
  if (!threeSegments(token)) return null;
  const segments = token.split('.');
  const headerProblem = segmentProblem(segments, 0);
  if (headerProblem || header === null) return headerProblem;
  return segmentProblem(segments, 1) ?? (algorithmProblem(header.alg, accepted) ? null : segmentProblem(segments, 2));
}

/** The token's payload segment decoded to text (the token has verified, so it is well-formed). */
function payloadText(token: string): string {
  return Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8');
}

/** The token's protected header as jose decodes it, or null (a malformed header is left for jwtVerify to report). */
function headerOf(token: string): Record<string, unknown> | null {
  try {
    return decodeProtectedHeader(token);
  } catch {
    return null;
  }
}

export interface TokenUser {
  id: string;
  aud: string;
  email: string | null;
  phone: string | null;
  role: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  is_anonymous: boolean;
}

export interface BuildClaimsInput {
  user: TokenUser;
  sessionId: string;
  aal: 'aal1' | 'aal2';
  amr: AmrEntry[];
  /** issue time, unix seconds */
  now: number;
  jwt: Pick<Config['jwt'], 'exp' | 'issuer'>;
}

/** The claims of an access token, in the original's order: iss only when configured, AMR newest first. */
export function buildAccessTokenClaims({ user, sessionId, aal, amr, now, jwt }: BuildClaimsInput): AccessTokenClaims {
  const iat = Math.floor(now);
  return {
    ...(jwt.issuer ? { iss: jwt.issuer } : {}),
    sub: user.id,
    aud: user.aud,
    exp: iat + jwt.exp,
    iat,
    email: user.email ?? '',
    phone: user.phone ?? '',
    app_metadata: user.app_metadata,
    user_metadata: user.user_metadata,
    role: user.role,
    aal,
    amr: [...amr].sort((a, b) => b.timestamp - a.timestamp),
    session_id: sessionId,
    is_anonymous: user.is_anonymous,
  };
}

/**
 * jose's failure → the reason text of golang-jwt v5, which the original puts after "invalid JWT: unable
 * to parse or verify signature, " (docs/tokens-and-sessions.md#verification). Clients and logs match on these strings.
 */
function describe(error: unknown, token: string): string {
  if (!threeSegments(token)) return SEGMENTS;
  const header = headerOf(token);
  // The header's alg is golang-jwt's first check after parsing: unspecified, unknown, or not this key's
  // (with no algorithm accepted, algorithmProblem() refuses every one).
  if (header && (typeof header.alg !== 'string' || error instanceof errors.JOSEAlgNotAllowed)) return algorithmProblem(header.alg, NONE)!;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid: signature is invalid';
  return `token is malformed: ${error instanceof Error ? error.message : String(error)}`;
}
