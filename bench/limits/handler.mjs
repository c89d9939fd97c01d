// The limit a real service can reach on an endpoint that authenticates and reads or writes the database
// (GET /user, the refresh grant): a minimal uWS handler doing the same work (handler-thread.mjs) on as
// many threads as the service has HTTP threads, each with the service's per-thread pool size, in a
// process of its own (handler-process.mjs), loaded by the same autocannon settings as the scenario.
// Unlike the SQL limit it pays for HTTP, the JWT and the JSON, so the service's ratio to it is what the
// service's own layers (router, checks, request log, row parsing, allocations) cost.
import { fork } from 'node:child_process';
import { resolve as resolvePath } from 'node:path';
import { freePort } from '../lib/service.mjs';
import { load } from '../lib/load.mjs';

/** `path` is what the load asks for; `perConnection(i)` its requests, as for the scenario's load. */
export async function openMinimalHandler(service, { path, connections, perConnection }) {
  const port = await freePort();
  // BENCH_CPU_PROF: the handler's threads are profiled too (in handler/ under it), to compare with the service's.
  const prof = process.env.BENCH_CPU_PROF;
  const execArgv = prof ? ['--cpu-prof', `--cpu-prof-dir=${resolvePath(prof, 'handler')}`] : [];
  // BENCH_NODE_ARGS too, so that a flag being judged (a GC setting) or a profiler's symbols apply to both sides.
  execArgv.push(...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
  const child = fork(new URL('./handler-process.mjs', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  child.send({
    threads: service.workers.http,
    workerData: {
      port,
      databaseUrl: service.databaseUrl,
      namespace: service.namespace,
      poolSize: service.poolSize,
      secret: service.jwtSecret,
    },
  });
  const started = await new Promise((resolve) => child.once('message', resolve));
  if (started.type !== 'listening') throw new Error(`minimal handler: ${started.error}`);
  const measure = ({ duration, progress }) =>
    load({
      title: `limit: minimal handler ${path}`,
      url: `http://127.0.0.1:${port}${path}`,
      duration,
      connections,
      perConnection,
      progress,
    });
  await measure({ duration: 1, progress: false }); // warm-up, discarded (fresh threads run cold code)
  return {
    pid: child.pid,
    measure,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.send('close');
      }),
  };
}
