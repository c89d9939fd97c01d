// Password sign-ins, a different seeded user each request, against argon2id verifies/s with the same
// parameters and thread count called directly: argon2 is the ceiling, everything else should be noise.
import { argon2LimitDetail } from '../limits/argon2.mjs';
import { cpuCeiling } from '../lib/cpu.mjs';
import { PASSWORD, userEmail } from '../lib/seed.mjs';
import { JSON_HEADERS } from '../lib/context.mjs';

export default {
  name: 'token-password',
  describe: 'POST /token?grant_type=password, a different confirmed user per request',
  async run(bench) {
    const { service, options } = bench;
    let n = 0;
    // Enough requests in flight to keep every crypto thread busy while answers travel back.
    const connections = 4 * service.workers.crypto;
    const { result, limit, rates, samples } = await bench.bracket(
      (o) => argon2LimitDetail(service, o, 'verify'),
      (o) =>
        bench.load({
          duration: o.duration,
          title: 'token-password',
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
    );
    return bench.compare(
      { ...result, connections, cpuCeiling: cpuCeiling(samples, result) },
      { limit, limitDetail: { samples: rates }, limitKind: 'argon2id verifies/s, direct, same threads', target: 0.95, guide: 55 },
    );
  },
};
