// DESIGN §2's promise: a flood of password logins must not delay refresh grants, GET /user or /health.
// The quiet phase measures refresh, GET /user and /health at fixed moderate rates alone (half before the
// flood, half after); the flood phase repeats them during a password-login flood. Targets: refresh p99 under the flood ≤ 2× alone; /health p99 < 20 ms.
// Without the refresh grant in the build, GET /user stands in for it.
import { PASSWORD, userEmail } from '../lib/seed.mjs';
import { JSON_HEADERS } from '../lib/context.mjs';
import { refreshChain, refreshUnsupported } from '../lib/refresh.mjs';
import { mergeLoads, round } from '../lib/load.mjs';

const PROBES = { refresh: { rate: 100, connections: 4 }, user: { rate: 200, connections: 4 }, health: { rate: 20, connections: 1 } };
const HEALTH_P99_MS = 20;

export default {
  name: 'mixed',
  describe: 'refresh, GET /user and /health at fixed rates, alone and then during a password-login flood',
  async run(bench) {
    const { service, options } = bench;
    const refreshSessions = await bench.sessions(PROBES.refresh.connections);
    const userSessions = await bench.sessions(PROBES.user.connections);
    const refreshSkipped = await refreshUnsupported(service.url, refreshSessions[0]);
    const probes = (progress, duration = options.duration) => ({
      ...(refreshSkipped
        ? {}
        : {
            refresh: bench.load({
              title: 'mixed: refresh',
              path: '/token',
              duration,
              ...PROBES.refresh,
              overallRate: PROBES.refresh.rate,
              progress,
              perConnection: (i) => refreshChain(refreshSessions[i]),
            }),
          }),
      user: bench.load({
        title: 'mixed: user',
        path: '/user',
        duration,
        connections: PROBES.user.connections,
        overallRate: PROBES.user.rate,
        progress: progress && !!refreshSkipped,
        perConnection: (i) => [{ method: 'GET', headers: { authorization: `Bearer ${userSessions[i].access_token}` } }],
      }),
      health: bench.load({
        title: 'mixed: health',
        path: '/health',
        duration,
        connections: 1,
        overallRate: PROBES.health.rate,
        progress: false,
      }),
    });
    // Half the quiet phase before the flood and half after, merged: the machine's drift hits both phases.
    const before = await settle(probes(options.progress, options.duration / 2));
    let n = 0;
    const connections = 4 * service.workers.crypto;
    const flood = await settle({
      ...probes(false),
      password: bench.load({
        title: 'mixed: password flood',
        path: '/token?grant_type=password',
        connections,
        requests: [
          {
            method: 'POST',
            headers: JSON_HEADERS,
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: userEmail(n++ % options.users), password: PASSWORD }) }),
          },
        ],
      }),
    });
    const after = await settle(probes(options.progress, options.duration / 2));
    const alone = Object.fromEntries(Object.keys(before).map((name) => [name, mergeLoads([before[name], after[name]])]));

    const probe = refreshSkipped ? 'user' : 'refresh';
    const ratio = alone[probe].p99 > 0 ? round(flood[probe].p99 / alone[probe].p99, 3) : 0;
    const non2xx = Object.values(flood)
      .concat(Object.values(alone))
      .reduce((sum, r) => sum + r.non2xx, 0);
    return {
      reqPerSec: flood.password.reqPerSec,
      p50: flood[probe].p50,
      p99: flood[probe].p99,
      non2xx,
      limit: alone[probe].p99,
      limitKind: `${probe} p99 (ms) without the flood`,
      ratio,
      target: 2,
      targetKind: 'max',
      meetsTarget: ratio <= 2,
      health: { p99: flood.health.p99, target: HEALTH_P99_MS, meetsTarget: flood.health.p99 < HEALTH_P99_MS },
      probe,
      refreshSkipped: refreshSkipped ?? undefined,
      phases: { alone, flood },
    };
  },
};

async function settle(runs) {
  const names = Object.keys(runs);
  const results = await Promise.all(Object.values(runs));
  return Object.fromEntries(names.map((name, i) => [name, results[i]]));
}
