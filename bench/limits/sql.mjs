// The SQL ceiling of an endpoint: its statements driven directly through pg, from as many threads as the
// service has HTTP threads, each with the service's per-thread pool size, with as many callers in flight
// as the scenario has connections.
import { Worker } from 'node:worker_threads';
import { percentile, progressFor, round, warmupSeconds } from '../lib/load.mjs';

/**
 * Starts the limit's threads and warms them up (a fresh thread runs cold, unoptimised code for its first
 * second or so: measured, that put short slices ~30 % below the service's warm threads). measure(options)
 * runs one slice of options.duration seconds.
 */
export async function openSqlLimit(service, options, { kind, concurrency, fixture }) {
  const threads = service.workers.http;
  const workers = Array.from({ length: threads }, (_, t) => {
    const loops = Math.floor(concurrency / threads) + (t < concurrency % threads ? 1 : 0);
    const firstLoop = t * Math.ceil(concurrency / threads);
    return new Worker(new URL('./sql-thread.mjs', import.meta.url), {
      workerData: {
        databaseUrl: service.databaseUrl,
        namespace: service.namespace,
        poolSize: service.poolSize,
        kind,
        loops,
        firstLoop,
        fixture,
      },
    });
  });
  const next = (worker, type) =>
    new Promise((resolve, reject) => {
      const onMessage = (m) => {
        if (m.type === type) {
          worker.off('message', onMessage);
          resolve(m);
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  await Promise.all(workers.map((w) => next(w, 'ready')));

  const measure = async ({ duration, progress }) => {
    const stop = progressFor(`limit: ${kind} SQL direct`, duration, () => '…', progress);
    const done = workers.map((w) => next(w, 'done'));
    workers.forEach((w) => w.postMessage({ type: 'run', seconds: duration }));
    const results = await Promise.all(done);
    stop();
    const latencies = Float64Array.from(results.flatMap((r) => r.latencies)).sort();
    const elapsed = Math.max(...results.map((r) => r.elapsed));
    return { perSec: round(latencies.length / elapsed), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  };
  await measure({ duration: warmupSeconds(options.duration), progress: options.progress }); // warm-up, discarded
  return {
    measure,
    close: () =>
      Promise.all(
        workers.map(
          (w) =>
            new Promise((resolve) => {
              w.once('exit', resolve);
              w.postMessage({ type: 'close' });
            }),
        ),
      ),
  };
}
