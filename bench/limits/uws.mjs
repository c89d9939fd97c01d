// The ceiling of an endpoint that only formats a constant answer (/settings, /health): a bare uWS handler
// on as many threads as the service has HTTP threads, sharing one port as the service's threads do,
// loaded by the same autocannon settings as the scenario. The threads live for the whole scenario.
import { Worker } from 'node:worker_threads';
import { freePort } from '../lib/service.mjs';
import { load } from '../lib/load.mjs';

export async function openBareUws(service, { path, body, connections }) {
  const port = await freePort();
  const threads = [];
  const listening = (worker) =>
    new Promise((resolve, reject) => {
      worker.once('message', (m) => (m.type === 'listening' ? resolve() : reject(new Error(`bare uWS could not listen on ${port}`))));
      worker.once('error', reject);
    });
  // The first thread binds, the others join (as service.ts does: binding concurrently is not safe).
  for (let i = 0; i < service.workers.http; i++) {
    const worker = new Worker(new URL('./uws-thread.mjs', import.meta.url), { workerData: { port, path, body } });
    threads.push(worker);
    await listening(worker);
  }
  return {
    measure: ({ duration, progress }) =>
      load({ title: `limit: bare uWS ${path}`, url: `http://127.0.0.1:${port}${path}`, duration, connections, progress }),
    close: () =>
      Promise.all(
        threads.map(
          (w) =>
            new Promise((resolve) => {
              w.once('exit', resolve);
              w.postMessage('close');
            }),
        ),
      ),
  };
}
