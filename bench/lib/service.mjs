// Starts the compiled service (dist/) in a child process with production-like settings: real argon2
// parameters, worker counts from the core count unless AUTH_HTTP_WORKERS / AUTH_CRYPTO_WORKERS say
// otherwise, info-level request logs to a file, autoconfirmed sign-ups, no per-client rate limit (none
// applies without AUTH_RATE_LIMIT_HEADER: REFERENCE §5.1). The database is an embedded PostgreSQL in a
// temporary directory, or BENCH_DATABASE_URL with a schema of its own that is dropped afterwards.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pgConnection } from '../../dist/db/database-url.js';

const CHILD = new URL('./serve-child.mjs', import.meta.url);
/** What service.ts gives each HTTP thread when DB_MAX_POOL_SIZE is 0. */
const DEFAULT_CONNECTIONS_PER_THREAD = 10;

export async function startBenchService(options, { uvThreadpool = options.uvThreadpool, env: extraEnv = {} } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-'));
  // As root, the embedded PostgreSQL runs as the postgres user, who must be able to pass through here.
  chmodSync(dir, 0o711);
  const port = await freePort();
  const env = {
    ...withoutDatabaseSettings(process.env),
    AUTH_API_HOST: '127.0.0.1',
    AUTH_API_PORT: String(port),
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_LOG_LEVEL: options.logLevel,
    AUTH_LOG_FILE: path.join(dir, 'service.log'),
    AUTH_DATA_DIR: path.join(dir, 'data'),
    ...extraEnv,
  };
  if (uvThreadpool) env.UV_THREADPOOL_SIZE = String(uvThreadpool);
  else delete env.UV_THREADPOOL_SIZE;
  let namespace = null;
  if (options.databaseUrl) {
    namespace = `bench_${randomBytes(4).toString('hex')}`;
    Object.assign(env, {
      DATABASE_URL: options.databaseUrl,
      AUTH_DB_DRIVER: 'postgres',
      AUTH_DB_NAMESPACE: namespace,
      AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
      // A Supabase project's audience and role (empty by default, as in the original).
      AUTH_JWT_AUD: 'authenticated',
      AUTH_JWT_DEFAULT_GROUP_NAME: 'authenticated',
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
    });
  }
  // BENCH_CPU_PROF=<dir>: V8 CPU profiles of the service, one file per thread, to see where time goes.
  const execArgv = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  // BENCH_NODE_ARGS: more Node/V8 flags for the service (--trace-deopt, --perf-basic-prof …), space-separated.
  execArgv.push(...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
  const child = fork(CHILD, { env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the service exited before it was ready (code ${code}); see its output above`)));
  }).catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const poolSize = info.maxPoolSize > 0 ? Math.max(1, Math.floor(info.maxPoolSize / info.workers.http)) : DEFAULT_CONNECTIONS_PER_THREAD;
  // The bench's own connections read BENCH_DATABASE_URL as the service does (src/db/database-url.ts).
  const { config, Client } = pgConnection(info.databaseUrl);
  const db = new pg.Pool({ ...config, Client, max: 4, options: `-c search_path=${info.namespace}` });
  return {
    ...info,
    pid: child.pid,
    poolSize,
    db,
    logFile: env.AUTH_LOG_FILE,
    uvThreadpool: uvThreadpool || '4 (libuv default)',
    async stop() {
      if (namespace) await db.query(`drop schema if exists ${namespace} cascade`).catch(() => {});
      await db.end();
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.send({ type: 'stop' });
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bench chooses the database; a DATABASE_URL in the shell must not redirect the service. */
function withoutDatabaseSettings(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/(^|_)DATABASE_URL$|^((AUTH|GOTRUE)_)?DB_NAMESPACE$/.test(name)));
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
