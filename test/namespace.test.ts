// DB_NAMESPACE: two services on one database, each in its own schema, run side by side without seeing
// each other's users.
import t from 'tap';
import pg from 'pg';
import { startTestService } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';

t.test('two namespaces in one database are independent services', async (t) => {
  const database = await createTestDatabase();
  const a = await startTestService({ DATABASE_URL: database.url, DB_NAMESPACE: 'tenant_a', AUTH_MAILER_AUTOCONFIRM: 'true' });
  const b = await startTestService({ DATABASE_URL: database.url, DB_NAMESPACE: 'tenant_b', AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(async () => {
    await a.stop();
    await b.stop();
    await database.drop();
  });

  const inA = await a.request('POST', '/signup', { body: { email: 'same@example.com', password: 'secret99' } });
  const inB = await b.request('POST', '/signup', { body: { email: 'same@example.com', password: 'another99' } });
  t.equal(inA.status, 200);
  t.equal(inB.status, 200, 'the same address signs up in the other namespace');
  t.not(inA.body.user.id, inB.body.user.id);
  t.equal(
    (await a.request('POST', '/token?grant_type=password', { body: { email: 'same@example.com', password: 'another99' } })).status,
    400,
    "B's password means nothing in A",
  );
  t.equal(
    (await b.request('GET', '/user', { token: inA.body.access_token })).body.error_code,
    'user_not_found',
    "A's token finds no user in B",
  );

  const client = new pg.Client(database.url);
  await client.connect();
  const { rows } = await client.query(`select table_schema, count(*)::int as n from information_schema.tables
    where table_name in ('users', 'sessions', 'migrations') group by table_schema order by table_schema`);
  await client.end();
  t.same(
    rows,
    [
      { table_schema: 'tenant_a', n: 3 },
      { table_schema: 'tenant_b', n: 3 },
    ],
    'nothing in public',
  );
});
