// One value read through each driver the service connects with, configured from a DATABASE_URL as the
// service configures it: the pools (node-postgres, src/db/pool.ts) and the migrations (postgres.js,
// src/db/migrate.ts). For tests of how a URL is read: which server, which TLS.
import postgres from 'postgres';
import { postgresJsConnection } from '../../dist/db/database-url.js';
import { createPool } from '../../dist/db/pool.js';

/** The first column of the first row of `sql` (no parameters), on a connection of the service's pool for `url`. */
export async function throughPool<T>(url: string, sql: string): Promise<T> {
  const pool = createPool({ url, max: 1, namespace: 'public', acquireTimeoutMs: 10_000 });
  // A server going away once the pool has ended is no concern of the test's.
  pool.on('error', () => {});
  try {
    const { rows } = await pool.query<Record<string, T>>(sql);
    return Object.values(rows[0])[0];
  } finally {
    await pool.end();
  }
}

/** The same through postgres.js with the settings the migrations use. */
export async function throughMigrations<T>(url: string, sql: string): Promise<T> {
  const { params, ...target } = postgresJsConnection(url);
  const client = postgres({ ...target, max: 1, connect_timeout: 10, onnotice: () => {}, connection: params });
  try {
    const rows = await client.unsafe<Record<string, T>[]>(sql);
    return Object.values(rows[0])[0];
  } finally {
    await client.end();
  }
}
