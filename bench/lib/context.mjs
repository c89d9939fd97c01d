// What every scenario gets: the running service, the options, and small helpers to load an endpoint,
// make sessions and compare a result with its limit.
import { load, round } from './load.mjs';
import { signIn } from './seed.mjs';

export function benchContext(options, service) {
  let signedIn = 0;
  return {
    options, service,
    runId: Date.now().toString(36),
    /** autocannon against a path of the service, for the bench's duration unless told otherwise */
    load: ({ path, ...rest }) => load({ url: service.url + path, duration: options.duration, progress: options.progress, ...rest }),
    /** `count` new sessions through the password grant, spread over the seeded users */
    async sessions(count) {
      const made = await signIn(service, count, options.users, { offset: signedIn });
      signedIn += count;
      return made;
    },
    /**
     * Measures the limit for half the duration before the load and half after, and averages: this
     * machine's CPU share drifts minute to minute, and a limit taken only before or only after the load
     * would carry that drift into the ratio. `measure(options)` returns a number or {perSec} / {reqPerSec}.
     */
    async bracket(measure, runLoad) {
      const half = { ...options, duration: options.duration / 2 };
      const before = await measure(half);
      const result = await runLoad();
      const after = await measure(half);
      const rate = (x) => (typeof x === 'number' ? x : x.perSec ?? x.reqPerSec);
      return { result, limit: round((rate(before) + rate(after)) / 2), before, after };
    },
    /** A scenario's row: its load result, the limit in the same unit, the ratio and whether it meets the target. */
    compare(result, { limit, limitKind, target = null, guide = null, limitDetail }) {
      const ratio = limit > 0 ? round(result.reqPerSec / limit, 3) : 0;
      return { ...result, limit, limitKind, limitDetail, ratio, target,
        meetsTarget: target === null ? null : ratio >= target, guide, meetsGuide: guide === null ? null : result.reqPerSec >= guide };
    },
  };
}

/** The claims of a JWT, unverified: the bench only needs the ids it carries. */
export function claimsOf(accessToken) {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8'));
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
