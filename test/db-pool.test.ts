// The pool's bounds (README "Faults and readiness"): DB_MAX_POOL_SIZE as a ceiling for the whole process,
// the bounded wait queue, the acquisition and statement timeouts, and a checked-out client whose
// connection the server ends (idle in transaction) failing its transaction instead of the thread.
import t, { type Test } from 'tap';
import { startTestService, type Reply, type TestService } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { signUp } from './helpers/accounts.js';
import { createPool, tx } from '../dist/db/pool.js';
import { databaseFault, PoolQueueFullError } from '../dist/db/faults.js';
import { poolBudget } from '../dist/server/pool-budget.js';

const BUSY = { code: 503, error_code: 'database_busy', msg: 'The database is busy, please retry after a moment.' };

/** Polls `check` until it returns a value other than undefined (bounded: a failing test must not hang). */
async function until<T>(what: string, check: () => Promise<T | undefined>, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The service's own connections to its database, and how many of them wait on a lock. */
async function backends(api: TestService): Promise<{ total: number; blocked: number }> {
  const { rows } = await api.db.query(`select count(*)::int as total, count(*) filter (where wait_event_type = 'Lock')::int as blocked
    from pg_stat_activity where application_name = 'portcullis' and datname = current_database()`);
  return rows[0];
}

/** Holds an ACCESS EXCLUSIVE lock on users from a connection of the test's, so every statement reading users waits. */
async function lockUsers(t: Test, api: TestService): Promise<() => Promise<void>> {
  const client = await api.db.connect();
  await client.query('begin');
  await client.query('lock table users in access exclusive mode');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('commit');
    client.release();
  };
  t.teardown(release);
  return release;
}

/** Starts `count` GET /user requests at once; `answered` counts the ones back so far. */
function getUsers(api: TestService, token: string, count: number): { all: Promise<Reply[]>; answered: () => Reply[] } {
  const done: Reply[] = [];
  const all = Promise.all(
    Array.from({ length: count }, () =>
      api.request('GET', '/user', { token }).then((r) => {
        done.push(r);
        return r;
      }),
    ),
  );
  return { all, answered: () => done };
}

const withoutId = (body: Record<string, unknown>) => {
  const { error_id: _, ...rest } = body;
  return rest;
};

t.test('DB_MAX_POOL_SIZE is shared out without exceeding it, one connection per thread at least', async (t) => {
  t.strictSame(poolBudget(3, 2), { threads: 2, connections: [1, 1], idle: null });
  t.strictSame(poolBudget(2, 5), { threads: 2, connections: [3, 2], idle: null }, 'the remainder is used too');
  t.strictSame(poolBudget(4, 0), { threads: 4, connections: [10, 10, 10, 10], idle: null }, '0: ten per thread');
  t.strictSame(poolBudget(3, 0, 4).idle, [2, 1, 1], 'DB_MAX_IDLE_POOL_SIZE is shared out the same way');
  t.strictSame(poolBudget(2, 3, 8).idle, [2, 1], "never above the thread's own connections");
  t.strictSame(poolBudget(3, 0, 2).idle, [1, 1, 0], 'a thread may keep none');
});

t.test('DB_MAX_IDLE_POOL_SIZE: a connection released beyond the idle cap is closed, unless a caller waits for it', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const name = `idle_cap_${process.pid}`;
  const open = async () => {
    const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [
      name,
    ]);
    return rows[0].n;
  };
  const admin = createPool({ url: db.url, max: 1, namespace: 'public' });
  t.teardown(() => admin.end());

  const capped = createPool({ url: db.url, max: 3, maxIdle: 1, namespace: 'public', applicationName: name });
  t.teardown(() => capped.end());
  await Promise.all([1, 2, 3].map(() => capped.query('select pg_sleep(0.05)')));
  t.equal(capped.totalCount, 1, 'three connections were open at once; one is kept');
  t.equal(await open(), 1, 'and the server sees one');

  const none = createPool({ url: db.url, max: 1, maxIdle: 0, namespace: 'public', applicationName: `${name}_0` });
  t.teardown(() => none.end());
  const pid = 'select pg_backend_pid() as pid';
  const [first, second] = await Promise.all([none.query<{ pid: number }>(pid), none.query<{ pid: number }>(pid)]);
  t.equal(second.rows[0].pid, first.rows[0].pid, 'a waiting caller is handed the connection, not made to open another');
  t.equal(none.totalCount, 0, 'with no one waiting it is closed');

  const uncapped = createPool({ url: db.url, max: 3, namespace: 'public', applicationName: `${name}_all` });
  t.teardown(() => uncapped.end());
  await Promise.all([1, 2, 3].map(() => uncapped.query('select pg_sleep(0.05)')));
  t.equal(uncapped.totalCount, 3, 'without a cap every connection stays until its idle timeout');
});

t.test('DB_MAX_IDLE_POOL_SIZE reaches the service: after a burst, its pool keeps that many connections', async (t) => {
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_DB_MAX_IDLE_POOL_SIZE: '1',
    // Idle connections would otherwise stay a minute: whatever closes them here is the cap.
    AUTH_DB_CONN_MAX_IDLE_TIME: '60s',
  });
  t.teardown(() => api.stop());
  const { access_token: token } = await signUp(api);
  const release = await lockUsers(t, api);
  const burst = getUsers(api, token, 5);
  await until('five connections, each waiting on the lock', async () => ((await backends(api)).blocked === 5 ? true : undefined));
  await release();
  t.ok((await burst.all).every((r) => r.status === 200));
  t.strictSame(
    await until('the burst over', async () => ((await backends(api)).total === 1 ? await backends(api) : undefined)),
    { total: 1, blocked: 0 },
    'one connection kept, four closed',
  );
});

t.test('which errors are database faults', async (t) => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  const cases: Array<[Error, string | null]> = [
    [coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 'unavailable'],
    [coded('ECONNRESET'), 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 'unavailable'],
    [new Error('Connection terminated due to connection timeout'), 'unavailable'],
    [new Error('Client has encountered a connection error and is not queryable'), 'unavailable'],
    [coded('57P01', 'terminating connection due to administrator command'), 'unavailable'],
    [coded('57P03', 'the database system is starting up'), 'unavailable'],
    [coded('08006'), 'unavailable'],
    [coded('25P03', 'terminating connection due to idle-in-transaction timeout'), 'unavailable'],
    [new AggregateError([coded('ECONNREFUSED')], 'connect failed'), 'unavailable'],
    [new Error('timeout exceeded when trying to connect'), 'busy'],
    [new PoolQueueFullError(8), 'busy'],
    [coded('57014', 'canceling statement due to statement timeout'), 'busy'],
    [coded('53300', 'sorry, too many clients already'), 'busy'],
    [coded('57014', 'canceling statement due to user request'), null],
    [coded('23505', 'duplicate key value violates unique constraint'), null],
    [new TypeError('undefined is not a function'), null],
  ];
  for (const [err, fault] of cases) t.equal(databaseFault(err), fault, err.message);
  t.equal(databaseFault('a string'), null);
});

t.test('DB_MAX_POOL_SIZE below AUTH_HTTP_WORKERS runs fewer threads and never opens more connections', async (t) => {
  // No waiting at all: a request that finds its thread's connections taken is refused at once, so the
  // test knows when every request has either a connection or its answer.
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_HTTP_WORKERS: '3',
    AUTH_DB_MAX_POOL_SIZE: '2',
    AUTH_DB_POOL_WAITERS_PER_CONNECTION: '0',
  });
  t.teardown(() => api.stop());
  t.equal(api.service.threads, 2);
  const warning = api.logs().find((l) => l.level === 'warning' && /DB_MAX_POOL_SIZE is below AUTH_HTTP_WORKERS/.test(l.msg));
  t.match(warning, { httpWorkers: 3, maxPoolSize: 2, threads: 2 }, 'says why it runs fewer threads');

  const { access_token: token } = await signUp(api);
  const release = await lockUsers(t, api);
  const requests = 24;
  const burst = getUsers(api, token, requests);
  const settled = await until('every request holding a connection or answered', async () => {
    const now = await backends(api);
    return now.blocked + burst.answered().length === requests ? now : undefined;
  });
  t.strictSame(settled, { total: 2, blocked: 2 }, 'two connections in all, both in use');
  await release();
  const replies = await burst.all;
  t.equal(replies.filter((r) => r.status === 200).length, 2, 'the two requests holding a connection succeed');
  t.strictSame([...new Set(replies.filter((r) => r.status !== 200).map((r) => JSON.stringify(withoutId(r.body))))], [JSON.stringify(BUSY)]);
  t.ok((await backends(api)).total <= 2);
});

t.test('beyond DB_POOL_WAITERS_PER_CONNECTION waiters, requests are refused at once with 503 and Retry-After', async (t) => {
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_MAX_POOL_SIZE: '1',
    AUTH_DB_POOL_WAITERS_PER_CONNECTION: '2',
    AUTH_DB_ACQUIRE_TIMEOUT: '60s',
    AUTH_DB_STATEMENT_TIMEOUT: '0',
  });
  t.teardown(() => api.stop());
  const { access_token: token } = await signUp(api);
  const release = await lockUsers(t, api);
  const burst = getUsers(api, token, 10);
  // One request holds the only connection and two wait for it: the other seven are answered while the lock is held.
  const refused = await until('seven refusals', async () => (burst.answered().length === 7 ? burst.answered() : undefined));
  t.strictSame((await backends(api)).blocked, 1);
  for (const reply of refused) {
    t.equal(reply.status, 503);
    t.strictSame(withoutId(reply.body), BUSY);
    t.equal(reply.headers.get('retry-after'), '1');
    t.equal(reply.headers.get('content-type'), 'application/json');
  }
  await release();
  const replies = await burst.all;
  t.equal(replies.filter((r) => r.status === 200).length, 3, 'the holder and both waiters are served once the lock goes');
});

t.test('a request that cannot get a connection within DB_ACQUIRE_TIMEOUT is answered 503', async (t) => {
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_MAX_POOL_SIZE: '1',
    AUTH_DB_ACQUIRE_TIMEOUT: '300ms',
    AUTH_DB_STATEMENT_TIMEOUT: '0',
  });
  t.teardown(() => api.stop());
  const { access_token: token } = await signUp(api);
  const release = await lockUsers(t, api);
  const holder = api.request('GET', '/user', { token });
  await until('the first request waiting on the lock', async () => ((await backends(api)).blocked === 1 ? true : undefined));
  const waiter = await api.request('GET', '/user', { token });
  t.equal(waiter.status, 503);
  t.strictSame(withoutId(waiter.body), BUSY);
  t.equal(waiter.headers.get('retry-after'), '1');
  await release();
  t.equal((await holder).status, 200);
});

/** GET /user while the test holds a lock on users: 503 database_busy, then 200 once it lets go. */
async function busyWhileUsersLocked(t: Test, env: Record<string, string>): Promise<void> {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_HTTP_WORKERS: '1', ...env });
  t.teardown(() => api.stop());
  const { access_token: token } = await signUp(api);
  const release = await lockUsers(t, api);
  const reply = await api.request('GET', '/user', { token });
  t.equal(reply.status, 503);
  t.strictSame(withoutId(reply.body), BUSY);
  await release();
  t.equal((await api.request('GET', '/user', { token })).status, 200, 'the connection is still good');
}

t.test('a statement running past DB_STATEMENT_TIMEOUT is cancelled and answered 503', async (t) => {
  await busyWhileUsersLocked(t, { AUTH_DB_STATEMENT_TIMEOUT: '200ms' });
});

t.test("a lock wait past the database's own lock_timeout is answered 503, not 500", async (t) => {
  // An operator may set lock_timeout on the service's role or database; the statement then fails with
  // 55P03 (lock_not_available): contention, like DB_STATEMENT_TIMEOUT's cancellation above.
  const database = await createTestDatabase({ migrated: true });
  t.teardown(() => database.drop());
  const admin = createPool({ url: database.url, max: 1, namespace: 'public' });
  t.teardown(() => admin.end());
  const name = (await admin.query<{ name: string }>('select current_database() as name')).rows[0].name;
  await admin.query(`alter database "${name}" set lock_timeout = '200ms'`);
  await busyWhileUsersLocked(t, { DATABASE_URL: database.url });
});

/** A one-connection pool on a fresh database, and the first error the server ends one of its connections with. */
async function poolOfOne(t: Test, options: { idleInTransactionTimeoutMs?: number } = {}) {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  let lost: (err: Error) => void = () => {};
  const connectionLost = new Promise<Error>((resolve) => {
    lost = resolve;
  });
  const pool = createPool({ url: database.url, max: 1, namespace: 'public', ...options, onConnectionError: (err) => lost(err) });
  t.teardown(() => pool.end());
  return { pool, connectionLost };
}

t.test("a connection ended by the server's idle_session_timeout fails with a database fault", async (t) => {
  // 57P05: the server closed a connection that sat idle; a statement crossing its FATAL gets this error.
  const { pool, connectionLost } = await poolOfOne(t);
  await pool.query(`set idle_session_timeout = '100ms'`);
  const err = await connectionLost;
  t.match(err, { code: '57P05' }, 'the server said why');
  t.equal(databaseFault(err), 'unavailable');
  t.same((await pool.query('select 3 as n')).rows, [{ n: 3 }], 'the pool serves the next caller on a new connection');
});

t.test('a transaction left idle past DB_IDLE_IN_TRANSACTION_TIMEOUT fails with a database fault, not an uncaught error', async (t) => {
  const { pool, connectionLost } = await poolOfOne(t, { idleInTransactionTimeoutMs: 100 });
  const outcome = tx(pool, async (c) => {
    await c.query('select 1');
    // The server ends the session while this checked-out client waits: pg emits 'error' on it.
    await connectionLost;
    return c.query('select 2');
  }).then(
    () => null,
    (err: unknown) => err,
  );
  t.match(await connectionLost, { code: '25P03' }, 'the server said why');
  t.equal(databaseFault(await outcome), 'unavailable', 'the transaction fails with a fault the renderer answers 503');
  t.same((await pool.query('select 3 as n')).rows, [{ n: 3 }], 'the pool serves the next caller on a new connection');
});

t.test(
  "DB_CONN_MAX_LIFETIME and DB_CONN_MAX_IDLE_TIME, the original's connection lifetimes: old connections are replaced, idle ones closed",
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    const aging = createPool({ url: database.url, max: 1, namespace: 'public', maxLifetimeSeconds: 1 });
    t.teardown(() => aging.end());
    const pid = async () => (await aging.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    const first = await pid();
    const next = await until('a connection past its lifetime to be replaced', async () => {
      const now = await pid();
      return now === first ? undefined : now;
    });
    t.not(next, first, 'a new server session serves the pool once the first is a second old');

    const idling = createPool({ url: database.url, max: 2, namespace: 'public', idleTimeoutMs: 100 });
    t.teardown(() => idling.end());
    await Promise.all([idling.query('select pg_sleep(0.05)'), idling.query('select pg_sleep(0.05)')]);
    t.equal(idling.totalCount, 2, 'two connections while both were wanted');
    await until('idle connections to close', async () => (idling.totalCount === 0 ? true : undefined));
    t.equal(idling.totalCount, 0, 'none left once idle past the limit');
  },
);

t.test("DB_CONN_PERCENTAGE sizes the process's connections as that share of the server's max_connections, as the original", async (t) => {
  const api = await startTestService({ AUTH_HTTP_WORKERS: '3', AUTH_DB_MAX_POOL_SIZE: '50', AUTH_DB_CONN_PERCENTAGE: '2' });
  t.teardown(() => api.stop());
  const serverMax = Number((await api.db.query('show max_connections')).rows[0].max_connections);
  const expected = Math.max(1, Math.floor(serverMax * 0.02));
  const said = api.logs().find((l) => /^DB_CONN_PERCENTAGE:/.test(String(l.msg)));
  t.match(said, { level: 'info', connPercentage: 2, serverMaxConnections: serverMax, maxPoolSize: expected }, 'it says what it chose');
  t.equal(api.service.threads, Math.min(3, expected), 'in place of DB_MAX_POOL_SIZE, one connection per thread at least');
  const listening = api.logs().find((l) => l.msg === 'listening');
  t.equal(listening?.connectionsPerThread, poolBudget(3, expected).connections[0]);
});
