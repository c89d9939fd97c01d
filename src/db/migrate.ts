// Applies sql/NNNNN_*.sql with postgres-shift, wrapped so that it is safe to run from several instances at
// once and confined to one namespace (schema). postgres-shift itself takes no lock and keeps its
// bookkeeping in an unqualified `migrations` table; both are fixed here:
//   * one connection (max 1, never recycled) holds a session advisory lock for the whole run, so a second
//     caller waits, then finds nothing pending and applies 0 (test/migrate.test.ts "concurrent");
//   * that connection's search_path is the namespace, so `migrations`, shift's `'migrations'::regclass`
//     probe and every unqualified table in sql/ resolve inside it (test "two namespaces");
//   * a namespace the original service migrated is adopted first (adopt.ts, docs/adopting-gotrue.md), in one
//     transaction with the pending files and the move of its MFA rows (adopt-mfa.ts) and custom OAuth
//     providers (adopt-custom-providers.ts), which need `sealSecret` to seal secrets the original kept in clear;
//   * a dry run reports what adoption and the pending files would do, and changes nothing.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import { assertNamespace } from './namespace.js';
import { postgresJsConnection } from './database-url.js';
import { adoptOriginalSchema, inspectNamespace } from './adopt.js';
import { hasOriginalMfa, takeOverOriginalMfa, type SecretSealer } from './adopt-mfa.js';
import { hasOriginalCustomProviders, takeOverOriginalCustomProviders } from './adopt-custom-providers.js';
import { hasOriginalOAuthServer, takeOverOriginalOAuthServer } from './adopt-oauth-server.js';
import { finishFlowStateAdoption } from './adopt-flow-state.js';

// dist/db/migrate.js (and src/db/migrate.ts) → <repo>/sql
const SQL_DIR = fileURLToPath(new URL('../../sql', import.meta.url));

export interface MigrateResult {
  applied: number;
  /** true when the original's schema was adopted (or, in a dry run, would be) */
  adopted: boolean;
  /** the files still to apply; in a real run, empty afterwards */
  pending: string[];
}

/** Thrown inside the rehearsal transaction of a dry run so that it rolls back. */
class Rehearsal extends Error {}

export async function migrate(
  databaseUrl: string,
  namespace: string,
  log?: (msg: string) => void,
  options: { dryRun?: boolean; sealSecret?: SecretSealer } = {},
): Promise<MigrateResult> {
  assertNamespace(namespace);
  const { params, ...target } = postgresJsConnection(databaseUrl);
  const sql = postgres({
    ...target,
    max: 1,
    // The advisory lock belongs to the session: the connection must not be closed or replaced mid-run.
    idle_timeout: 0,
    max_lifetime: null,
    onnotice: () => {},
    connection: { search_path: namespace, application_name: 'portcullis_migrations', ...params },
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
      const files = migrationFiles();
      const state = await inspectNamespace(sql, namespace);
      if (state.kind === 'unknown') {
        throw new Error(`"${namespace}" holds a users table that is neither ours nor the original's; choose another DB_NAMESPACE`);
      }
      const adopted = state.kind === 'original';
      const prefix = options.dryRun ? '[dry run] ' : '';
      const note = (line: string) => log?.(prefix + line);
      if (adopted) {
        // Adoption, every pending migration and the move of the original's MFA rows into the tables those
        // migrations create run in ONE transaction: a failure at any step leaves the original schema as it
        // was. A dry run rehearses exactly that and rolls back, so what it prints is what a start would do,
        // including a failure (a view that blocks a change, a duplicate email) before anything changes.
        let applied = 0;
        await sql
          .begin(async (tx) => {
            await adoptOriginalSchema(tx, namespace, files[0], note);
            applied = await applyPending(withinTransaction(tx), (m) =>
              note(options.dryRun ? `would apply migration ${path.basename(m.path)}` : `applying migration ${m.migration_id} ${m.name}`),
            );
            await finishFlowStateAdoption(tx, namespace, note);
            await takeOverOriginalMfa(tx, namespace, options.sealSecret, note);
            await takeOverOriginalCustomProviders(tx, namespace, options.sealSecret, note);
            await takeOverOriginalOAuthServer(tx, namespace, note);
            if (options.dryRun) throw new Rehearsal();
          })
          .catch((err) => {
            if (!(err instanceof Rehearsal)) throw err;
          });
        if (options.dryRun) return { applied: 0, adopted, pending: files.filter((f) => f.id > files[0].id).map((f) => f.file) };
        return { applied, adopted, pending: [] };
      }
      if (options.dryRun) {
        const done = state.kind === 'ours' ? await lastApplied(sql) : 0;
        const pending = files.filter((f) => f.id > done).map((f) => f.file);
        for (const file of pending) note(`would apply migration ${file}`);
        if (pending.length === 0) note('no migration pending');
        if (await hasOriginalMfa(sql, namespace))
          note("would move the original's MFA factors and passkeys (gotrue_mfa_*, gotrue_webauthn_*) into ours");
        if (await hasOriginalCustomProviders(sql, namespace))
          note("would move the original's custom OAuth providers (gotrue_custom_oauth_providers) into ours");
        return { applied: 0, adopted, pending };
      }
      // Look first: CREATE SCHEMA checks the database-level CREATE privilege even when the schema exists,
      // and a least-privilege role may be given a schema it could not create.
      const [found] = await sql`select 1 as found from pg_namespace where nspname = ${namespace}`;
      if (!found) await sql.unsafe(`create schema "${namespace}"`);
      const applied = await applyPending(sql, (m) => log?.(`applying migration ${m.migration_id} ${m.name}`));
      // A database adopted by a version that kept the original's MFA tables aside: they move now.
      if (await hasOriginalMfa(sql, namespace)) {
        await sql.begin((tx) => takeOverOriginalMfa(tx, namespace, options.sealSecret, note));
      }
      // Likewise the original's custom OAuth providers, kept aside until 00011 made their table.
      if (await hasOriginalCustomProviders(sql, namespace)) {
        await sql.begin((tx) => takeOverOriginalCustomProviders(tx, namespace, options.sealSecret, note));
      }
      // Likewise the original's OAuth server clients and consents, once migration 00012 made our tables.
      if (await hasOriginalOAuthServer(sql, namespace)) {
        await sql.begin((tx) => takeOverOriginalOAuthServer(tx, namespace, note));
      }
      return { applied, adopted, pending: [] };
    } finally {
      // If the connection broke, the server already dropped the lock; keep the original error.
      await sql`select pg_advisory_unlock(${lockKey}::bigint)`.catch(() => undefined);
    }
  } finally {
    await sql.end();
  }
}

/** Runs postgres-shift on `sql`; `announce` hears of each file before it is applied. Returns how many were. */
async function applyPending(
  sql: postgres.Sql,
  announce: (m: { path: string; migration_id: number; name: string }) => void,
): Promise<number> {
  let applied = 0;
  await shift({
    sql,
    path: SQL_DIR,
    before: announce,
    after: () => {
      applied += 1;
    },
  });
  return applied;
}

/**
 * postgres-shift on an open transaction: it runs its files inside `sql.begin`, which here becomes a plain
 * call on the transaction, so the files commit (or roll back) with whatever else the transaction holds.
 * Shift uses nothing but tagged queries and `begin` on what it is given (node_modules/postgres-shift).
 */
function withinTransaction(tx: postgres.TransactionSql): postgres.Sql {
  const run = (strings: TemplateStringsArray, ...values: never[]) => tx(strings, ...values);
  return Object.assign(run, { begin: (fn: (t: postgres.TransactionSql) => unknown) => fn(tx) }) as unknown as postgres.Sql;
}

interface MigrationFile {
  file: string;
  path: string;
  id: number;
  /** as postgres-shift records it in migrations.name */
  name: string;
}

/** The files postgres-shift would apply, in order, described the way it describes them. */
function migrationFiles(): MigrationFile[] {
  return readdirSync(SQL_DIR)
    .filter((f) => /^[0-9]{5}_/.test(f))
    .sort()
    .map((file) => ({
      file,
      path: path.join(SQL_DIR, file),
      id: Number.parseInt(file.slice(0, 5), 10),
      name: file.slice(6).replace(/-/g, ' '),
    }));
}

async function lastApplied(sql: postgres.Sql): Promise<number> {
  const [row] = await sql`select max(migration_id) as id from migrations`;
  return Number(row?.id ?? 0);
}

/** A 64-bit lock id per namespace, so migrations of different namespaces never wait on each other. */
function advisoryLockKey(namespace: string): string {
  const digest = createHash('sha256').update(`portcullis:migrate:${namespace}`).digest();
  return digest.readBigInt64BE(0).toString();
}
