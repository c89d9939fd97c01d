// Overload is shed early (issue 11): password logins offered at twice the measured capacity (argon2id
// verifies/s with the service's parameters and threads, called directly) while /health is probed. The
// service should keep accepting about its capacity, answer the accepted ones quickly, refuse the rest at
// once with 503 + Retry-After, and keep /health fast. Targets: accepted/capacity ≥ 0.9, p99 of accepted
// ≤ 2 s, p99 of refusals < 50 ms, /health p99 < 20 ms.
import { argon2Limit } from '../limits/argon2.mjs';
import { PASSWORD, userEmail } from '../lib/seed.mjs';
import { JSON_HEADERS } from '../lib/context.mjs';
import { round } from '../lib/load.mjs';

const OFFERED = 2;
const TARGETS = { ratio: 0.9, acceptedP99: 2000, refusedP99: 50, healthP99: 20 };
/** autocannon waits for each answer, so the offered rate needs this many connections (capped: a shared box). */
const MAX_CONNECTIONS = 400;

export default {
  name: 'overload',
  describe: 'POST /token?grant_type=password at 2× measured capacity, with /health probed throughout',
  async run(bench) {
    const { service, options } = bench;
    const capacity = await argon2Limit(service, { ...options, duration: Math.max(1, options.duration / 2) }, 'verify');
    const rate = Math.max(1, Math.round(OFFERED * capacity));
    // Enough connections for a second of the offered rate to be in flight (refusals return at once, accepted logins in about a second).
    const connections = Math.min(MAX_CONNECTIONS, Math.max(4, rate));
    let n = 0;
    const [logins, health] = await Promise.all([
      bench.load({
        title: 'overload: password at 2×',
        path: '/token?grant_type=password',
        connections,
        overallRate: rate,
        // Refusals come back at once, accepted logins only after their hash: a phase is measured once
        // it has accepted at least one.
        enough: (row) => (row.byStatus['200']?.count ?? 0) > 0,
        requests: [
          {
            method: 'POST',
            headers: JSON_HEADERS,
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: userEmail(n++ % options.users), password: PASSWORD }) }),
          },
        ],
      }),
      bench.load({ title: 'overload: health', path: '/health', connections: 1, overallRate: 20, progress: false }),
    ]);
    const accepted = logins.byStatus['200'] ?? { count: 0, p50: 0, p99: 0 };
    const refused = logins.byStatus['503'] ?? { count: 0, p50: 0, p99: 0 };
    const acceptedPerSec = round(accepted.count / logins.seconds);
    const ratio = capacity > 0 ? round(acceptedPerSec / capacity, 3) : 0;
    const other = logins.requests - accepted.count - refused.count;
    return {
      reqPerSec: acceptedPerSec,
      p50: accepted.p50,
      p99: accepted.p99,
      offeredPerSec: rate,
      connections,
      // Refusals are the scenario's point: only answers that are neither accepted nor refused count as bad.
      non2xx: other,
      statuses: logins.statuses,
      errors: logins.errors,
      timeouts: logins.timeouts,
      limit: capacity,
      limitKind: 'argon2id verifies/s, direct, same threads',
      ratio,
      target: TARGETS.ratio,
      meetsTarget:
        ratio >= TARGETS.ratio && accepted.p99 <= TARGETS.acceptedP99 && refused.p99 < TARGETS.refusedP99 && health.p99 < TARGETS.healthP99,
      accepted: { ...accepted, perSec: acceptedPerSec, target: TARGETS.acceptedP99 },
      refused: { ...refused, perSec: round(refused.count / logins.seconds), target: TARGETS.refusedP99 },
      health: { p99: health.p99, target: TARGETS.healthP99, meetsTarget: health.p99 < TARGETS.healthP99 },
    };
  },
};
