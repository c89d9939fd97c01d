// The minimal handler's process: its threads (handler-thread.mjs) in a process of their own, as the
// service's HTTP threads are, so that the CPU it uses per request is read from /proc apart from the
// bench's autocannon (lib/cpu.mjs accounts by process). Told its settings over IPC, answers 'listening'.
import { Worker } from 'node:worker_threads';

const threads = [];
process.once('message', async ({ threads: count, workerData }) => {
  try {
    // The first thread binds, the others join (as service.ts does: binding concurrently is not safe).
    for (let i = 0; i < count; i++) {
      const worker = new Worker(new URL('./handler-thread.mjs', import.meta.url), { workerData });
      threads.push(worker);
      await new Promise((resolve, reject) => {
        worker.once('message', (m) => (m.type === 'listening' ? resolve() : reject(new Error(`could not listen on ${workerData.port}`))));
        worker.once('error', reject);
      });
    }
    process.send({ type: 'listening' });
  } catch (err) {
    process.send({ type: 'failed', error: String(err) });
  }
  process.once('message', async () => {
    await Promise.all(threads.map((w) => new Promise((resolve) => (w.once('exit', resolve), w.postMessage('close')))));
    process.disconnect();
  });
});
