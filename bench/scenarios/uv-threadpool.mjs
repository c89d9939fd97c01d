// Does UV_THREADPOOL_SIZE matter? argon2 runs on libuv's threadpool, which is per process and also
// serves async fs (the request log), DNS and zlib. For a few pool sizes around AUTH_CRYPTO_WORKERS this
// starts a fresh service and runs a password flood while probing GET /user and /health at fixed rates.
// Not in the default run (`npm run bench -- uv-threadpool`): it starts one service per size.
import { startBenchService } from '../lib/service.mjs';
import { benchContext } from '../lib/context.mjs';
import { PASSWORD, seedUsers, userEmail } from '../lib/seed.mjs';
import { JSON_HEADERS } from '../lib/context.mjs';

export async function uvThreadpool(options) {
  const runs = [];
  let crypto = null;
  for (const size of await sizes(options)) {
    const service = await startBenchService(options, { uvThreadpool: size });
    try {
      crypto = service.workers.crypto;
      await seedUsers(service, 100);
      const bench = benchContext({ ...options, users: 100 }, service);
      const [session] = await bench.sessions(1);
      let n = 0;
      const [password, user, health] = await Promise.all([
        bench.load({ title: `uv ${size}: password flood`, path: '/token?grant_type=password', connections: 4 * crypto,
          requests: [{ method: 'POST', headers: JSON_HEADERS,
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: userEmail(n++ % 100), password: PASSWORD }) }) }] }),
        bench.load({ title: 'user probe', path: '/user', connections: 2, overallRate: 100, progress: false,
          requests: [{ method: 'GET', headers: { authorization: `Bearer ${session.access_token}` } }] }),
        bench.load({ title: 'health probe', path: '/health', connections: 1, overallRate: 20, progress: false }),
      ]);
      runs.push({ uvThreadpool: size, passwordReqPerSec: password.reqPerSec, passwordP99: password.p99, userP99: user.p99,
        healthP99: health.p99, non2xx: password.non2xx + user.non2xx + health.non2xx });
      console.log(`  uv-threadpool   UV_THREADPOOL_SIZE=${size}: password ${password.reqPerSec} req/s (p99 ${password.p99} ms), ` +
        `GET /user p99 ${user.p99} ms, /health p99 ${health.p99} ms`);
    } finally {
      await service.stop();
    }
  }
  const best = Math.max(...runs.map((r) => r.passwordReqPerSec));
  const atCrypto = runs.find((r) => r.uvThreadpool === crypto);
  return { cryptoWorkers: crypto, runs, ratio: atCrypto ? Math.round((atCrypto.passwordReqPerSec / best) * 1000) / 1000 : null,
    limitKind: 'password req/s at UV_THREADPOOL_SIZE = AUTH_CRYPTO_WORKERS, over the best size' };
}

/** One below the crypto thread count (too few), equal, libuv's default 4, and generous. */
async function sizes(options) {
  const probe = await startBenchService(options, { uvThreadpool: '' });
  const crypto = probe.workers.crypto;
  await probe.stop();
  return [...new Set([Math.max(1, crypto - 1), crypto, 4, Math.max(8, 4 * crypto)])].sort((a, b) => a - b);
}
