// The schema version: the number of the highest migration in sql/ (what this build knows), and of the
// highest one applied in a database's namespace (postgres-shift's `migrations` table, src/db/migrate.ts).
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { assertNamespace } from './namespace.js';
import { pgConnection } from './database-url.js';

const SQL_DIR = fileURLToPath(new URL('../../sql', import.meta.url));

/** The highest migration this build ships: its number and file name. */
export function knownSchemaVersion(): { version: number; file: string } {
  const files = readdirSync(SQL_DIR)
    .filter((f) => /^\d{5}_.+\.sql$/.test(f))
    .sort();
  const file = files[files.length - 1] ?? '';
  return { version: file ? Number(file.slice(0, 5)) : 0, file };
}

/** The highest migration applied in `namespace`; 0 when none is. Fails within `timeoutMs` when unreachable. */
export async function appliedSchemaVersion(url: string, namespace: string, timeoutMs = 3000): Promise<number> {
  assertNamespace(namespace);
  const { config, Client } = pgConnection(url);
  const client = new Client({ ...config, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  await client.connect();
  try {
    const { rows: found } = await client.query<{ table: string | null }>(`select to_regclass($1)::text as table`, [
      `"${namespace}".migrations`,
    ]);
    if (!found[0]?.table) return 0;
    const { rows } = await client.query<{ version: number | null }>(`select max(migration_id) as version from "${namespace}".migrations`);
    return Number(rows[0]?.version ?? 0);
  } finally {
    await client.end();
  }
}
