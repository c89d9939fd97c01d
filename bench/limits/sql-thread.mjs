// One thread of the SQL limit: a pg pool made as an HTTP thread makes its own (same size, same options),
// `loops` concurrent callers of one workload, started on the parent's signal.
import { parentPort, workerData } from 'node:worker_threads';
import { createPool } from '../../dist/db/pool.js';
import { WORKLOADS } from './sql-workloads.mjs';

const { databaseUrl, namespace, poolSize, kind, loops, firstLoop, fixture } = workerData;
const pool = createPool({ url: databaseUrl, max: poolSize, namespace, applicationName: 'portcullis-bench-limit' });
const calls = await Promise.all(Array.from({ length: loops }, (_, i) => WORKLOADS[kind].prepare(pool, fixture, firstLoop + i)));
await Promise.all(calls.map((call) => call())); // warm up: connections opened, statements prepared
parentPort.postMessage({ type: 'ready' });

parentPort.once('message', async ({ seconds }) => {
  const latencies = [];
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(calls.map(async (call) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await call();
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  await pool.end();
  parentPort.postMessage({ type: 'done', elapsed, latencies });
});
