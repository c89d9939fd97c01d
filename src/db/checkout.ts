// What the pool does around each checkout, for pool.query and tx() alike (pg-pool's query() goes through
// connect() too): refuse at once when too many callers already queue, and listen for the client's
// 'error' while it is checked out. pg-pool removes its own listener on checkout, and pg emits 'error'
// when the connection drops (a server restart, an idle-in-transaction timeout): with no listener, that
// is an uncaught exception that takes the whole HTTP thread down. The statement in flight, or the next
// one, fails with the cause, so the request gets its 503 and the listener only reports.
// It also times each wait for a connection (the acquire-time histogram, and the pool advisor's waits of
// callers that had to queue), and, when statements are traced,
// hands the caller's async context on to the callback: pg-pool calls a queued caller back from whichever
// request released a connection, and the statement spans must land under the waiting request's span.
import { AsyncResource } from 'node:async_hooks';
import type pg from 'pg';
import { PoolQueueFullError } from './faults.js';

type Done = (release?: Error | boolean) => void;
type Callback = (err: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;

export interface CheckoutHooks {
  onError: (err: Error) => void;
  /** seconds a checkout waited for its connection (successful checkouts only) */
  onAcquired?: (seconds: number) => void;
  /**
   * a checkout queues (every connection is taken); the function it returns is called with the seconds it
   * waited, whether it got a connection or gave up
   */
  onQueued?: () => (seconds: number) => void;
  /** keep the caller's async context across the wait (statement tracing needs it; it costs a resource per checkout) */
  keepContext?: boolean;
  /** idle connections kept (DB_MAX_IDLE_POOL_SIZE's share); unset: no cap */
  maxIdle?: number;
}

export function guardCheckouts(pool: pg.Pool, maxWaiting: number, hooks: CheckoutHooks): void {
  const { onError, onAcquired, onQueued, keepContext, maxIdle } = hooks;
  // As Go's database/sql with SetMaxIdleConns: a connection released while enough others sit idle, and no
  // caller waits for one, is closed instead of kept (pg-pool closes a client released with `true`).
  const keep = maxIdle === undefined ? null : () => pool.waitingCount > 0 || pool.idleCount < maxIdle;
  const acquire = pool.connect.bind(pool) as unknown as (cb: Callback) => void;
  const max = pool.options.max ?? 10;
  const connect = (cb?: Callback): Promise<pg.PoolClient> | void => {
    if (!cb)
      return new Promise((resolve, reject) => {
        void connect((err, client) => (err ? reject(err) : resolve(client!)));
      });
    // pg-pool queues a caller only when every connection is taken and none is idle.
    const saturated = pool.totalCount >= max && pool.idleCount === 0;
    if (saturated && pool.waitingCount >= maxWaiting) {
      const refused = new PoolQueueFullError(pool.waitingCount);
      process.nextTick(() => cb(refused, undefined, () => {}));
      return;
    }
    const queued = saturated && onQueued ? onQueued() : null;
    const started = onAcquired || queued ? performance.now() : 0;
    const acquired: Callback = (err, client) => {
      queued?.((performance.now() - started) / 1000);
      if (err || !client) return cb(err, undefined, () => {});
      onAcquired?.((performance.now() - started) / 1000);
      cb(undefined, client, watch(client, onError, keep));
    };
    acquire(keepContext ? AsyncResource.bind(acquired) : acquired);
  };
  pool.connect = connect as typeof pool.connect;
}

/**
 * Listens for 'error' until the client is released; returns the release that stops listening, and that
 * closes the client instead of keeping it when `keep` says no.
 */
function watch(client: pg.PoolClient, onError: (err: Error) => void, keep: (() => boolean) | null): Done {
  const release = client.release.bind(client);
  client.on('error', onError);
  const releaseAndStop = (err?: Error | boolean) => {
    client.removeListener('error', onError);
    release(err || (keep && !keep() ? true : undefined));
  };
  client.release = releaseAndStop;
  return releaseAndStop;
}
