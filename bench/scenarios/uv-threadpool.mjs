// Does UV_THREADPOOL_SIZE matter? argon2 runs on libuv's threadpool, which is per process and also
// serves async fs (the request log), DNS and zlib. For a few pool sizes around AUTH_CRYPTO_WORKERS this
// starts one service per size, all at once, and runs a password flood against each in turn, in rounds
// (a shared machine's drift then hits every size alike), while probing GET /user and /health at fixed
// rates. Not in the default run (`npm run bench -- uv-threadpool`).
import { startBenchService } from '../lib/service.mjs';
import { benchContext, JSON_HEADERS } from '../lib/context.mjs';
import { PASSWORD, seedUsers, userEmail } from '../lib/seed.mjs';
import { mergeLoads, round } from '../lib/load.mjs';
import { argon2Limit } from '../limits/argon2.mjs';

const USERS = 100;

export async function uvThreadpool(options) {
  const first = await startBenchService(options, { uvThreadpool: '' });
  const crypto = first.workers.crypto;
  await first.stop();
  // One below the crypto thread count (too few), equal, libuv's default 4, and generous.
  const sizes = [...new Set([Math.max(1, crypto - 1), crypto, 4, Math.max(8, 4 * crypto)])].sort((a, b) => a - b);
  const runs = [];
  try {
    for (const size of sizes) runs.push(await prepare(options, size));
    const rounds = Math.max(2, Math.floor(options.duration / 1.5));
    for (let round = 0; round < rounds; round++) {
      for (const run of runs) {
        run.slices.push(await measure(run, options.duration / rounds, crypto));
        // argon2 alone, in a process with the same pool size: the ceiling the flood is held to.
        run.direct.push(await argon2Limit(run.service, { ...options, duration: options.duration / rounds / 2 }, 'verify'));
      }
    }
  } finally {
    await Promise.all(runs.map((run) => run.service.stop()));
  }
  const rows = runs.map(({ size, slices, direct }) => {
    const [password, user, health] = [0, 1, 2].map((i) => mergeLoads(slices.map((s) => s[i])));
    const directPerSec = round(direct.reduce((a, b) => a + b, 0) / direct.length);
    console.log(
      `  uv-threadpool   UV_THREADPOOL_SIZE=${size}: password ${password.reqPerSec} req/s (p99 ${password.p99} ms), ` +
        `argon2id direct ${directPerSec}/s, GET /user p99 ${user.p99} ms, /health p99 ${health.p99} ms`,
    );
    return {
      uvThreadpool: size,
      passwordReqPerSec: password.reqPerSec,
      argon2idDirectPerSec: directPerSec,
      passwordP99: password.p99,
      userP99: user.p99,
      healthP99: health.p99,
      non2xx: password.non2xx + user.non2xx + health.non2xx,
    };
  });
  return { cryptoWorkers: crypto, runs: rows };
}

async function prepare(options, size) {
  const service = await startBenchService(options, { uvThreadpool: size });
  await seedUsers(service, USERS);
  const bench = benchContext({ ...options, users: USERS }, service);
  const [session] = await bench.sessions(1);
  return { size, service, bench, session, slices: [], direct: [], n: 0 };
}

function measure(run, duration, crypto) {
  const { bench, session } = run;
  return Promise.all([
    bench.load({
      title: `uv ${run.size}: password flood`,
      path: '/token?grant_type=password',
      duration,
      connections: 4 * crypto,
      requests: [
        {
          method: 'POST',
          headers: JSON_HEADERS,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: userEmail(run.n++ % USERS), password: PASSWORD }) }),
        },
      ],
    }),
    bench.load({
      title: 'user probe',
      path: '/user',
      duration,
      connections: 2,
      overallRate: 100,
      progress: false,
      requests: [{ method: 'GET', headers: { authorization: `Bearer ${session.access_token}` } }],
    }),
    bench.load({ title: 'health probe', path: '/health', duration, connections: 1, overallRate: 20, progress: false }),
  ]);
}
