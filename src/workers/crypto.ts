// The piscina task module: each named export is a task, run as pool.run(arg, { name }). It runs only in
// the crypto pool's threads (src/server/crypto/pool.ts explains why the pool exists and what it costs).
// Tasks never throw on user data: an unreadable stored hash is simply "not ok".
import { createCipheriv, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { argon2i, argon2id, hash as argon2 } from 'argon2';
import bcrypt from 'bcryptjs';
import { encodeArgon2, parseStoredHash, type Argon2Hash, type FirebaseScryptHash, type StoredHash } from './password-formats.js';

export interface HashParams {
  memoryKiB: number;
  timeCost: number;
  parallelism: number;
}
export interface HashPasswordArg extends HashParams {
  password: string;
}
export interface VerifyPasswordArg extends HashParams {
  hash: string | null;
  password: string;
}
export interface VerifyResult {
  ok: boolean;
  needsRehash: boolean;
}

/**
 * Whether a task occupies the thread that runs it for the whole hash: only a bcrypt verify (bcryptjs is
 * pure JS). Every other task (any hash; a verify against argon2, Firebase scrypt, a missing or an
 * unreadable hash, which costs a dummy argon2id) only waits for libuv's threadpool, where argon2's native
 * worker and node:crypto's scrypt run, so it may be started from any event loop without blocking it.
 */
export function blocksItsThread(task: string, arg: { hash?: string | null }): boolean {
  return task === 'verifyPassword' && typeof arg.hash === 'string' && parseStoredHash(arg.hash)?.kind === 'bcrypt';
}

const SALT_BYTES = 16;
const HASH_BYTES = 32;

/** A new argon2id PHC string with the given parameters and a fresh 16-byte salt. */
export async function hashPassword({ password, ...params }: HashPasswordArg): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await argon2Raw('argon2id', params, salt, HASH_BYTES, password);
  return encodeArgon2({ type: 'argon2id', ...params, salt, hash });
}

/**
 * Checks a password against a stored hash of any supported format. `hash` null (unknown user, or a user
 * without a password) or unreadable: the same argon2id work is done against a dummy hash with the current
 * parameters, so the answer time does not tell whether the account exists (docs/passwords.md#unknown-accounts-cost-the-same).
 */
export async function verifyPassword({ hash, password, ...params }: VerifyPasswordArg): Promise<VerifyResult> {
  const stored = hash === null ? null : parseStoredHash(hash);
  if (stored === null) {
    await matches(await dummyHash(params), password).catch(() => false);
    return { ok: false, needsRehash: false };
  }
  const ok = await matches(stored, password).catch(() => false);
  return { ok, needsRehash: ok && !isCurrent(stored, params) };
}

async function matches(stored: StoredHash, password: string): Promise<boolean> {
  switch (stored.kind) {
    case 'argon2': {
      const actual = await argon2Raw(stored.type, stored, stored.salt, stored.hash.length, password);
      return timingSafeEqual(actual, stored.hash);
    }
    // bcryptjs is pure JS and blocks this thread for the whole check (~50-100 ms at cost 10): acceptable
    // here, it is a pool thread, and a bcrypt hash is rehashed to argon2id on its first successful login.
    case 'bcrypt':
      return bcrypt.compareSync(password, stored.encoded);
    case 'fbscrypt':
      return matchesFirebaseScrypt(stored, password);
  }
}

/** A hash is current when it is argon2id with exactly today's parameters; anything else is rehashed. */
function isCurrent(stored: StoredHash, params: HashParams): boolean {
  return (
    stored.kind === 'argon2' &&
    stored.type === 'argon2id' &&
    stored.memoryKiB === params.memoryKiB &&
    stored.timeCost === params.timeCost &&
    stored.parallelism === params.parallelism
  );
}

function argon2Raw(type: Argon2Hash['type'], params: HashParams, salt: Buffer, hashLength: number, password: string): Promise<Buffer> {
  return argon2(password, {
    raw: true,
    type: type === 'argon2id' ? argon2id : argon2i,
    version: 0x13,
    salt,
    hashLength,
    memoryCost: params.memoryKiB,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
  });
}

// One dummy hash per parameter set, made once per thread on first use (parameters rarely change).
const dummies = new Map<string, Promise<Argon2Hash>>();

function dummyHash(params: HashParams): Promise<Argon2Hash> {
  const key = `${params.memoryKiB},${params.timeCost},${params.parallelism}`;
  let dummy = dummies.get(key);
  if (!dummy) {
    dummy = hashPassword({ ...params, password: randomBytes(16).toString('hex') }).then(
      (encoded) => parseStoredHash(encoded) as Argon2Hash,
    );
    dummies.set(key, dummy);
  }
  return dummy;
}

/**
 * Firebase's modified scrypt: key = scrypt(password, salt ‖ separator, N=2^n, r, p, 32 bytes); the stored
 * hash is the signer key encrypted with AES-256-CTR under that key and a zero IV.
 */
async function matchesFirebaseScrypt(stored: FirebaseScryptHash, password: string): Promise<boolean> {
  const N = 2 ** stored.log2N;
  const options: ScryptOptions = { N, r: stored.r, p: stored.p, maxmem: 128 * stored.r * (N + stored.p + 2) + 1024 * 1024 };
  const key = await new Promise<Buffer>((resolve, reject) => {
    scrypt(password, Buffer.concat([stored.salt, stored.saltSeparator]), 32, options, (error, derived) =>
      error ? reject(error) : resolve(derived),
    );
  });
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const expected = Buffer.concat([cipher.update(stored.signerKey), cipher.final()]);
  return expected.length === stored.hash.length && timingSafeEqual(expected, stored.hash);
}
