// A start-up check of what the HTTP threads' connections will see. Directly on PostgreSQL the pool's
// startup options set search_path to the namespace; through PgBouncer (which must be told to ignore the
// `options` startup parameter) they do not, and the role's own settings must: without this check every
// request would fail with "relation does not exist" instead of the service refusing to start.
import { createPool } from './pool.js';

/** Checks the connections' schema, and answers the server's max_connections (DB_CONN_PERCENTAGE sizes pools by it). */
export async function checkConnectionSchema(
  url: string,
  namespace: string,
  preparedStatements: boolean,
): Promise<{ maxConnections: number }> {
  const pool = createPool({ url, max: 1, namespace, applicationName: 'portcullis_check', acquireTimeoutMs: 10_000, preparedStatements });
  try {
    const { rows } = await pool.query<{ schema: string | null }>('select current_schema() as schema');
    const schema = rows[0]?.schema;
    if (schema !== namespace)
      throw new Error(
        `the database connections' schema is ${schema ?? '(none)'}, not ${namespace}: behind a connection pooler that drops ` +
          `startup options, set it on the role: ALTER ROLE <role> SET search_path = ${namespace} (README.md, PgBouncer)`,
      );
    const shown = await pool.query<{ max_connections: string }>('show max_connections');
    return { maxConnections: Number(shown.rows[0]?.max_connections) };
  } finally {
    await pool.end();
  }
}
