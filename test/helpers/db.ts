// A fresh, uniquely named database per test file, on the server named by TEST_DATABASE_URL (a superuser
// URL; the test runner sets it). Tests never share tables, so they can run in parallel.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../dist/db/migrate.js';
import { createPool } from '../../dist/db/pool.js';

/** The part of a tap test this helper uses. */
interface Hooks {
  before(fn: () => Promise<void>): void;
  teardown(fn: () => Promise<void>): void;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * `migrated`: the database already holds the schema in the `auth` namespace. It is then a copy of the
 * run's template (TEST_TEMPLATE_DATABASE, which test/run.mjs migrates once), far cheaper than running
 * every migration again for each of the suite's few hundred services; without a template it is migrated here.
 */
export async function createTestDatabase({ migrated = false } = {}): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    throw new Error('TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/postgres)');
  }
  const name = `portcullis_test_${randomBytes(6).toString('hex')}`;
  const template = migrated ? process.env.TEST_TEMPLATE_DATABASE : undefined;
  await withAdmin(adminUrl, (client) => client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  if (migrated && !template) await migrate(url.toString(), 'auth');
  return {
    url: url.toString(),
    // FORCE ends connections a failed test left open, so drop() never hangs on them.
    drop: () => withAdmin(adminUrl, (client) => client.query(`drop database if exists "${name}" with (force)`)),
  };
}

/**
 * For tests of the statements themselves: a fresh database migrated into the `auth` namespace and a pool
 * on it, made before the file's tests run and dropped after them. The returned object's fields are set
 * once `t.before` has run.
 */
export function useMigratedDatabase(t: Hooks, poolSize = 2): { db: TestDatabase; pool: pg.Pool } {
  const handle = {} as { db: TestDatabase; pool: pg.Pool };
  t.before(async () => {
    handle.db = await createTestDatabase({ migrated: true });
    handle.pool = createPool({ url: handle.db.url, max: poolSize, namespace: 'auth' });
  });
  t.teardown(async () => {
    await handle.pool?.end();
    await handle.db?.drop();
  });
  return handle;
}

/**
 * Fixture rows for tests of the statements: a session (with AMR claims, and a first refresh token when
 * `tokenHash` is given), written with plain inserts. The service itself creates them in one statement
 * (src/db/sign-in.ts), which also writes last_sign_in_at and an audit entry these tests do not want.
 */
export async function insertSessionRows(
  q: pg.Pool | pg.PoolClient,
  s: { userId: string; userAgent: string; ip: string; amr?: string[]; tokenHash?: string },
): Promise<{ session: { id: string } & Record<string, unknown>; token: ({ id: string } & Record<string, unknown>) | null }> {
  const session = (
    await q.query('insert into sessions (user_id, aal, user_agent, ip) values ($1, $2, $3, $4) returning *', [
      s.userId,
      'aal1',
      s.userAgent,
      s.ip,
    ])
  ).rows[0];
  for (const method of s.amr ?? []) {
    await q.query('insert into mfa_amr_claims (session_id, authentication_method) values ($1, $2)', [session.id, method]);
  }
  const token =
    s.tokenHash === undefined
      ? null
      : (
          await q.query('insert into refresh_tokens (token_hash, user_id, session_id) values ($1, $2, $3) returning *', [
            s.tokenHash,
            s.userId,
            session.id,
          ])
        ).rows[0];
  return { session, token };
}

async function withAdmin(url: string, fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
