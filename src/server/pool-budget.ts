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
}

export function poolBudget(httpWorkers: number, maxPoolSize: number): PoolBudget {
  if (maxPoolSize <= 0)
    return { threads: httpWorkers, connections: Array.from({ length: httpWorkers }, () => DEFAULT_CONNECTIONS_PER_THREAD) };
  const threads = Math.min(httpWorkers, maxPoolSize);
  const share = Math.floor(maxPoolSize / threads);
  // The remainder goes one each to the first threads, so the whole ceiling is usable.
  const connections = Array.from({ length: threads }, (_, i) => share + (i < maxPoolSize % threads ? 1 : 0));
  return { threads, connections };
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
