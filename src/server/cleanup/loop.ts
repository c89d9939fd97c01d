// The background cleanup (docs/tokens-and-sessions.md#cleanup): every DB_CLEANUP_INTERVAL, one pass over
// the tasks of plan.ts, each repeated batch after batch until a batch comes back short. It runs in the
// supervisor on a pool of its own (one connection, short statement and lock timeouts), so it never takes
// a connection a request needs, and every instance can run it at once (the statements skip locked rows).
import { statementLogger } from '../observability/sql-log.js';
import { configureAuditTrail } from '../../db/audit-log.js';
import type { Logger } from 'pino';
import type pg from 'pg';
import { createPool } from '../../db/pool.js';
import { cleanupTasks, type CleanupTask } from './plan.js';
import type { Config } from '../config/types.js';

/** Rows removed, by table. */
export type Removed = Partial<Record<CleanupTask['table'], number>>;

export interface Cleanup {
  /** Runs one pass now (after the one under way, if any) and resolves with what it removed. */
  runOnce(): Promise<Removed>;
  /** Resolves when the next pass, scheduled or asked for, has finished. */
  nextPass(): Promise<Removed>;
  /** Rows removed since start, by table (the auth cleanup metric reads it). */
  totals(): Removed;
  /** Stops the timer, lets the statement under way finish (bounded by its timeout) and closes the pool. */
  stop(): Promise<void>;
}

/** The statement timeout when DB_STATEMENT_TIMEOUT is 0 (none): the cleanup always has one. */
const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;
const LOCK_TIMEOUT_MS = 1000;

export function startCleanup(config: Config, databaseUrl: string, log: Logger): Cleanup {
  // The supervisor's own writer of audit entries (anonymous users removed): the same destinations as the HTTP threads'.
  configureAuditTrail({ log, toDatabase: !config.auditLog.disablePostgres });
  const { db } = config;
  const pool = createPool({
    url: databaseUrl,
    max: 1,
    namespace: db.namespace,
    applicationName: 'portcullis_cleanup',
    acquireTimeoutMs: db.acquireTimeoutSeconds * 1000,
    statementTimeoutMs: db.statementTimeoutSeconds * 1000 || DEFAULT_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: db.idleInTransactionTimeoutSeconds * 1000,
    lockTimeoutMs: LOCK_TIMEOUT_MS,
    onConnectionError: (err) => log.warn({ err }, 'database cleanup: connection lost'),
    logStatement: statementLogger(log, config.log.sql),
  });
  const tasks = cleanupTasks(config);
  const totals: Removed = {};
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<Removed> = Promise.resolve({});
  let waiters: Array<(removed: Removed) => void> = [];

  const pass = async (): Promise<Removed> => {
    const removed: Removed = {};
    for (const task of tasks) {
      const count = await drain(pool, task, () => stopped, log);
      if (count > 0) removed[task.table] = (removed[task.table] ?? 0) + count;
    }
    for (const [table, count] of Object.entries(removed) as Array<[CleanupTask['table'], number]>) {
      totals[table] = (totals[table] ?? 0) + count;
    }
    if (Object.keys(removed).length > 0) log.info({ removed }, 'database cleanup removed rows');
    const done = waiters;
    waiters = [];
    done.forEach((resolve) => resolve(removed));
    return removed;
  };
  const runOnce = (): Promise<Removed> => (current = current.then(pass, pass));
  const schedule = () => {
    if (stopped) return;
    // ±10 %: instances started together do not keep hitting the database in the same second.
    const delay = config.db.cleanup.intervalSeconds * 1000 * (0.9 + Math.random() * 0.2);
    timer = setTimeout(() => void runOnce().finally(schedule), delay);
    timer.unref();
  };
  schedule();
  log.info(
    { intervalSeconds: config.db.cleanup.intervalSeconds, tables: [...new Set(tasks.map((t) => t.table))] },
    'database cleanup started',
  );

  return {
    runOnce,
    nextPass: () => new Promise((resolve) => waiters.push(resolve)),
    totals: () => ({ ...totals }),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current.catch(() => undefined);
      await pool.end();
    },
  };
}

/** Runs one task batch after batch until a batch is short, the service stops, or a statement fails. */
async function drain(pool: pg.Pool, task: CleanupTask, stopping: () => boolean, log: Logger): Promise<number> {
  let total = 0;
  while (!stopping()) {
    let count: number;
    try {
      count = await task.run(pool, task.limit);
    } catch (err) {
      // A timeout or a lost connection: the rows stay for the next pass; the service carries on.
      log.warn({ err, table: task.table }, 'database cleanup statement failed');
      break;
    }
    total += count;
    if (count < task.limit) break;
  }
  return total;
}
