// An id_token's at_hash (OIDC Core §3.2.2.9): the left half of the access token's digest, by the hash of
// the token's signing algorithm. Checked wherever an id_token arrives with its access token: at the
// callback (the provider's token answer) and at the id_token grant when the app sends both.
import { createHash } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';

/** Whether `atHash` is the access token's hash as the id_token's algorithm computes it. */
export function accessTokenHashMatches(idToken: string, accessToken: string, atHash: string): boolean {
  const alg = decodeProtectedHeader(idToken).alg ?? '';
  const bits = /(\d{3})$/.exec(alg)?.[1];
  const hashName = bits === '384' ? 'sha384' : bits === '512' ? 'sha512' : 'sha256';
  const digest = createHash(hashName).update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url') === atHash;
}
