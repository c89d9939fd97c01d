// Sign-ups with autoconfirm (each answers a session), a new address per request. Two ceilings apply and
// the lower one binds: argon2id hashes/s direct on the crypto threads, and the sign-up transaction's
// statements through pg with the service's pools.
import { argon2LimitDetail } from '../limits/argon2.mjs';
import { cpuCeiling } from '../lib/cpu.mjs';
import { openSqlLimit } from '../limits/sql.mjs';
import { hashPassword } from '../../dist/workers/crypto.js';
import { PASSWORD } from '../lib/seed.mjs';
import { JSON_HEADERS } from '../lib/context.mjs';

export default {
  name: 'signup',
  describe: 'POST /signup with MAILER_AUTOCONFIRM=true, a new email per request',
  async run(bench) {
    const { service, options } = bench;
    const connections = 4 * service.workers.crypto;
    let n = 0;
    const fixture = {
      runId: bench.runId,
      aud: service.aud,
      role: service.role,
      passwordHash: await hashPassword({ ...service.hash, password: PASSWORD }),
    };
    const statements = await openSqlLimit(service, options, { kind: 'signup', concurrency: connections, fixture });
    const both = async (o) => {
      const hashes = await argon2LimitDetail(service, o, 'hash');
      const sql = await statements.measure(o);
      return { perSec: Math.min(hashes.perSec, sql.perSec), argon2idHashesPerSec: hashes.perSec, argon2CpuUsPerOp: hashes.cpuUsPerOp, sql };
    };
    const { result, limit, samples, rates } = await bench
      .bracket(both, (o) =>
        bench.load({
          duration: o.duration,
          title: 'signup',
          path: '/signup',
          connections,
          requests: [
            {
              method: 'POST',
              headers: JSON_HEADERS,
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({ email: `signup-${bench.runId}-${n++}@example.com`, password: PASSWORD }),
              }),
            },
          ],
        }),
      )
      .finally(statements.close);
    const sum = (pick) => samples.reduce((total, s) => total + pick(s), 0);
    const hashBound = sum((s) => s.argon2idHashesPerSec) <= sum((s) => s.sql.perSec);
    const hashSamples = samples.map((s) => ({ perSec: s.argon2idHashesPerSec, cpuUsPerOp: s.argon2CpuUsPerOp }));
    return bench.compare(
      { ...result, connections, ...(hashBound && { cpuCeiling: cpuCeiling(hashSamples, result) }) },
      {
        limit,
        limitDetail: {
          samples: rates,
          argon2idHashesPerSec: samples.map((s) => s.argon2idHashesPerSec),
          sqlPerSec: samples.map((s) => s.sql.perSec),
        },
        limitKind: hashBound ? 'argon2id hashes/s, direct, same threads' : 'the sign-up statements/s through pg, same pools',
        // issue 19: a sign-up is one argon2id hash plus a few statements, so ≥ 0.95 of the hashes alone
        target: hashBound ? 0.95 : null,
      },
    );
  },
};
