// The runtime connection pool (node-postgres) and the one place where transactions begin and end.
// Table modules in src/db/ take a Queryable as their first argument, so the same finder runs on the pool
// or inside a transaction. Timestamps: pg's default parsing (timestamptz → Date) is kept. int8 columns
// (refresh_tokens.id, count(*)) come back as strings, pg's default, since they may exceed 2^53.
import pg from 'pg';
import { assertNamespace } from './namespace.js';

export type Queryable = pg.Pool | pg.PoolClient;

export interface PoolOptions {
  url: string;
  /** connections in this pool (each HTTP thread has its own pool); a positive integer */
  max: number;
  /** the schema holding the tables: becomes the connections' search_path */
  namespace: string;
  applicationName?: string;
  /** an idle connection failed (server restart, network); pg already dropped it from the pool */
  onIdleError?: (err: Error) => void;
}

export function createPool(options: PoolOptions): pg.Pool {
  assertNamespace(options.namespace);
  if (!Number.isInteger(options.max) || options.max < 1) {
    throw new TypeError(`pool size must be a positive integer, got ${options.max}`);
  }
  const pool = new pg.Pool({
    ...withSearchPath(options.url, options.namespace),
    max: options.max,
    application_name: options.applicationName ?? 'portcullis',
  });
  // Without a listener, an idle client's error would be thrown as an uncaught exception and kill the
  // thread; the pool has already discarded that client, so reporting it is all that is left to do.
  pool.on('error', (err) => options.onIdleError?.(err));
  return pool;
}

/**
 * Unqualified table names must resolve in the namespace, as in the migrations (sql/00001_initial.sql).
 * pg lets a connection string's `options` parameter replace the `options` setting outright, so an
 * operator's own `?options=-c statement_timeout=…` is moved out of the URL and kept, with search_path
 * last so that it wins.
 */
function withSearchPath(url: string, namespace: string): { connectionString: string; options: string } {
  const ours = `-c search_path=${namespace}`;
  if (!/[?&]options=/.test(url)) return { connectionString: url, options: ours };
  const parsed = new URL(url);
  const theirs = parsed.searchParams.get('options') ?? '';
  parsed.searchParams.delete('options');
  return { connectionString: parsed.toString(), options: `${theirs} ${ours}`.trim() };
}

/**
 * Runs `fn` inside BEGIN … COMMIT on one pooled client; any throw rolls back and is rethrown. This is the
 * only place that writes BEGIN/COMMIT/ROLLBACK (STYLE.md rule 10). `fn` must use the client it is given.
 * When `signal` aborts first (the request's deadline), the connection is closed at once: the server rolls
 * the transaction back, nothing `fn` still does on the client can commit, and tx rejects with the reason.
 */
export async function tx<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  const client = await pool.connect();
  let released = false;
  let committing = false;
  const release = (err?: Error) => { if (!released) { released = true; client.release(err); } };
  // Once COMMIT is on the wire the outcome is the server's; closing then would only hide it.
  const abandon = () => { if (!committing) release(new Error('transaction abandoned: the request was cancelled')); };
  signal?.addEventListener('abort', abandon, { once: true });
  try {
    if (signal?.aborted) abandon();
    await client.query('BEGIN');
    const result = await (signal ? untilAborted(fn(client), signal) : fn(client));
    committing = true;
    await client.query('COMMIT');
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
