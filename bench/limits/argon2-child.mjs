// The password-grant ceiling: argon2id called directly (the crypto pool's own task functions, without
// piscina, MessagePorts or HTTP), `threads` calls in flight at once, as the pool runs them. Its own
// process, so that UV_THREADPOOL_SIZE is the service's.
import { hashPassword, verifyPassword } from '../../dist/workers/crypto.js';

process.once('message', async ({ mode, params, threads, seconds }) => {
  const password = 'bench-password-0123';
  const stored = await hashPassword({ ...params, password });
  const call = mode === 'hash' ? () => hashPassword({ ...params, password }) : () => verifyPassword({ ...params, hash: stored, password });
  await Promise.all(Array.from({ length: threads }, call)); // warm up: first allocations, thread start
  let count = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  // this process's CPU (argon2 runs on its libuv threads): per call, the cost the service's CPU is compared with
  const cpuBefore = process.cpuUsage();
  const loop = async () => {
    while (performance.now() < end) {
      await call();
      count++;
    }
  };
  await Promise.all(Array.from({ length: threads }, loop));
  const cpu = process.cpuUsage(cpuBefore);
  process.send({ perSec: count / ((performance.now() - started) / 1000), count, cpuUsPerOp: (cpu.user + cpu.system) / count });
  process.disconnect();
});
