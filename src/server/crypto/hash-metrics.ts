// The original's password-hashing counters (docs/observability.md#metrics): every hash and every comparison
// with a stored hash is counted when it is handed to a crypto thread and when its answer comes, labelled
// with the algorithm and its parameters as the original labels them, and a comparison with its answer.
// A sign-in for an unknown user compares with no stored hash, and is not counted, as there.
import type { HashLabels, RequestMetrics } from '../observability/metrics.js';
import { parseStoredHash } from '../../workers/password-formats.js';
import type { HashParams } from '../../workers/crypto.js';
import type { PasswordHasher } from './pool.js';

/** The hashes made here: argon2id, version 19, a 32-byte hash (workers/crypto.ts). */
const NEW_HASH = { alg: 'argon2id', v: '19', len: '32' };

export function countingHashes(inner: PasswordHasher, metrics: RequestMetrics, params: HashParams): PasswordHasher {
  const generated: HashLabels = { ...NEW_HASH, m: String(params.memoryKiB), t: String(params.timeCost), p: String(params.parallelism) };
  return {
    async hash(password, signal) {
      metrics.passwordHashing('generate', 'submitted', generated);
      try {
        return await inner.hash(password, signal);
      } finally {
        metrics.passwordHashing('generate', 'completed', generated);
      }
    },
    async verify(hash, password, signal) {
      const labels = hash === null ? null : storedHashLabels(hash);
      if (!labels) return inner.verify(hash, password, signal);
      metrics.passwordHashing('compare', 'submitted', labels);
      let match = false;
      try {
        const result = await inner.verify(hash, password, signal);
        match = result.ok;
        return result;
      } finally {
        metrics.passwordHashing('compare', 'completed', { ...labels, match: String(match) });
      }
    },
    busy: () => inner.busy(),
  };
}

/** The original's labels for a stored hash it can compare; null for one it cannot (no comparison runs). */
function storedHashLabels(text: string): HashLabels | null {
  const stored = parseStoredHash(text);
  switch (stored?.kind) {
    case 'argon2':
      return {
        alg: stored.type,
        v: '19',
        m: String(stored.memoryKiB),
        t: String(stored.timeCost),
        p: String(stored.parallelism),
        len: String(stored.hash.length),
      };
    case 'bcrypt':
      return { alg: 'bcrypt', bcrypt_cost: String(stored.cost) };
    case 'fbscrypt':
      // The original names scrypt's cost N itself, 2 to the hash's n, and gives this kind no `alg`.
      return { v: '1', n: String(2 ** stored.log2N), r: String(stored.r), p: String(stored.p), len: String(stored.hash.length) };
    default:
      return null;
  }
}
