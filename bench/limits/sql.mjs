// The SQL ceiling of an endpoint: its statements driven directly through pg, from as many threads as the
// service has HTTP threads, each with the service's per-thread pool size, with as many callers in flight
// as the scenario has connections.
import { Worker } from 'node:worker_threads';
import { percentile, progressFor, round } from '../lib/load.mjs';

export async function sqlLimit(service, options, { kind, concurrency, fixture }) {
  const threads = service.workers.http;
  const workers = Array.from({ length: threads }, (_, t) => {
    const loops = Math.floor(concurrency / threads) + (t < concurrency % threads ? 1 : 0);
    const firstLoop = t * Math.ceil(concurrency / threads);
    return new Worker(new URL('./sql-thread.mjs', import.meta.url), { workerData: {
      databaseUrl: service.databaseUrl, namespace: service.namespace, poolSize: service.poolSize, kind, loops, firstLoop, fixture } });
  });
  const next = (worker, type) => new Promise((resolve, reject) => {
    const onMessage = (m) => { if (m.type === type) { worker.off('message', onMessage); resolve(m); } };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  await Promise.all(workers.map((w) => next(w, 'ready')));
  const stop = progressFor(`limit: ${kind} SQL direct`, options.duration, () => '…', options.progress);
  const done = workers.map((w) => next(w, 'done'));
  workers.forEach((w) => w.postMessage({ seconds: options.duration }));
  const results = await Promise.all(done);
  stop();
  const latencies = Float64Array.from(results.flatMap((r) => r.latencies)).sort();
  const elapsed = Math.max(...results.map((r) => r.elapsed));
  return { perSec: round(latencies.length / elapsed), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
