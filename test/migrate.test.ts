import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t from 'tap';
import { migrate } from '../dist/db/migrate.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';

const MIGRATION_FILES = readdirSync(fileURLToPath(new URL('../sql', import.meta.url))).filter((f) => /^[0-9]{5}_.*\.sql$/.test(f)).length;

const TABLES = [
  'audit_log_entries',
  'custom_oauth_providers',
  'flow_state',
  'identities',
  'mfa_amr_claims',
  'mfa_challenges',
  'mfa_factors',
  'migrations',
  'oauth_authorizations',
  'oauth_clients',
  'oauth_consents',
  'one_time_tokens',
  'rate_limits',
  'refresh_tokens',
  'saml_assertion_uses',
  'saml_providers',
  'saml_relay_states',
  'sessions',
  'sso_domains',
  'sso_providers',
  'users',
  'web3_message_uses',
  'webauthn_challenges',
  'webauthn_credentials',
];

let db: TestDatabase;
t.before(async () => {
  db = await createTestDatabase();
});
t.teardown(() => db.drop());

async function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function tablesIn(schema: string): Promise<string[]> {
  const rows = await query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = $1 order by 1`,
    [schema],
  );
  return rows.map((r) => r.name);
}

async function migrationsIn(schema: string): Promise<number[]> {
  const rows = await query<{ id: number }>(`select migration_id as id from "${schema}".migrations order by 1`);
  return rows.map((r) => r.id);
}

t.test('a fresh database gets every table inside the namespace and none in public', async (t) => {
  const logged: string[] = [];
  t.match(await migrate(db.url, 'auth', (m) => logged.push(m)), { applied: MIGRATION_FILES });
  t.same(await tablesIn('auth'), TABLES);
  t.same(await tablesIn('public'), []);
  t.equal(logged.length, MIGRATION_FILES);
});

t.test('every table has row-level security on: a role granted access by mistake sees no row, the owner every row', async (t) => {
  const withoutRls = await query<{ name: string }>(
    `select c.relname as name from pg_class c where c.relnamespace = 'auth'::regnamespace and c.relkind in ('r', 'p') and not c.relrowsecurity`,
  );
  t.same(withoutRls, [], 'as the original switches it on for its tables');
  const role = `granted_by_mistake_${process.pid}`;
  await query(`create role ${role} nologin`);
  t.teardown(() => query(`drop owned by ${role}`).then(() => query(`drop role ${role}`)));
  await query(`grant usage on schema auth to ${role}; grant select on auth.users to ${role}`);
  await query(`insert into auth.users (id) values (gen_random_uuid())`);
  t.equal((await query<{ n: number }>('select count(*)::int as n from auth.users'))[0].n, 1, 'the owner sees the row');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(`begin; set local role ${role}`);
    t.equal((await client.query('select count(*)::int as n from auth.users')).rows[0].n, 0, 'the granted role sees nothing');
    await client.query('rollback');
  } finally {
    await client.end();
  }
});

t.test('a second run applies nothing', async (t) => {
  t.match(await migrate(db.url, 'auth'), { applied: 0 });
  t.same(
    await migrationsIn('auth'),
    Array.from({ length: MIGRATION_FILES }, (_, i) => i + 1),
  );
});

t.test('two concurrent runs on one namespace serialise: all files applied exactly once', async (t) => {
  const results = await Promise.all([migrate(db.url, 'racing'), migrate(db.url, 'racing')]);
  t.equal(results[0].applied + results[1].applied, MIGRATION_FILES);
  t.same(
    await migrationsIn('racing'),
    Array.from({ length: MIGRATION_FILES }, (_, i) => i + 1),
  );
});

t.test('two namespaces in one database are independent, bookkeeping included', async (t) => {
  t.match(await migrate(db.url, 'tenant_a'), { applied: MIGRATION_FILES });
  t.match(await migrate(db.url, 'tenant_b'), { applied: MIGRATION_FILES });
  t.same(await tablesIn('tenant_a'), TABLES);
  t.same(await tablesIn('tenant_b'), TABLES);
  await query(`insert into tenant_a.users (id, email) values (gen_random_uuid(), 'a@example.com')`);
  t.same(await query(`select email from tenant_a.users`), [{ email: 'a@example.com' }]);
  t.same(await query(`select email from tenant_b.users`), []);
  await query(`delete from tenant_b.migrations`);
  t.same(
    await migrationsIn('tenant_a'),
    Array.from({ length: MIGRATION_FILES }, (_, i) => i + 1),
  );
});

t.test('an existing schema is used as it is', async (t) => {
  await query(`create schema premade`);
  t.match(await migrate(db.url, 'premade'), { applied: MIGRATION_FILES });
  t.same(await tablesIn('premade'), TABLES);
});

t.test('a namespace that is not a plain identifier is rejected before connecting', async (t) => {
  for (const ns of ['', 'Auth', 'auth; drop table users', 'a"b', 'auth,public', '1auth', 'x'.repeat(64)]) {
    await t.rejects(migrate(db.url, ns), TypeError, JSON.stringify(ns));
  }
});

t.test('a database URL that sets its own search_path is refused, not obeyed', async (t) => {
  const url = new URL(db.url);
  url.searchParams.set('search_path', 'public');
  await t.rejects(migrate(url.toString(), 'auth'), TypeError);
  t.same(await tablesIn('public'), []);
});
