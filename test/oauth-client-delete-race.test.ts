// Deleting an OAuth server client (DELETE /admin/oauth/clients/{id}) while its codes are exchanged or its
// refresh tokens used at POST /oauth/token: whatever the interleaving, no session of the deleted client
// survives the delete, and a request the delete overtook is refused as a request after the delete is.
// The interleavings are forced, not hoped for: the test holds a row's lock, starts each request once the
// ones before it wait on a lock (pg_stat_activity), then lets them go in that order (test/helpers/row-lock.ts).
import t, { type Test } from 'tap';
import type pg from 'pg';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { holdLock, type HeldLock } from './helpers/row-lock.js';
import { approvedCode, basic, oauthServerEnv, tokenRequest } from './helpers/oauth-server.js';

const api = await startTestService(oauthServerEnv());
t.teardown(() => api.stop());

type Answer = { status: number; body: any };

/** Locks the one row `sql` selects (it ends in `for update`) in a transaction of the test's own. */
async function holdRow(db: pg.Pool, sql: string, values: unknown[]): Promise<HeldLock> {
  const held = await holdLock(db, sql, values);
  if (held.rows !== 1) {
    await held.release();
    throw new Error(`the lock's query found ${held.rows} rows`);
  }
  return held;
}

interface Started<T> {
  promise: Promise<T>;
  settled: boolean;
}

/** `send`'s promise, and whether it has settled yet. */
function started<T>(send: () => Promise<T>): Started<T> {
  const s = { settled: false } as Started<T>;
  s.promise = send().finally(() => {
    s.settled = true;
  });
  return s;
}

const deleteClient = async (id: string): Promise<Reply> =>
  api.request('DELETE', `/admin/oauth/clients/${id}`, { token: await adminToken('service_role') });

const liveSessions = async (clientId: string): Promise<number> =>
  (await api.db.query(`select count(*)::int as n from sessions where oauth_client_id = $1`, [clientId])).rows[0].n;

/**
 * The race's outcome is one of the two sequential ones: the request refused as after the delete (`after`,
 * the same request sent again now), or answered as before it, its tokens then ended by the delete.
 */
async function checkOutcome(t: Test, raced: Answer, after: Answer, clientId: string) {
  t.equal(after.status, 400, 'sent after the delete, the request is refused');
  if (raced.status === 200) {
    const user = await api.request('GET', '/user', { token: raced.body.access_token });
    t.equal(user.status, 403, 'the access token issued in the race names a session the delete ended');
  } else {
    t.strictSame(raced, after, 'refused as a request after the delete is');
  }
  t.equal(await liveSessions(clientId), 0, 'no session of the deleted client survives');
}

t.test('an exchange that holds its code when the client is deleted: its session ends with the client', async (t) => {
  const { client, authorizationId, exchange } = await approvedCode(api);
  // the exchange authenticates the client, then waits for the code's row, which the test holds
  const lock = await holdRow(api.db, `select 1 from oauth_authorizations where authorization_id = $1 for update`, [authorizationId]);
  let deletion!: Started<Reply>;
  let exchanged!: Started<Answer>;
  try {
    exchanged = started(exchange);
    await lock.waiters(1);
    // the delete runs meanwhile: to its end, or until it waits for the exchange
    deletion = started(() => deleteClient(client.client_id));
    await lock.waiters(2, deletion);
  } finally {
    await lock.release();
  }
  const [deleted, raced] = await Promise.all([deletion.promise, exchanged.promise]);
  t.equal(deleted.status, 204, deleted.text);
  await checkOutcome(t, raced, await exchange(), client.client_id);
});

t.test('an exchange that authenticated the client before its delete committed is refused as after the delete', async (t) => {
  const { client, exchange } = await approvedCode(api);
  // the delete queues first on the client's row, the exchange (past its client check) second
  const lock = await holdRow(api.db, `select 1 from oauth_clients where id = $1 for update`, [client.client_id]);
  let deletion!: Started<Reply>;
  let exchanged!: Started<Answer>;
  try {
    deletion = started(() => deleteClient(client.client_id));
    await lock.waiters(1);
    exchanged = started(exchange);
    await lock.waiters(2, exchanged);
  } finally {
    await lock.release();
  }
  const [deleted, raced] = await Promise.all([deletion.promise, exchanged.promise]);
  t.equal(deleted.status, 204, deleted.text);
  const after = await exchange();
  t.strictSame(after, {
    status: 400,
    body: { code: 400, error_code: 'invalid_credentials', msg: 'Invalid client credentials' },
  });
  t.strictSame(raced, after, 'the delete came first: the exchange is refused as after it');
  t.equal(await liveSessions(client.client_id), 0, 'no session of the deleted client survives');
});

t.test('a refresh racing the delete of its client: either way no session survives', async (t) => {
  for (const deleteFirst of [false, true]) {
    const { client, exchange } = await approvedCode(api);
    const tokens = await exchange();
    t.equal(tokens.status, 200);
    const refresh = () =>
      tokenRequest(
        api,
        { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token },
        basic(client.client_id, client.client_secret!),
      );
    const { rows } = await api.db.query(`select id from sessions where oauth_client_id = $1`, [client.client_id]);
    // both the rotation and the delete's ending of the session take the session's row, held by the test
    const lock = await holdRow(api.db, `select 1 from sessions where id = $1 for update`, [rows[0].id]);
    const sends: Array<() => Promise<Answer>> = [() => deleteClient(client.client_id), refresh];
    if (!deleteFirst) sends.reverse();
    const replies: Array<Started<Answer>> = [];
    try {
      for (const [i, send] of sends.entries()) {
        replies.push(started<Answer>(send));
        await lock.waiters(i + 1);
      }
    } finally {
      await lock.release();
    }
    const [deleted, raced] = deleteFirst
      ? await Promise.all([replies[0].promise, replies[1].promise])
      : await Promise.all([replies[1].promise, replies[0].promise]);
    t.equal(deleted.status, 204);
    const after = await refresh();
    t.strictSame(after, {
      status: 400,
      body: { code: 400, error_code: 'invalid_credentials', msg: 'Invalid client credentials' },
    });
    if (deleteFirst) t.strictSame(raced, after, 'the delete came first: the refresh is refused as after it');
    else t.equal(raced.status, 200, 'the refresh came first');
    await checkOutcome(t, raced, after, client.client_id);
  }
});
