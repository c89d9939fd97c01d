// What the schema guarantees to the table modules, through the runtime pool (search_path = namespace).
import t from 'tap';
import { createPool, tx } from '../dist/db/pool.js';
import { useMigratedDatabase } from './helpers/db.js';

// The limiter statements the report recommends: a row back = allowed, no row = denied.
const FIXED_WINDOW = `
  insert into rate_limits as r (key, window_start, count, updated_at)
  select $1, now(), 1, now() where $2::int >= 1
  on conflict (key) do update set
    window_start = case when r.window_start + make_interval(secs => $3) <= now() then now() else r.window_start end,
    count = case when r.window_start + make_interval(secs => $3) <= now() then 1 else r.count + 1 end,
    updated_at = now()
  where r.window_start + make_interval(secs => $3) <= now() or r.count < $2::int
  returning count`;
const TOKEN_BUCKET = `
  insert into rate_limits as r (key, tokens, updated_at)
  select $1, $2::float8 - 1, now() where $2::float8 >= 1
  on conflict (key) do update set
    tokens = least($2::float8, r.tokens + extract(epoch from now() - r.updated_at) * $3::float8) - 1,
    updated_at = now()
  where least($2::float8, r.tokens + extract(epoch from now() - r.updated_at) * $3::float8) >= 1
  returning tokens`;

const database = useMigratedDatabase(t, 4);

async function newUser(email: string | null = null, phone: string | null = null): Promise<string> {
  const { rows } = await database.pool.query(`insert into users (email, phone) values ($1, $2) returning id`, [email, phone]);
  return rows[0].id;
}
const allowed = async (sql: string, ...values: unknown[]) => (await database.pool.query(sql, values)).rowCount === 1;

t.test('database.pool connections resolve unqualified names in the namespace', async (t) => {
  t.same((await database.pool.query(`select current_schema() as s`)).rows, [{ s: 'auth' }]);
});

t.test("an operator's own connection options in the URL are kept, and search_path still wins", async (t) => {
  const url = new URL(database.db.url);
  url.searchParams.set('options', '-c statement_timeout=4321 -c search_path=public');
  const custom = createPool({ url: url.toString(), max: 1, namespace: 'auth' });
  t.teardown(() => custom.end());
  const { rows } = await custom.query(`select current_setting('statement_timeout') as st, current_schema() as s`);
  t.same(rows, [{ st: '4321ms', s: 'auth' }]);
});

t.test('tx commits on success, rolls back on a throw, and returns its client either way', async (t) => {
  const id = await tx(database.pool, async (c) => (await c.query(`insert into users (email) values ('tx@x.io') returning id`)).rows[0].id);
  t.equal((await database.pool.query(`select 1 from users where id = $1`, [id])).rowCount, 1);
  await t.rejects(
    tx(database.pool, async (c) => {
      await c.query(`insert into users (email) values ('rolled-back@x.io')`);
      throw new Error('abort');
    }),
    /abort/,
  );
  t.equal((await database.pool.query(`select 1 from users where email = 'rolled-back@x.io'`)).rowCount, 0);
  t.equal(database.pool.totalCount, database.pool.idleCount, 'no client left checked out');
});

t.test('emails are unique case-insensitively among live users only; phones among live users', async (t) => {
  const first = await newUser('Casey@Example.com', '15550001');
  await t.rejects(newUser('casey@example.com'), { code: '23505' });
  await t.rejects(newUser(null, '15550001'), { code: '23505' });
  await database.pool.query(`update users set deleted_at = now() where id = $1`, [first]);
  t.ok(await newUser('casey@example.com', '15550001'), 'a soft-deleted user frees both');
});

t.test('confirmed_at is the earlier confirmation; identities.email is the lower-cased data email', async (t) => {
  const id = await newUser('gen@x.io');
  const { rows } = await database.pool.query(
    `update users set phone_confirmed_at = '2024-01-02Z', email_confirmed_at = '2024-01-03Z'
    where id = $1 returning confirmed_at`,
    [id],
  );
  t.same(rows, [{ confirmed_at: new Date('2024-01-02Z') }]);
  const identity = await database.pool.query(
    `insert into identities (provider_id, user_id, provider, identity_data)
    values ($1::text, $1::uuid, 'email', '{"email":"Gen@X.io"}') returning email`,
    [id],
  );
  t.same(identity.rows, [{ email: 'gen@x.io' }]);
});

t.test('deleting a user removes everything that hangs off it', async (t) => {
  const id = await newUser('gone@x.io');
  await database.pool.query(`insert into identities (provider_id, user_id, provider) values ($1::text, $1::uuid, 'email')`, [id]);
  const session = (await database.pool.query(`insert into sessions (user_id) values ($1) returning id`, [id])).rows[0].id;
  await database.pool.query(`insert into mfa_amr_claims (session_id, authentication_method) values ($1, 'password')`, [session]);
  await database.pool.query(`insert into refresh_tokens (token_hash, user_id, session_id) values ('h1', $1, $2)`, [id, session]);
  await database.pool.query(
    `insert into one_time_tokens (user_id, token_type, token_hash, relates_to)
    values ($1, 'recovery_token', 'abc', 'gone@x.io')`,
    [id],
  );
  await database.pool.query(`delete from users where id = $1`, [id]);
  for (const table of ['identities', 'sessions', 'refresh_tokens', 'one_time_tokens']) {
    t.equal((await database.pool.query(`select 1 from ${table} where user_id = $1`, [id])).rowCount, 0, table);
  }
  t.equal((await database.pool.query(`select 1 from mfa_amr_claims where session_id = $1`, [session])).rowCount, 0, 'mfa_amr_claims');
});

t.test('one live one-time token per user and type; unknown types are refused', async (t) => {
  const id = await newUser('otp@x.io');
  const upsert = `insert into one_time_tokens (user_id, token_type, token_hash, relates_to) values ($1, $2, $3, 'otp@x.io')
    on conflict (user_id, token_type) do update set token_hash = excluded.token_hash, attempts = 0, updated_at = now()`;
  await database.pool.query(upsert, [id, 'confirmation_token', 'first']);
  await database.pool.query(upsert, [id, 'confirmation_token', 'pkce_second']);
  t.same((await database.pool.query(`select token_hash from one_time_tokens where user_id = $1`, [id])).rows, [
    { token_hash: 'pkce_second' },
  ]);
  await t.rejects(database.pool.query(upsert, [id, 'magic_token', 'x']), { code: '23514' });
});

t.test('fixed window: N per window, no row back once spent, a new window starts afresh', async (t) => {
  const hits = [];
  for (let i = 0; i < 3; i += 1) hits.push(await allowed(FIXED_WINDOW, 'email_sent', 2, 3600));
  t.same(hits, [true, true, false]);
  await database.pool.query(`update rate_limits set window_start = window_start - interval '2 hours' where key = 'email_sent'`);
  t.ok(await allowed(FIXED_WINDOW, 'email_sent', 2, 3600));
  t.notOk(await allowed(FIXED_WINDOW, 'sms_sent', 0, 3600), 'a limit of 0 blocks everything');
});

t.test('token bucket: burst, then refill by elapsed time', async (t) => {
  const hits = [];
  for (let i = 0; i < 3; i += 1) hits.push(await allowed(TOKEN_BUCKET, 'otp:10.0.0.1', 2, 1 / 60));
  t.same(hits, [true, true, false]);
  await database.pool.query(`update rate_limits set updated_at = updated_at - interval '61 seconds' where key = 'otp:10.0.0.1'`);
  t.same(
    [await allowed(TOKEN_BUCKET, 'otp:10.0.0.1', 2, 1 / 60), await allowed(TOKEN_BUCKET, 'otp:10.0.0.1', 2, 1 / 60)],
    [true, false],
    'one token back after one period',
  );
});

t.test('a limiter statement is atomic across concurrent connections', async (t) => {
  const results = await Promise.all(Array.from({ length: 20 }, () => allowed(FIXED_WINDOW, 'race', 7, 3600)));
  t.equal(results.filter(Boolean).length, 7);
});
