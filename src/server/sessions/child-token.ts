// The token a rotation hands out, derived from the token it replaces.
//
// Why derived: only SHA-256 hashes of refresh tokens are stored (docs/tokens-and-sessions.md#refresh-token-formats), yet the
// original answers a re-presented parent with the session's EXISTING active token (docs/tokens-and-sessions.md#refresh-rotation step 3:
// the client that failed to save the response, and every loser of a concurrent refresh). So the child's
// plain text must be recoverable from what the client presents, without keeping it at rest. The child is
// HMAC-SHA256(key, parent token), cut to the original's 12-char base32 format: the server recomputes it
// from the presented parent whenever needed, a database dump reveals nothing usable, and nobody without
// the key can predict a child from a stolen (already revoked) parent. The key is derived from JWT_SECRET
// rather than stored per session: whoever holds JWT_SECRET can mint access tokens anyway, and it needs no
// schema change. Encrypting the child at rest was the alternative; it needs a key too, plus a column.
// Session-first tokens stay random (newRefreshToken), so every chain starts unpredictable.
import { createHash, createHmac } from 'node:crypto';

const cache = new Map<string, Buffer>();

function keyOf(jwtSecret: string): Buffer {
  let key = cache.get(jwtSecret);
  if (!key) {
    key = createHash('sha256').update('portcullis/refresh-token-child\0').update(jwtSecret).digest();
    cache.set(jwtSecret, key);
  }
  return key;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * The child of `parentToken`: 12 lowercase base32 chars (60 bits), the same shape as a fresh token.
 * `generation` counts the parent's earlier children: a rotated token presented again within
 * SECURITY_REFRESH_TOKEN_REUSE_INTERVAL gets another child, as the original swaps it once more
 * (docs/tokens-and-sessions.md#refresh-rotation step 4); the first child (0) is derived from the parent
 * alone, as it always was, so the usual rotation is unchanged.
 */
export function childRefreshToken(jwtSecret: string, parentToken: string, generation = 0): string {
  const hmac = createHmac('sha256', keyOf(jwtSecret)).update(parentToken);
  const mac = (generation === 0 ? hmac : hmac.update(`\0${generation}`)).digest();
  let out = '';
  for (let i = 0; i < 12; i++) {
    // 12 × 5 bits taken from the first 8 bytes, as newRefreshToken cuts its random bytes.
    const bit = i * 5;
    const word = (mac[bit >> 3] << 8) | mac[(bit >> 3) + 1];
    out += BASE32[(word >> (11 - (bit & 7))) & 31];
  }
  return out;
}

/**
 * The secret children are derived from: JWT_SECRET, or with JWT_KEYS and no JWT_SECRET the private parts
 * of the configured keys (docs/tokens-and-sessions.md#refresh-token-formats). Changing the keys then changes every
 * child, so a client re-presenting its previous token across that restart is refused as a reuse; set
 * JWT_SECRET alongside JWT_KEYS to avoid even that.
 */
export function childSecretOf(jwt: { secret: string; keys: ReadonlyArray<JsonWebKey> }): string {
  if (jwt.secret) return jwt.secret;
  // Asked on every refresh and every link sent or followed: built once per key set, which a configuration
  // never changes in place (a reload brings a new one).
  let secret = secretOfKeys.get(jwt.keys);
  if (secret === undefined) {
    secret = JSON.stringify(jwt.keys.map((k) => [(k as { kid?: string }).kid ?? '', k.k ?? '', k.d ?? '']));
    secretOfKeys.set(jwt.keys, secret);
  }
  return secret;
}
const secretOfKeys = new WeakMap<ReadonlyArray<JsonWebKey>, string>();
