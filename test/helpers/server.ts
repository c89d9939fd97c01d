// Starts the real service (compiled dist/, real worker threads, a fresh real database) for one test
// file, and gives the test a small HTTP client. Environment overrides use the service's own names.
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { pino } from 'pino';
import { LOGRUS_SHAPE } from '../../dist/server/observability/log.js';
import pg from 'pg';
import { loadConfig } from '../../dist/server/config/load.js';
import { startService, type Service } from '../../dist/server/service.js';
import { createTestDatabase } from './db.js';
import { anyFreePort, canListen } from '../../dist/db/embedded/local-port.js';

export const JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** the parsed JSON body (undefined when empty) */
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  token?: string;
  raw?: string | Buffer;
}

export interface TestService {
  url: string;
  service: Service;
  /** a pg pool on the service's database (search_path = the namespace) for assertions */
  db: pg.Pool;
  logFile: string;
  request(method: string, pathAndQuery: string, options?: RequestOptions): Promise<Reply>;
  /** log lines written so far (JSON objects); complete after stop() */
  logs(): Array<Record<string, any>>;
  stop(): Promise<void>;
}

/**
 * A port for a service to listen on, free now and outside the kernel's ephemeral range. A port from
 * listen(0) comes from that range, where every outgoing connection of every test process also takes its
 * local port: in the moment before the service binds (a second, for a child process), one of them could
 * take it and the service would not start. Below the range only another test's pick can collide, and the
 * probe refuses a port already held. Without a range to read, the kernel's pick is used.
 */
export async function freePort(): Promise<number> {
  if (EPHEMERAL_LOW > FIXED_LOW + 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const candidate = FIXED_LOW + randomInt(EPHEMERAL_LOW - FIXED_LOW);
      // 10080 is on fetch's list of blocked ports: a test's fetch to a service there fails with 'bad port'.
      if (candidate !== 10_080 && (await canListen(candidate))) return candidate;
    }
  }
  return anyFreePort();
}

/** Ports from here up to the ephemeral range: above the well-known ones and this machine's own services. */
const FIXED_LOW = 10_000;
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
})();

/** The settings a test service starts with (the service's own names), before a test's own. */
export function testServiceEnv(databaseUrl: string, port: number): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: JWT_SECRET,
    // As the original's own test environment (hack/test.env) and every Supabase deployment set them; both are
    // empty by default (docs/settings.md#tokens).
    AUTH_JWT_AUD: 'authenticated',
    AUTH_JWT_DEFAULT_GROUP_NAME: 'authenticated',
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_API_EXTERNAL_URL: `http://127.0.0.1:${port}`,
    AUTH_API_HOST: '127.0.0.1',
    AUTH_API_PORT: String(port),
    AUTH_HTTP_WORKERS: '1',
    AUTH_CRYPTO_WORKERS: '2',
    AUTH_PASSWORD_HASH_MEMORY_KIB: '1024',
    AUTH_PASSWORD_HASH_TIME_COST: '1',
    // The background cleanup deletes by age; a test that ages rows on purpose must not race it.
    // test/cleanup.test.ts turns it on.
    AUTH_DB_CLEANUP_ENABLED: 'false',
  };
}

/**
 * Starts the service on a fresh database, or on `env.DATABASE_URL` when given (then left in place). The
 * fresh one comes migrated unless the test names its own namespace, so the start finds nothing to apply;
 * tests of migrating at start give their own DATABASE_URL.
 */
export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const ownNamespace = ['DB_NAMESPACE', 'AUTH_DB_NAMESPACE', 'GOTRUE_DB_NAMESPACE'].some((name) => env[name] !== undefined);
  const database = env.DATABASE_URL
    ? { url: env.DATABASE_URL, drop: async () => {} }
    : await createTestDatabase({ migrated: !ownNamespace });
  const port = await freePort();
  const logFile = path.join(logDirectory(), 'service.log');
  const config = loadConfig({
    envFile: null,
    env: { ...testServiceEnv(database.url, port), AUTH_LOG_LEVEL: 'info', AUTH_LOG_FILE: logFile, ...env },
  });
  const log = pino({ ...LOGRUS_SHAPE, level: 'info' }, pino.destination({ dest: logFile, append: true, sync: true }));
  // The threads run compiled JavaScript, as in production: the test runner's TypeScript (tsx) and
  // process-tracking hooks would otherwise load again in each of them, and sit in front of every import.
  // A thread given its own options reads NODE_OPTIONS from its environment again, and the runner puts
  // one of its hooks there, so that goes too (nothing here uses the runner's tracking of child processes).
  delete process.env.NODE_OPTIONS;
  const service = await startService(config, log, { threadExecArgv: [] });
  const db = new pg.Pool({ connectionString: database.url, max: 2, options: `-c search_path=${config.db.namespace}` });
  // An idle connection ended by the server (the database dropped WITH (FORCE) at stop, a test that restarts
  // PostgreSQL) is an 'error' on the pool; without a listener it would end the whole test process.
  db.on('error', () => {});
  const url = `http://127.0.0.1:${service.port}`;
  let stopped: Promise<void> | null = null;
  return {
    url,
    service,
    db,
    logFile,
    request: (method, pathAndQuery, options = {}) => request(url, method, pathAndQuery, options),
    logs: () =>
      existsSync(logFile)
        ? readFileSync(logFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
    stop() {
      stopped ??= (async () => {
        await db.end();
        await service.stop();
        await database.drop();
      })();
      return stopped;
    },
  };
}

/**
 * A folder for one service's log file. Tests read a service's log after stopping it, so the folders go when
 * the test process exits, not at stop; without that every run left a few hundred behind in the temp folder.
 */
const logDirectories: string[] = [];
function logDirectory(): string {
  if (logDirectories.length === 0) {
    process.once('exit', () => {
      for (const dir of logDirectories) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-log-'));
  logDirectories.push(dir);
  return dir;
}

export async function request(base: string, method: string, pathAndQuery: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Blob | undefined =
    options.raw === undefined || typeof options.raw === 'string' ? options.raw : new Blob([new Uint8Array(options.raw)]);
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(base + pathAndQuery, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}
