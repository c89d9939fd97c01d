// Scale-out through a real PgBouncer (Debian's package; .ci/run installs it) in transaction mode: two
// Portcullis instances on one database, with statements unnamed (DB_PREPARED_STATEMENTS=false: PgBouncer
// 1.18 cannot keep named prepared statements across transactions) and migrations sent to PostgreSQL
// itself (DB_MIGRATIONS_DATABASE_URL). They serve sign-up, sign-in, refresh and GET /user concurrently,
// and 1,000 concurrent refreshes of one token spread over both still yield one child.
import t from 'tap';
import { createHash } from 'node:crypto';
import { createPool } from '../dist/db/pool.js';
import { startTestService, type TestService } from './helpers/server.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { PGBOUNCER, startPgBouncer, type PgBouncer } from './helpers/pgbouncer.js';
import { refresh, signIn, signUp, uniqueEmail } from './helpers/accounts.js';

if (!PGBOUNCER) t.plan(0, "pgbouncer is not installed (.ci/run installs Debian's pgbouncer package)");
else await throughPgBouncer();

async function throughPgBouncer(): Promise<void> {
  const bouncer: PgBouncer = await startPgBouncer();
  const database: TestDatabase = await createTestDatabase();
  const direct = createPool({ url: database.url, max: 2, namespace: 'auth' });
  const dbName = new URL(database.url).pathname.slice(1);
  // What an operator does once (README: PgBouncer): the connections' settings come from the server, since
  // PgBouncer drops the startup options that carry them on a direct connection.
  await direct.query(`alter database "${dbName}" set search_path = auth`);

  const instance = () =>
    startTestService({
      DATABASE_URL: bouncer.through(database.url),
      AUTH_DB_MIGRATIONS_DATABASE_URL: database.url,
      AUTH_DB_PREPARED_STATEMENTS: 'false',
      AUTH_MAILER_AUTOCONFIRM: 'true',
      AUTH_HTTP_WORKERS: '1',
      // As in test/refresh.test.ts: the 1,000-way test is about correctness, not this shared machine's speed.
      AUTH_API_MAX_REQUEST_DURATION: '120',
      AUTH_DB_POOL_WAITERS_PER_CONNECTION: '200',
      AUTH_DB_ACQUIRE_TIMEOUT: '120s',
      AUTH_RATE_LIMIT_TOKEN_REFRESH: '0',
    });
  const a: TestService = await instance();
  const b: TestService = await instance();
  t.teardown(async () => {
    await a.stop();
    await b.stop();
    await direct.end();
    await bouncer.close();
    await database.drop();
  });

  const hash = (token: string) => createHash('sha256').update(token).digest('hex');

  t.test('sign-up, sign-in, refresh and GET /user, concurrently across both instances', async (t) => {
    const flows = Array.from({ length: 12 }, async (_, i) => {
      const [first, second] = i % 2 ? [a, b] : [b, a];
      const email = uniqueEmail('bouncer');
      const created = await signUp(first, email);
      const session = await signIn(second, email);
      const rotated = await refresh(first, session.refresh_token);
      const user = await second.request('GET', '/user', { token: rotated.body.access_token });
      return { created, rotated, user, email };
    });
    for (const { created, rotated, user, email } of await Promise.all(flows)) {
      t.equal(rotated.status, 200, `${email}: refreshed`);
      t.equal(user.status, 200, `${email}: GET /user`);
      t.equal(user.body.id, created.user.id);
    }
    const { rows } = await direct.query(`select count(*)::int as n from users where email like 'bouncer-%'`);
    t.equal(rows[0].n, 12);
  });

  t.test('1,000 concurrent refreshes of one token over both instances: one child', async (t) => {
    const session = await signUp(a, uniqueEmail('bouncer-race'));
    const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => refresh(i % 2 ? a : b, session.refresh_token)));
    const statuses = new Map<number, number>();
    for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    t.strictSame([...statuses.keys()], [200], `statuses ${JSON.stringify([...statuses])}`);
    t.equal(new Set(replies.map((r) => r.body.refresh_token)).size, 1, 'every answer carries the same child');
    const { rows } = await direct.query(
      `select count(*)::int as n from refresh_tokens where session_id = (select session_id from refresh_tokens where token_hash = $1)`,
      [hash(session.refresh_token)],
    );
    t.equal(rows[0].n, 2, 'exactly one child in the database');
  });

  t.test('a pooler that leaves the connections outside the namespace stops the start with the fix', async (t) => {
    const other = await createTestDatabase();
    t.teardown(() => other.drop());
    await t.rejects(
      startTestService({
        DATABASE_URL: bouncer.through(other.url),
        AUTH_DB_MIGRATIONS_DATABASE_URL: other.url,
        AUTH_DB_PREPARED_STATEMENTS: 'false',
      }),
      /schema is .*not auth.*ALTER ROLE <role> SET search_path = auth/,
    );
  });
}
