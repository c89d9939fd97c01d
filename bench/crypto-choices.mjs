// Measures the numbers behind DESIGN §2/§4's crypto choices, against dist/ (run `npx tsc -p .` first):
//   1. argon2id verifies/s at the default parameters: the task function called directly in this thread
//      (argon2 on libuv's pool) vs through the piscina crypto pool, on 1 and 2 threads;
//   2. HS256 sign and verify/s with jose 5 inline (our jwt.ts), and the same for each JWT_KEYS algorithm;
//   3. the cost of one no-op piscina round trip, and of our facade (local, and over a MessagePort as an
//      HTTP thread uses it) with a trivial argon2 hash (m=8 KiB, t=1: a few µs of hashing).
// Usage: node bench/crypto-choices.mjs [seconds per argon2 scenario, default 3]; the one-off measurements
// (JWT, round trips) take a third of that each, so a short run (the bench's own test) is short throughout.
import os from 'node:os';
import { Piscina } from 'piscina';
import { verifyPassword, hashPassword } from '../dist/workers/crypto.js';
import { connectCryptoPool, createCryptoPool } from '../dist/server/crypto/pool.js';
import { buildAccessTokenClaims, createJwtService } from '../dist/server/auth/jwt.js';
import { generateJwk } from '../dist/server/auth/keys.js';

const seconds = Number(process.argv[2] ?? 3);
const oneOffMs = (seconds * 1000) / 3;
const params = { memoryKiB: 19456, timeCost: 2, parallelism: 1 };
const password = 'correct horse battery staple';

/** Runs `fn` in `concurrency` loops for `ms`; returns completed calls per second. */
async function rate(fn, { concurrency = 1, ms = seconds * 1000 } = {}) {
  let count = 0;
  const end = performance.now() + ms;
  const loop = async () => {
    while (performance.now() < end) {
      await fn();
      count++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return count / ((performance.now() - start) / 1000);
}

const fmt = (n) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3));
const results = {
  machine: { cpus: os.availableParallelism(), node: process.version, uvThreadpool: process.env.UV_THREADPOOL_SIZE ?? '4 (default)' },
  params,
};
console.log(`node ${process.version}, ${results.machine.cpus} CPUs, UV_THREADPOOL_SIZE=${results.machine.uvThreadpool}`);
console.log(`argon2id m=${params.memoryKiB} KiB t=${params.timeCost} p=${params.parallelism}, ${seconds} s per scenario`);

// This machine's CPU share turned out to vary minute to minute, so direct and pooled runs alternate in
// one-second slices and each number is the mean of its slices, with the range shown.
const stored = await hashPassword({ ...params, password });
const summary = (xs) => ({ mean: xs.reduce((a, b) => a + b, 0) / xs.length, min: Math.min(...xs), max: Math.max(...xs) });
const show = ({ mean, min, max }) => `${fmt(mean)}/s [${fmt(min)}-${fmt(max)}]`;
for (const threads of [1, 2]) {
  const host = createCryptoPool({ threads, params });
  const hasher = host.local();
  await Promise.all(Array.from({ length: threads * 2 }, () => hasher.verify(stored, password))); // warm up
  const direct = [];
  const pooled = [];
  for (let slice = 0; slice < seconds; slice++) {
    direct.push(await rate(() => verifyPassword({ ...params, hash: stored, password }), { concurrency: threads, ms: 1000 }));
    pooled.push(await rate(() => hasher.verify(stored, password), { concurrency: threads * 2, ms: 1000 }));
  }
  await host.close();
  const [d, p] = [summary(direct), summary(pooled)];
  results[`argon2id_${threads}`] = { direct: d, pooled: p };
  console.log(
    `  ${threads} thread(s): direct ${show(d)} (${fmt((1000 * threads) / d.mean)} ms each), pool ${show(p)} = ${fmt((100 * p.mean) / d.mean)}% of direct`,
  );
}

const jwtConfig = {
  secret: 'bench-secret-bench-secret-bench-secret',
  exp: 3600,
  aud: 'authenticated',
  issuer: '',
  keyId: '',
  keys: [],
  validMethods: [],
  adminGroupName: 'admin',
  defaultGroupName: 'authenticated',
  adminRoles: [],
};
const jwt = createJwtService(jwtConfig);
const claims = buildAccessTokenClaims({
  user: {
    id: '6b0c2d1e-0a43-4c5e-9a63-2f1b8e7d9c10',
    aud: 'authenticated',
    email: 'user@example.com',
    phone: '',
    role: 'authenticated',
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: {},
    is_anonymous: false,
  },
  sessionId: '0e5d0b9c-7f3a-4d9e-8b1c-5a6f7e8d9c0b',
  aal: 'aal1',
  amr: [{ method: 'password', timestamp: 1700000000 }],
  now: Date.now() / 1000,
  jwt: jwtConfig,
});
const token = await jwt.sign(claims);
const signs = await rate(() => jwt.sign(claims), { ms: 2 * oneOffMs });
const verifies = await rate(() => jwt.verify(token), { ms: 2 * oneOffMs });
results.jwt = { signs, verifies };
console.log(
  `HS256 inline (jose 5, KeyObject): ${fmt(signs)} signs/s (${fmt(1e6 / signs)} µs), ${fmt(verifies)} verifies/s (${fmt(1e6 / verifies)} µs)`,
);
// Asymmetric keys (JWT_KEYS): signing is on the refresh grant's path, so ES256/EdDSA must stay cheap inline.
results.jwtKeys = {};
for (const alg of ['ES256', 'EdDSA', 'RS256']) {
  const keyed = createJwtService({ ...jwtConfig, keys: [generateJwk(alg)] });
  const keyedToken = await keyed.sign(claims);
  const keyedSigns = await rate(() => keyed.sign(claims), { ms: oneOffMs });
  const keyedVerifies = await rate(() => keyed.verify(keyedToken), { ms: oneOffMs });
  results.jwtKeys[alg] = { signs: keyedSigns, verifies: keyedVerifies };
  console.log(
    `${alg} inline (jose 5, KeyObject): ${fmt(keyedSigns)} signs/s (${fmt(1e6 / keyedSigns)} µs), ${fmt(keyedVerifies)} verifies/s (${fmt(1e6 / keyedVerifies)} µs)`,
  );
}

const noop = new Piscina({
  filename: new URL('./noop-task.mjs', import.meta.url).href,
  minThreads: 2,
  maxThreads: 2,
  concurrentTasksPerWorker: 1,
});
await Promise.all([noop.run(0), noop.run(0)]);
const trips = await rate(() => noop.run(0), { ms: 2 * oneOffMs });
await noop.close();
results.noopRoundTripMs = 1000 / trips;
console.log(`piscina no-op round trip (one at a time): ${fmt(1000 / trips)} ms (${fmt(trips)}/s)`);
const tiny = { memoryKiB: 8, timeCost: 1, parallelism: 1 };
const facade = createCryptoPool({ threads: 2, params: tiny });
const tinyHash = await facade.local().hash(password);
const viaLocal = facade.local();
const viaPort = connectCryptoPool(facade.connect(), tiny);
await Promise.all([viaLocal.verify(tinyHash, password), viaPort.verify(tinyHash, password)]);
const localTrips = await rate(() => viaLocal.verify(tinyHash, password), { ms: 2 * oneOffMs });
const portTrips = await rate(() => viaPort.verify(tinyHash, password), { ms: 2 * oneOffMs });
await facade.close();
results.facadeRoundTripMs = { local: 1000 / localTrips, port: 1000 / portTrips };
console.log(
  `facade round trip, trivial verify (one at a time): local ${fmt(1000 / localTrips)} ms, over a MessagePort ${fmt(1000 / portTrips)} ms`,
);
if (process.argv.includes('--json')) console.log(JSON.stringify(results));
