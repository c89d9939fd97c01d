// JWT_KEYS (docs/tokens-and-sessions.md#signing-and-keys): private JWKs turned into node:crypto KeyObjects,
// each with the one algorithm it signs and verifies with, pinned by the key and never by a token header.
// An RSA public JWK with "aws:kms:arn" is a key whose private part stays in AWS KMS (kms-key.ts).
import {
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { kmsKeyOf, type KmsKeyRef } from './kms-key.js';

/** Algorithms a key may carry, by key type (and curve): the first is taken when the JWK has no `alg`. */
const ALGORITHMS: Record<string, string[]> = {
  RSA: ['RS256', 'RS384', 'RS512'],
  'EC:P-256': ['ES256'],
  'EC:P-384': ['ES384'],
  'EC:P-521': ['ES512'],
  'OKP:Ed25519': ['EdDSA'],
  oct: ['HS256', 'HS384', 'HS512'],
};
export const SUPPORTED_ALGORITHMS = [...new Set(Object.values(ALGORITHMS).flat())];

/** The public members of each asymmetric key type: all that /.well-known/jwks.json may show. */
const PUBLIC_MEMBERS: Record<string, string[]> = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] };

export interface SigningKey {
  kid: string;
  alg: string;
  /** whether this key signs new tokens (exactly one does) */
  signs: boolean;
  /** the private (or secret) key; null for a key whose private part is in AWS KMS */
  signKey: KeyObject | null;
  /** the AWS KMS key that signs for this key, null for a local key */
  kms: KmsKeyRef | null;
  /** the public key, or the secret for `oct` */
  verifyKey: KeyObject;
  /** the public JWK to publish, null for a symmetric key */
  publicJwk: Record<string, unknown> | null;
}

export class KeySetError extends Error {}

/** Parses and checks JWT_KEYS text into JWKs (throws KeySetError naming the key at fault). */
export function parseKeySet(text: string): JsonWebKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeySetError('is not JSON (a JSON array of private JWKs)');
  }
  if (!Array.isArray(parsed)) throw new KeySetError('must be a JSON array of private JWKs');
  const jwks = parsed as JsonWebKey[];
  // An empty list is no keys, as the original reads it: JWT_SECRET signs.
  if (jwks.length > 0) buildKeySet(jwks);
  return jwks;
}

/** The KeyObjects of a key set, built once per JWT service; throws KeySetError naming the key at fault. */
export function buildKeySet(jwks: readonly JsonWebKey[]): SigningKey[] {
  // Keys are kept by kid, as in the original: of two with one kid the later one is the key (keySetWarnings says so).
  const byKid = new Map<string, SigningKey>();
  for (const [index, jwk] of jwks.entries()) {
    const key = buildKey(jwk, index);
    byKid.delete(key.kid);
    byKid.set(key.kid, key);
  }
  const keys = [...byKid.values()];
  const signers = keys.filter((k) => k.signs);
  if (signers.length !== 1) {
    throw new KeySetError(
      `exactly one key must have "sign" in key_ops (found ${signers.length}${signers.length ? `: ${signers.map((k) => k.kid).join(', ')}` : ''})`,
    );
  }
  return keys;
}

function buildKey(jwk: JsonWebKey, index: number): SigningKey {
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw new KeySetError(`key #${index + 1}: is not a JWK object`);
  const name = typeof jwk.kid === 'string' && jwk.kid ? `key "${jwk.kid}"` : `key #${index + 1}`;
  const fail = (why: string): never => {
    throw new KeySetError(`${name}: ${why}`);
  };
  const kid: string = typeof jwk.kid === 'string' && jwk.kid ? jwk.kid : fail('has no kid');
  const rawOps: unknown = jwk.key_ops;
  // Without key_ops a key only verifies, as the original reads it (its signer is the one key with "sign").
  const ops: string[] =
    rawOps === undefined
      ? ['verify']
      : Array.isArray(rawOps) && rawOps.every((op) => typeof op === 'string')
        ? rawOps
        : fail('key_ops is not an array (["sign","verify"] or ["verify"])');
  // Every key verifies, whatever its key_ops say, as the original makes each key's public half a verifying key.
  const kms = kmsRef(jwk, fail);
  const type = jwk.kty === 'EC' || jwk.kty === 'OKP' ? `${jwk.kty}:${String(jwk.crv)}` : String(jwk.kty);
  const allowed = ALGORITHMS[type] ?? fail(`unsupported key type ${type} (RSA, EC P-256/P-384/P-521, OKP Ed25519, oct)`);
  const alg: string = typeof jwk.alg === 'string' ? jwk.alg : jwk.alg === undefined ? allowed[0] : fail('alg is not a string');
  if (!allowed.includes(alg)) fail(`alg ${alg} does not fit a ${type} key (${allowed.join(', ')})`);
  const material = (): { signKey: KeyObject | null; verifyKey: KeyObject } => {
    try {
      if (kms) return { signKey: null, verifyKey: createPublicKey({ key: publicMembers(jwk), format: 'jwk' }) };
      if (jwk.kty === 'oct') {
        if (typeof jwk.k !== 'string' || !jwk.k) throw new Error('no "k"');
        const secret = createSecretKey(Buffer.from(jwk.k, 'base64url'));
        return { signKey: secret, verifyKey: secret };
      }
      // A key that only verifies may be its public half alone (a retired key whose private part is gone),
      // as the original accepts it.
      if (jwk.d === undefined && !ops.includes('sign')) {
        return { signKey: null, verifyKey: createPublicKey({ key: publicMembers(jwk), format: 'jwk' }) };
      }
      const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      // The private part must match the JWK's own public members, or others would verify with a key we never sign with.
      const publicKey = createPublicKey({ key: publicMembers(jwk), format: 'jwk' });
      const probe = Buffer.from('portcullis key check');
      const digest = jwk.kty === 'OKP' ? null : 'sha256';
      if (!verify(digest, probe, publicKey, sign(digest, probe, privateKey)))
        throw new Error('the private part does not match the public members');
      return { signKey: privateKey, verifyKey: publicKey };
    } catch (err) {
      const needed = kms ? 'an RSA public JWK is needed' : 'a private JWK is needed';
      return fail(`invalid key material (${needed}): ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const { signKey, verifyKey } = material();
  const publicJwk = jwk.kty === 'oct' ? null : publicHalf(verifyKey, kid, alg);
  return { kid, alg, signs: ops.includes('sign'), signKey, verifyKey, publicJwk, kms };
}

/**
 * What the original accepts in JWT_KEYS though it is weak or ambiguous, said at start (config/original-corrections.ts):
 * a key set that started the original starts here, and the operator learns what to replace.
 */
export function keySetWarnings(jwks: readonly JsonWebKey[]): string[] {
  if (jwks.length === 0) return [];
  const warnings: string[] = [];
  const kids = jwks.map((jwk) => String(jwk.kid));
  for (const kid of new Set(kids.filter((kid, i) => kids.indexOf(kid) !== i)))
    warnings.push(`key "${kid}": kid is used by more than one key; the last of them is used, as the original does`);
  for (const key of buildKeySet(jwks)) {
    const bytes = key.verifyKey.type === 'secret' ? key.verifyKey.symmetricKeySize! : null;
    if (bytes !== null && bytes < 32) warnings.push(`key "${key.kid}": an HMAC key of ${bytes} bytes can be guessed; use at least 32`);
    const bits = key.verifyKey.asymmetricKeyType === 'rsa' ? (key.verifyKey.asymmetricKeyDetails?.modulusLength ?? 0) : null;
    if (bits !== null && bits < 2048) warnings.push(`key "${key.kid}": an RSA key of ${bits} bits can be broken; use at least 2048`);
  }
  return warnings;
}

function kmsRef(jwk: JsonWebKey, fail: (why: string) => never): KmsKeyRef | null {
  try {
    return kmsKeyOf(jwk);
  } catch (err) {
    return fail((err as Error).message);
  }
}

function publicMembers(jwk: JsonWebKey): JsonWebKey {
  const out: Record<string, unknown> = { kty: jwk.kty };
  for (const member of PUBLIC_MEMBERS[String(jwk.kty)] ?? []) out[member] = jwk[member];
  return out;
}

/** Only the public members, whatever the configured JWK carried besides (docs/api.md#get-well-knownjwksjson). */
function publicHalf(publicKey: KeyObject, kid: string, alg: string): Record<string, unknown> {
  const exported = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  const out: Record<string, unknown> = { kty: exported.kty };
  for (const member of PUBLIC_MEMBERS[String(exported.kty)]) out[member] = exported[member];
  return { ...out, kid, alg, use: 'sig', key_ops: ['verify'] };
}

export const GENERATABLE = ['ES256', 'RS256', 'EdDSA', 'HS256'] as const;

/** A new private JWK for `portcullis keys generate`, signing, with a random kid. */
export function generateJwk(alg: string): JsonWebKey & { kid: string; alg: string } {
  const kid = randomUUID();
  const meta = { kid, alg, use: 'sig', key_ops: ['sign', 'verify'] };
  if (alg === 'HS256') return { kty: 'oct', k: randomBytes(32).toString('base64url'), ...meta };
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'RS256'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : alg === 'EdDSA'
          ? generateKeyPairSync('ed25519')
          : null;
  if (!pair) throw new KeySetError(`cannot generate ${alg} (one of ${GENERATABLE.join(', ')})`);
  return { ...pair.privateKey.export({ format: 'jwk' }), ...meta };
}
