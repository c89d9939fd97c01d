// The runtime connection pool (node-postgres) and the one place where transactions begin and end.
// Table modules in src/db/ take a Queryable as their first argument, so the same finder runs on the pool
// or inside a transaction. Timestamps: timestamptz → Date as pg's default parser makes it, through a faster
// path for PostgreSQL's usual text (timestamps.ts). int8 columns
// (refresh_tokens.id, count(*)) come back as strings, pg's default, since they may exceed 2^53.
// Every wait is bounded (README "Faults and readiness"): acquiring a connection, each statement, a
// transaction left idle, and the number of callers queued for a connection.
import pg from 'pg';
import { assertNamespace } from './namespace.js';
import { guardCheckouts } from './checkout.js';
import { clientClass, type StatementLogger, type StatementTracer } from './client.js';
import { POOL_TYPES } from './timestamps.js';
import { pgConnection } from './database-url.js';
import { startPoolAdvisor, type PoolAdvisorOptions } from './pool-advisor.js';

export type Queryable = pg.Pool | pg.PoolClient;

export interface PoolOptions {
  url: string;
  /** connections in this pool (each HTTP thread has its own pool); a positive integer */
  max: number;
  /** the schema holding the tables: becomes the connections' search_path */
  namespace: string;
  applicationName?: string;
  /** how long a caller may wait for a connection, queued or connecting; 0 = no limit */
  acquireTimeoutMs?: number;
  /** the server cancels a statement running longer (statement_timeout); 0 = no limit */
  statementTimeoutMs?: number;
  /** the server ends a session left idle inside a transaction (idle_in_transaction_session_timeout); 0 = no limit */
  idleInTransactionTimeoutMs?: number;
  /** the server gives up waiting for a lock (lock_timeout); unset = the server's default */
  lockTimeoutMs?: number;
  /** a connection idle this long is closed; unset = pg's 10 s */
  idleTimeoutMs?: number;
  /** a connection this old is closed when next released, and replaced when needed; unset or 0 = no limit */
  maxLifetimeSeconds?: number;
  /** idle connections kept: one released beyond them, with no caller waiting, is closed; unset = no cap */
  maxIdle?: number;
  /** callers allowed to queue for a connection when all are taken; beyond it connect() fails at once */
  maxWaiting?: number;
  /** a connection failed (server restart, network), idle or checked out; pg drops it from the pool */
  onConnectionError?: (err: Error) => void;
  /** seconds each checkout waited for a connection (metrics) */
  onAcquired?: (seconds: number) => void;
  /** watch the callers that queue for a connection and advise a larger pool (DB_ADVISOR_*); unset = off */
  advisor?: PoolAdvisorOptions;
  /** called as each statement starts; the function it returns, when the statement ends (tracing) */
  traceStatement?: StatementTracer;
  /** called with each statement's text and values as it is sent (LOG_SQL) */
  logStatement?: StatementLogger;
  /**
   * false: every statement is sent unnamed, for a PgBouncer in transaction mode that cannot keep named
   * prepared statements (before 1.21, or max_prepared_statements = 0). Default true.
   */
  preparedStatements?: boolean;
}

export function createPool(options: PoolOptions): pg.Pool {
  assertNamespace(options.namespace);
  if (!Number.isInteger(options.max) || options.max < 1) {
    throw new TypeError(`pool size must be a positive integer, got ${options.max}`);
  }
  const settings = [
    `-c statement_timeout=${Math.round(options.statementTimeoutMs ?? 0)}`,
    `-c idle_in_transaction_session_timeout=${Math.round(options.idleInTransactionTimeoutMs ?? 0)}`,
    ...(options.lockTimeoutMs === undefined ? [] : [`-c lock_timeout=${Math.round(options.lockTimeoutMs)}`]),
  ];
  const { config, Client } = pgConnection(
    options.url,
    clientClass({ named: options.preparedStatements ?? true, trace: options.traceStatement, log: options.logStatement }),
  );
  const pool = new pg.Pool({
    application_name: options.applicationName ?? 'portcullis',
    ...config,
    options: withSessionSettings(config.options, settings, options.namespace),
    max: options.max,
    connectionTimeoutMillis: Math.round(options.acquireTimeoutMs ?? 0),
    ...(options.idleTimeoutMs ? { idleTimeoutMillis: Math.round(options.idleTimeoutMs) } : {}),
    ...(options.maxLifetimeSeconds ? { maxLifetimeSeconds: Math.max(1, Math.round(options.maxLifetimeSeconds)) } : {}),
    // A peer that vanished without closing (a partition, a dead host) is noticed by the kernel's probes.
    keepAlive: true,
    types: POOL_TYPES,
    Client,
  });
  const onError = (err: Error) => options.onConnectionError?.(err);
  // Without a listener, an idle client's error would be thrown as an uncaught exception and kill the
  // thread; the pool has already discarded that client, so reporting it is all that is left to do.
  pool.on('error', onError);
  const advisor = options.advisor ? startPoolAdvisor(options.advisor) : null;
  guardCheckouts(pool, options.maxWaiting ?? Infinity, {
    onError,
    maxIdle: options.maxIdle,
    onAcquired: options.onAcquired,
    onQueued: advisor?.queued,
    keepContext: !!options.traceStatement,
  });
  if (advisor) {
    // The advisor's timers do not keep the thread alive, but a pool that ends has nothing left to advise on.
    const end = pool.end.bind(pool) as (callback?: () => void) => Promise<void> | void;
    pool.end = ((callback?: () => void) => {
      advisor.stop();
      return end(callback);
    }) as typeof pool.end;
  }
  return pool;
}

/**
 * Unqualified table names must resolve in the namespace, as in the migrations (sql/00001_initial.sql).
 * The `options` parameter is one setting for the server: an operator's own (`?options=-c statement_timeout=…`)
 * is kept, after our timeouts, so that the operator's win, and before search_path, so that ours wins.
 */
function withSessionSettings(theirs: string | undefined, settings: string[], namespace: string): string {
  return [...settings, theirs, `-c search_path=${namespace}`].filter(Boolean).join(' ');
}

/**
 * Runs `fn` in a transaction: the caller's, when `q` is the client of one (tx hands out clients only
 * inside BEGIN … COMMIT), else a new one of its own on the pool.
 */
export function inTransaction<T>(q: Queryable, fn: (client: pg.PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  return 'release' in q ? fn(q) : tx(q, fn, signal);
}

/** What runs once the transaction open on a client commits: dropped, never run, when it rolls back. */
const commitHooks = new WeakMap<pg.PoolClient, Array<() => void>>();

/**
 * Runs `effect` once what `q` wrote is committed: at once on the pool or on a client outside tx(), after
 * COMMIT inside one, and never if that transaction rolls back. For effects outside the database that must
 * not tell of writes that did not happen, such as an audit entry's log line when sendingTx starts over.
 */
export function afterCommit(q: Queryable, effect: () => void): void {
  const hooks = commitHooks.get(q as pg.PoolClient);
  if (hooks) hooks.push(effect);
  else effect();
}

/**
 * Runs `fn` inside BEGIN … COMMIT on one pooled client; any throw rolls back and is rethrown. This is the
 * only place that writes BEGIN/COMMIT/ROLLBACK (docs/architecture.md#transactions-begin-and-end-in-one-place). `fn` must use the client it is given.
 * A connection lost meanwhile surfaces as the failing statement's error (src/db/faults.ts); the client's
 * 'error' event is taken care of by the pool (src/db/checkout.ts). When `signal` aborts first (the
 * request's deadline), the connection is closed at once: the server rolls the transaction back, nothing
 * `fn` still does on the client can commit, and tx rejects with the reason.
 */
export async function tx<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  const client = await pool.connect();
  let released = false;
  let committing = false;
  const release = (err?: Error) => {
    if (!released) {
      released = true;
      client.release(err);
    }
  };
  // Once COMMIT is on the wire the outcome is the server's; closing then would only hide it.
  const abandon = () => {
    if (!committing) release(new Error('transaction abandoned: the request was cancelled'));
  };
  signal?.addEventListener('abort', abandon, { once: true });
  try {
    if (signal?.aborted) abandon();
    await client.query('BEGIN');
    const hooks: Array<() => void> = [];
    commitHooks.set(client, hooks);
    const result = await (signal ? untilAborted(fn(client), signal) : fn(client));
    committing = true;
    await client.query('COMMIT');
    commitHooks.delete(client);
    for (const effect of hooks) effect();
    return result;
  } catch (err) {
    if (!released) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        // The connection itself failed: do not hand it back to the pool.
        release(rollbackErr as Error);
      }
    }
    throw signal?.aborted && !committing ? signal.reason : err;
  } finally {
    commitHooks.delete(client);
    signal?.removeEventListener('abort', abandon);
    release();
  }
}

/** `work`, or the signal's reason as soon as it aborts (work's own outcome is then ignored). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined); // its failure after an abort is expected: the connection is gone
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
