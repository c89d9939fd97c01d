// One thread of the SQL limit: a pg pool made as an HTTP thread makes its own (same size, same options),
// `loops` concurrent callers of one workload. The thread lives for a whole scenario and runs one slice
// per {seconds} message, so its code is as warm as the service's long-lived threads ({close} ends it).
import { parentPort, workerData } from 'node:worker_threads';
import { createPool } from '../../dist/db/pool.js';
import { WORKLOADS } from './sql-workloads.mjs';

const { databaseUrl, namespace, poolSize, kind, loops, firstLoop, fixture } = workerData;
const pool = createPool({ url: databaseUrl, max: poolSize, namespace, applicationName: 'portcullis-bench-limit' });
const calls = await Promise.all(Array.from({ length: loops }, (_, i) => WORKLOADS[kind].prepare(pool, fixture, firstLoop + i)));
await Promise.all(calls.map((call) => call())); // connections opened, statements prepared
parentPort.postMessage({ type: 'ready' });

parentPort.on('message', async (message) => {
  if (message.type === 'close') {
    await pool.end();
    parentPort.close();
    return;
  }
  const latencies = [];
  const end = performance.now() + message.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    calls.map(async (call) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await call();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  parentPort.postMessage({ type: 'done', elapsed: (performance.now() - started) / 1000, latencies });
});
