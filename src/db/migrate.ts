// Applies sql/NNNNN_*.sql with postgres-shift, wrapped so that it is safe to run from several instances at
// once and confined to one namespace (schema). postgres-shift itself takes no lock and keeps its
// bookkeeping in an unqualified `migrations` table; both are fixed here:
//   * one connection (max 1, never recycled) holds a session advisory lock for the whole run, so a second
//     caller waits, then finds nothing pending and applies 0 (test/migrate.test.ts "concurrent");
//   * that connection's search_path is the namespace, so `migrations`, shift's `'migrations'::regclass`
//     probe and every unqualified table in sql/ resolve inside it (test "two namespaces").
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import { assertNamespace } from './namespace.js';

// dist/db/migrate.js (and src/db/migrate.ts) → <repo>/sql
const SQL_DIR = fileURLToPath(new URL('../../sql', import.meta.url));

export async function migrate(databaseUrl: string, namespace: string, log?: (msg: string) => void): Promise<{ applied: number }> {
  assertNamespace(namespace);
  const sql = postgres(databaseUrl, {
    max: 1,
    // The advisory lock belongs to the session: the connection must not be closed or replaced mid-run.
    idle_timeout: 0,
    max_lifetime: null,
    onnotice: () => {},
    connection: { search_path: namespace, application_name: 'portcullis_migrations' },
  });
  const lockKey = advisoryLockKey(namespace);
  try {
    // Parameters in the URL's query string override the connection options; refuse rather than migrate
    // into whatever schema such a URL names.
    const [{ search_path: searchPath }] = await sql`show search_path`;
    if (searchPath !== namespace) {
      throw new TypeError(`the database URL sets search_path to ${searchPath}; remove it, DB_NAMESPACE decides`);
    }
    await sql`select pg_advisory_lock(${lockKey}::bigint)`;
    try {
      // Look first: CREATE SCHEMA checks the database-level CREATE privilege even when the schema exists,
      // and a least-privilege role may be given a schema it could not create.
      const [found] = await sql`select 1 as found from pg_namespace where nspname = ${namespace}`;
      if (!found) await sql.unsafe(`create schema "${namespace}"`);
      let applied = 0;
      await shift({
        sql,
        path: SQL_DIR,
        before: (m) => log?.(`applying migration ${m.migration_id} ${m.name}`),
        after: () => {
          applied += 1;
        },
      });
      return { applied };
    } finally {
      // If the connection broke, the server already dropped the lock; keep the original error.
      await sql`select pg_advisory_unlock(${lockKey}::bigint)`.catch(() => undefined);
    }
  } finally {
    await sql.end();
  }
}

/** A 64-bit lock id per namespace, so migrations of different namespaces never wait on each other. */
function advisoryLockKey(namespace: string): string {
  const digest = createHash('sha256').update(`portcullis:migrate:${namespace}`).digest();
  return digest.readBigInt64BE(0).toString();
}
