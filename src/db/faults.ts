// Which database failures are the database's rather than the request's: the server is unreachable,
// restarting or gone (unavailable), or every connection is taken (busy). Both are answered 503 with
// Retry-After by src/server/errors.ts; anything else stays an unexpected failure. pg reports lost
// connections as plain Errors without a code, so their messages are matched here, in one place.

export type DatabaseFault = 'unavailable' | 'busy';

/** The pool's wait queue is full: refused before waiting (src/db/pool.ts). */
export class PoolQueueFullError extends Error {
  constructor(waiting: number) {
    super(`${waiting} requests already wait for a database connection`);
    this.name = 'PoolQueueFullError';
  }
}

// Socket errors of a connection attempt or of a live connection.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
// SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now (starting or stopping),
// idle_in_transaction_session_timeout and idle_session_timeout (the server closed the session; the next
// connection serves); class 08 is connection_exception.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '25P03', '57P05']);
// too_many_connections: the server's own ceiling, shared with other clients; lock_not_available: a lock
// waited on past a lock_timeout the operator set on the role or database (contention, as a statement timeout).
const BUSY_STATES = new Set(['53300', '55P03']);
// pg's messages for a connection that ended ("Connection terminated unexpectedly", "... due to connection
// timeout"), for a query on a client whose connection already failed, and for a server that answered the
// request for TLS with its error (sslmode require and up; it ended the session, e.g. its postmaster died).
const UNAVAILABLE_MESSAGE = /^Connection terminated|is not queryable$|^There was an error establishing an SSL connection$/;
// pg-pool's acquisition timeout.
const ACQUIRE_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

export function databaseFault(err: unknown): DatabaseFault | null {
  if (!(err instanceof Error)) return null;
  if (err instanceof PoolQueueFullError || err.message === ACQUIRE_TIMEOUT_MESSAGE) return 'busy';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08')) return 'unavailable';
    if (BUSY_STATES.has(code)) return 'busy';
    // query_canceled by DB_STATEMENT_TIMEOUT (other cancellations are the caller's own business)
    if (code === '57014' && /statement timeout/.test(err.message)) return 'busy';
  }
  if (UNAVAILABLE_MESSAGE.test(err.message)) return 'unavailable';
  // Node's connect to a name with several addresses fails with an AggregateError of socket errors.
  if (err instanceof AggregateError) return err.errors.map(databaseFault).find((f) => f !== null) ?? null;
  return null;
}
