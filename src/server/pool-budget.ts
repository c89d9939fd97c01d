// How many HTTP threads run and how many database connections each may open. DB_MAX_POOL_SIZE is a
// ceiling for the whole process (the migrations and the embedded server's setup run before any thread,
// outside it): each thread needs at least one connection, so a ceiling below AUTH_HTTP_WORKERS runs
// fewer threads instead of opening more connections than allowed.
import type { Logger } from 'pino';
import type { Config } from './config/types.js';

/** pg's pool needs a bound; DB_MAX_POOL_SIZE=0 ("unlimited") gives each thread this many. */
export const DEFAULT_CONNECTIONS_PER_THREAD = 10;

export interface PoolBudget {
  threads: number;
  /** connections of thread i's pool; the sum never exceeds a non-zero DB_MAX_POOL_SIZE */
  connections: number[];
  /** idle connections thread i's pool keeps; the sum never exceeds DB_MAX_IDLE_POOL_SIZE; null: no cap */
  idle: number[] | null;
}

export function poolBudget(httpWorkers: number, maxPoolSize: number, maxIdlePoolSize = 0): PoolBudget {
  const threads = maxPoolSize <= 0 ? httpWorkers : Math.min(httpWorkers, maxPoolSize);
  const connections =
    maxPoolSize <= 0 ? Array.from({ length: threads }, () => DEFAULT_CONNECTIONS_PER_THREAD) : shares(maxPoolSize, threads);
  const idle = maxIdlePoolSize > 0 ? shares(maxIdlePoolSize, threads).map((n, i) => Math.min(n, connections[i])) : null;
  return { threads, connections, idle };
}

/** `total` shared out over `threads`: the remainder one each to the first threads, so the whole of it is usable. */
function shares(total: number, threads: number): number[] {
  const share = Math.floor(total / threads);
  return Array.from({ length: threads }, (_, i) => share + (i < total % threads ? 1 : 0));
}

/**
 * The process's connection ceiling: DB_MAX_POOL_SIZE, or with DB_CONN_PERCENTAGE that share of the server's
 * max_connections (at least one), which then takes its place, as in the original (docs/settings.md#database).
 */
export function processPoolSize(db: Config['db'], serverMaxConnections: number, log: Logger): number {
  if (db.connPercentage === 0) return db.maxPoolSize;
  if (!(serverMaxConnections > 0)) throw new Error('DB_CONN_PERCENTAGE: the database reported a maximum of 0 connections');
  const maxPoolSize = Math.max(1, Math.floor((db.connPercentage / 100) * serverMaxConnections));
  log.info(
    { connPercentage: db.connPercentage, serverMaxConnections, maxPoolSize },
    `DB_CONN_PERCENTAGE: ${maxPoolSize} connections in all, ${db.connPercentage}% of the server's max_connections`,
  );
  return maxPoolSize;
}
