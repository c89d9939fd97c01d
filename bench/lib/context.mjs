// What every scenario gets: the running service, the options, and small helpers to load an endpoint,
// make sessions and compare a result with its limit.
import { load, mergeLoads, round, warmupSeconds } from './load.mjs';
import { signIn } from './seed.mjs';
import { cpuAccount } from './cpu.mjs';

export function benchContext(options, service) {
  let signedIn = 0;
  return {
    options,
    service,
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
     * Interleaves the load with its limit: rounds of [limit ½ slice, load 1 slice, limit ½ slice], so both
     * sides see the same drift in this machine's CPU share (it moves minute to minute on a shared box; a
     * limit taken only before or only after the load carried that drift into the ratio). `measure(o)` and
     * `runLoad(o)` get the options with `duration` set to their slice; measure returns a number, or an
     * object with perSec or reqPerSec. The limit is the mean of its samples; the load's slices are merged.
     * The CPU each side used is accounted too (lib/cpu.mjs): µs per request of the load, per operation
     * of the limit, on the result as `cpu: { load, limit }`.
     * `handler` (optional, limits/handler.mjs: { measure, pid }) is a second limit measured in the same
     * rounds, inside the first: [limit ½, handler ½, load 1, handler ½, limit ½]; its rate is `handler`
     * and its CPU per request `cpu.handler`, where "service" is the handler's own process.
     */
    async bracket(measure, runLoad, handler = null) {
      const rounds = Math.max(1, Math.round(options.duration / 2.5));
      const slice = { ...options, duration: options.duration / rounds };
      const half = { ...options, duration: slice.duration / 2 };
      const samples = [];
      const loads = [];
      const limitCpu = cpuAccount(service.pid);
      const loadCpu = cpuAccount(service.pid);
      const handlerCpu = handler && cpuAccount(handler.pid);
      const handled = [];
      // The endpoint's code in the service is as cold as a fresh thread's until it has run a moment: the
      // limits and the minimal handler are warmed up before they are measured, so the service is too, on
      // the scenario's own requests (discarded). Without it a 3 s run measured V8 compiling the endpoint.
      const warmupDuration = warmupSeconds(slice.duration);
      const warmup = await runLoad({ ...slice, duration: warmupDuration });
      for (let i = 0; i < rounds; i++) {
        samples.push(await limitCpu.measure(() => measure(half)));
        if (handler) handled.push(await handlerCpu.measure(() => handler.measure(half)));
        loads.push(await loadCpu.measure(() => runLoad(slice)));
        if (handler) handled.push(await handlerCpu.measure(() => handler.measure(half)));
        samples.push(await limitCpu.measure(() => measure(half)));
      }
      const rate = (x) => (typeof x === 'number' ? x : (x.perSec ?? x.reqPerSec));
      const rates = samples.map(rate);
      const result = mergeLoads(loads);
      result.warmup = { seconds: warmupDuration, requests: warmup.requests, non2xx: warmup.non2xx };
      const limitOps = rates.reduce((sum, r) => sum + r * half.duration, 0);
      result.cpu = { load: loadCpu.perOp(result.requests), limit: limitCpu.perOp(limitOps) };
      const mean = (xs) => round(xs.reduce((a, b) => a + b, 0) / xs.length);
      const out = { result, limit: mean(rates), samples, rates };
      if (handler) {
        const merged = mergeLoads(handled);
        result.cpu.handler = handlerCpu.perOp(merged.requests);
        out.handler = { perSec: merged.reqPerSec, non2xx: merged.non2xx, statuses: merged.statuses };
      }
      return out;
    },
    /** A scenario's row: its load result, the limit in the same unit, the ratio and whether it meets the target. */
    compare(
      result,
      {
        limit,
        limitKind,
        target = null,
        guide = null,
        limitDetail,
        handler = null,
        handlerTarget = null,
        handlerCpuTarget = null,
        databaseCpuTarget = null,
      },
    ) {
      const ratio = limit > 0 ? round(result.reqPerSec / limit, 3) : 0;
      const handlerRatio = handler?.perSec > 0 ? round(result.reqPerSec / handler.perSec, 3) : 0;
      // CPU per request, the service's over the minimal handler's: the number least moved by load
      const cpuRatio = result.cpu?.load && result.cpu.handler ? round(result.cpu.load.serviceUs / result.cpu.handler.serviceUs, 2) : null;
      // PostgreSQL's CPU per request under the service over its CPU per operation of the SQL limit
      const dbRatio =
        result.cpu?.load && result.cpu.limit?.databaseUs > 0 ? round(result.cpu.load.databaseUs / result.cpu.limit.databaseUs, 2) : null;
      return {
        ...result,
        ...(handler && {
          handler: {
            ...handler,
            ratio: handlerRatio,
            cpuRatio,
            target: handlerTarget,
            meetsTarget: handlerTarget === null ? null : handlerRatio >= handlerTarget,
            cpuTarget: handlerCpuTarget,
            meetsCpuTarget: handlerCpuTarget === null || cpuRatio === null ? null : cpuRatio <= handlerCpuTarget,
          },
        }),
        ...(databaseCpuTarget !== null && {
          databaseCpu: { ratio: dbRatio, target: databaseCpuTarget, meetsTarget: dbRatio === null ? null : dbRatio <= databaseCpuTarget },
        }),
        limit,
        limitKind,
        limitDetail,
        ratio,
        target,
        meetsTarget: target === null ? null : ratio >= target,
        guide,
        meetsGuide: guide === null ? null : result.reqPerSec >= guide,
      };
    },
  };
}

/** The claims of a JWT, unverified: the bench only needs the ids it carries. */
export function claimsOf(accessToken) {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8'));
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
