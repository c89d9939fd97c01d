// GET /ready — readiness for Kubernetes and Docker (README "Faults and readiness"): 200 when this HTTP
// thread reaches the database through its own pool and the crypto pool answers, else 503 with Retry-After.
// GET /health stays the liveness answer, which needs neither (as the original's).
import { ApiError, apiError } from '../errors.js';
import { ping } from '../../db/ping.js';
import type { Handler } from '../http/types.js';
import type { AppContext } from '../context.js';

/** Kubernetes' default probe timeout is 1 s: a check still pending by then has failed. */
const CHECK_TIMEOUT_MS = 900;
/** 'ready' hashed with argon2id's smallest parameters: a crypto pool round trip that costs microseconds. */
const PROBE_HASH = '$argon2id$v=19$m=8,t=1,p=1$cG9ydGN1bGxpcy1yZWFkeQ$Yt+lDaYnAS0sFkxlMMrR2+YFRGMnjd92HQQ5n9miTrI';

type Outcome = 'ok' | 'failed' | 'timeout';

export const ready: Handler = async (_req, ctx) => {
  const [database, crypto] = await Promise.all([
    check(ctx, 'database', () => ping(ctx.db)),
    check(ctx, 'crypto', async () => {
      try {
        if (!(await ctx.hasher.verify(PROBE_HASH, 'ready')).ok) throw new Error('the probe hash did not verify');
      } catch (err) {
        // A full hashing queue is load, not a fault: taking the instance out of rotation would only move the flood.
        if (!(err instanceof ApiError && err.errorCode === 'over_capacity')) throw err;
      }
    }),
  ]);
  const checks = { database, crypto };
  const failing = Object.entries(checks)
    .filter(([, outcome]) => outcome !== 'ok')
    .map(([name]) => name);
  if (failing.length > 0) throw apiError('not_ready', `Not ready: ${failing.join(' and ')} unavailable`, { checks });
  return { body: { status: 'ready', checks } };
};

function check(ctx: AppContext, name: string, probe: () => Promise<void>): Promise<Outcome> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), CHECK_TIMEOUT_MS);
    probe()
      .then(
        () => resolve('ok'),
        (err) => {
          ctx.log.warn({ err, check: name }, 'readiness check failed');
          resolve('failed');
        },
      )
      .finally(() => clearTimeout(timer));
  });
}
