// Recognises the stored password-hash formats we can verify (docs/passwords.md#imported-hash-formats) and refuses anything it cannot
// check safely. Pure parsing, no hashing: stored hashes are user data (admin imports, migrated rows), so
// every function returns null on bad input instead of throwing.

export interface Argon2Hash {
  kind: 'argon2';
  type: 'argon2id' | 'argon2i';
  memoryKiB: number;
  timeCost: number;
  parallelism: number;
  salt: Buffer;
  hash: Buffer;
}
export interface BcryptHash {
  kind: 'bcrypt';
  cost: number;
  encoded: string;
}
export interface FirebaseScryptHash {
  kind: 'fbscrypt';
  log2N: number;
  r: number;
  p: number;
  saltSeparator: Buffer;
  signerKey: Buffer;
  salt: Buffer;
  hash: Buffer;
}
export type StoredHash = Argon2Hash | BcryptHash | FirebaseScryptHash;

// Beyond these ceilings a hash is "not verifiable" (docs/passwords.md#imported-hash-formats): each check of a
// hash within them ends in a few seconds, well inside a request's deadline. The original's own ceilings
// (argon2 1 GiB and 20 passes, scrypt 1 GiB) let one imported hash take half a minute and a gigabyte per
// sign-in attempt, so a few unauthenticated attempts at that one account held every crypto thread.
export const ARGON2_MAX_MEMORY_KIB = 256 * 1024;
/** memory × passes, the work of one check: 256 MiB over 4 passes (libsodium's "moderate" is 256 MiB × 3). */
export const ARGON2_MAX_WORK_KIB = 1024 * 1024;
const ARGON2_MAX_TIME = 20;
const ARGON2_MAX_PARALLELISM = 16;
// The original takes bcrypt up to cost 31, which takes days; bcryptjs holds its thread for the whole check,
// so one such hash stopped every sign-in on that crypto thread for good. Cost 16 takes about 5 s here, within
// any request's deadline; past it a check could never answer in time (docs/passwords.md#imported-hash-formats).
const BCRYPT_MAX_COST = 16;
const SCRYPT_MAX_MEMORY_BYTES = 256 * 1024 ** 2;
/** memory × p, the work of one check (node:crypto runs the p lanes one after the other); Firebase's default is 16 MiB. */
const SCRYPT_MAX_WORK_BYTES = 512 * 1024 ** 2;
const SCRYPT_MAX_PARALLELISM = 16;

export function parseStoredHash(text: string): StoredHash | null {
  if (text.startsWith('$argon2')) return parseArgon2(text);
  if (text.startsWith('$2')) return parseBcrypt(text);
  if (text.startsWith('$fbscrypt$')) return parseFirebaseScrypt(text);
  return null;
}

/** Canonical PHC string in the reference implementation's parameter order (m, t, p), base64 unpadded. */
export function encodeArgon2(h: Omit<Argon2Hash, 'kind'>): string {
  return `$${h.type}$v=19$m=${h.memoryKiB},t=${h.timeCost},p=${h.parallelism}$${b64(h.salt)}$${b64(h.hash)}`;
}

/** `$argon2id$v=19$m=..,t=..,p=..$salt$hash`; only v=19, exactly m/t/p (no keyid, no data), any order. */
function parseArgon2(text: string): Argon2Hash | null {
  const match = /^\$(argon2id|argon2i)\$v=19\$([a-z0-9=,]+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(text);
  if (!match) return null;
  const params = parseParams(match[2], ['m', 't', 'p']);
  if (!params) return null;
  const [m, t, p] = [params.get('m'), params.get('t'), params.get('p')].map(Number);
  if (p < 1 || p > ARGON2_MAX_PARALLELISM || t < 1 || t > ARGON2_MAX_TIME) return null;
  if (m < 8 * p || m > ARGON2_MAX_MEMORY_KIB || m * t > ARGON2_MAX_WORK_KIB) return null;
  const salt = Buffer.from(match[3], 'base64');
  const hash = Buffer.from(match[4], 'base64');
  if (salt.length < 8 || hash.length < 4 || salt.length > 1024 || hash.length > 1024) return null;
  return { kind: 'argon2', type: match[1] as Argon2Hash['type'], memoryKiB: m, timeCost: t, parallelism: p, salt, hash };
}

/** `$2a$`, `$2b$`, `$2y$` with a two-digit cost and 53 characters of bcrypt base64 (salt + hash). */
function parseBcrypt(text: string): BcryptHash | null {
  const match = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(text);
  if (!match) return null;
  const cost = Number(match[1]);
  return cost >= 4 && cost <= BCRYPT_MAX_COST ? { kind: 'bcrypt', cost, encoded: text } : null;
}

/** `$fbscrypt$v=1,n=<log2 N>,r=..,p=..,ss=<b64>,sk=<b64>$<b64 salt>$<b64 hash>` (Firebase's modified scrypt). */
function parseFirebaseScrypt(text: string): FirebaseScryptHash | null {
  const parts = text.split('$');
  if (parts.length !== 5 || parts[0] !== '' || parts[1] !== 'fbscrypt') return null;
  const params = new Map<string, string>();
  for (const pair of parts[2].split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0 || params.has(pair.slice(0, at))) return null;
    params.set(pair.slice(0, at), pair.slice(at + 1));
  }
  if (params.get('v') !== '1') return null;
  const [log2N, r, p] = ['n', 'r', 'p'].map((key) => (/^\d{1,3}$/.test(params.get(key) ?? '') ? Number(params.get(key)) : NaN));
  if (!(log2N >= 1 && log2N < 32 && r >= 1 && p >= 1 && p <= SCRYPT_MAX_PARALLELISM)) return null;
  if (128 * r * 2 ** log2N > SCRYPT_MAX_MEMORY_BYTES || 128 * r * 2 ** log2N * p > SCRYPT_MAX_WORK_BYTES) return null;
  const [saltSeparator, signerKey, salt, hash] = [params.get('ss') ?? '', params.get('sk') ?? '', parts[3], parts[4]].map(unb64);
  if (!saltSeparator || !signerKey || !salt || !hash || signerKey.length === 0 || hash.length === 0) return null;
  return { kind: 'fbscrypt', log2N, r, p, saltSeparator, signerKey, salt, hash };
}

/** Comma-separated key=decimal pairs, exactly the expected keys, each once. */
function parseParams(text: string, keys: string[]): Map<string, string> | null {
  const params = new Map<string, string>();
  for (const pair of text.split(',')) {
    const match = /^([a-z]+)=(\d{1,10})$/.exec(pair);
    if (!match || !keys.includes(match[1]) || params.has(match[1])) return null;
    params.set(match[1], match[2]);
  }
  return params.size === keys.length ? params : null;
}

/** Standard base64, padding optional; null when the text is not base64. */
function unb64(text: string): Buffer | null {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) ? Buffer.from(text, 'base64') : null;
}

function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}
