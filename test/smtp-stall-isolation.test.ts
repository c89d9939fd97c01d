// A mail relay that stalls (accepts the connection, never answers DATA) must not starve the rest of the
// service: each sending transaction keeps its pooled connection while its mail waits (sending-tx.ts), so
// fewer than half the pool's connections are in sending transactions at once (sending-slots.ts); requests
// beyond wait for a slot holding no connection, and are refused 503 database_busy with Retry-After.
import t from 'tap';
import { startMailStack, insertUser } from './helpers/passwordless.js';
import { confirmedUser } from './helpers/users.js';
import { refresh } from './helpers/accounts.js';

// A pool of 5: 2 sending slots. Sends and transactions may wait far longer than the test needs, so only
// the slot wait (DB_ACQUIRE_TIMEOUT) ends a stalled request before the relay is released.
const stack = await startMailStack({
  AUTH_DB_MAX_POOL_SIZE: '5',
  AUTH_HTTP_WORKERS: '1',
  AUTH_MAILER_AUTOCONFIRM: 'false',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
  AUTH_DB_ACQUIRE_TIMEOUT: '2',
  AUTH_SEND_TIMEOUT: '20',
  AUTH_API_MAX_REQUEST_DURATION: '30',
  AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '30',
});
const { api, smtp } = stack;
t.teardown(() => stack.stop());

/** Resolves once `check` holds, polled on the event loop (an observable state, not a sleep of a guessed length). */
async function until(check: () => boolean, stop: () => boolean = () => false): Promise<void> {
  while (!check() && !stop()) await new Promise((resolve) => setTimeout(resolve, 10));
}

t.test('a stalled relay holds fewer than half the pool; GET /user and refreshes keep answering', async (t) => {
  const session = await confirmedUser(api);
  const emails = Array.from({ length: 7 }, (_, i) => `stalled-${i}@example.com`);
  for (const email of emails) await insertUser(api.db, { email, confirmed: true });

  smtp.stall();
  const recover = (email: string) => api.request('POST', '/recover', { body: { email } });
  // Two recoveries take both slots and stall in DATA.
  const stalled = emails.slice(0, 2).map(recover);
  await until(() => smtp.held === 2);

  // Four more than the slots allow: they queue for a slot, holding no connection.
  const extras = emails.slice(2, 6).map(recover);
  const duringWait = await api.request('GET', '/user', { token: session.access_token });
  t.equal(duringWait.status, 200, `GET /user answers while sends stall: ${duringWait.text}`);

  // On the old code the extras stall in DATA too, taking the rest of the pool.
  let answered = false;
  const extrasAnswered = Promise.all(extras).finally(() => (answered = true));
  await until(
    () => smtp.held > 2,
    () => answered,
  );
  t.equal(smtp.held, 2, 'no more than the slots reached the relay');
  const me = await api.request('GET', '/user', { token: session.access_token });
  t.equal(me.status, 200, `GET /user answers while sends stall: ${me.text}`);
  const refreshed = await refresh(api, session.refresh_token);
  t.equal(refreshed.status, 200, `a refresh grant answers while sends stall: ${refreshed.text}`);

  for (const res of await extrasAnswered) {
    t.equal(res.status, 503, 'a request beyond the slots is refused');
    t.equal(res.body.error_code, 'database_busy');
    t.ok(res.headers.get('retry-after'), 'with Retry-After');
  }
  const open = await api.db.query(
    "select count(*)::int as n from pg_stat_activity where state = 'idle in transaction' and datname = current_database()",
  );
  t.ok(open.rows[0].n <= 2, `at most the slots' connections idle in transaction (${open.rows[0].n})`);

  smtp.release();
  for (const res of await Promise.all(stalled)) t.equal(res.status, 200, 'the stalled sends complete once the relay answers');
  await Promise.all(emails.slice(0, 2).map((email) => smtp.waitForMail(email)));

  const after = await recover(emails[6]);
  t.equal(after.status, 200, 'a send afterwards succeeds');
  await smtp.waitForMail(emails[6]);
  t.equal((await api.request('GET', '/user', { token: session.access_token })).status, 200);
});

t.test('the slots: half the pool but one, a queue in order, a bounded wait, an abort leaves the queue', async (t) => {
  const { createSendingSlots } = await import('../dist/server/delivery/sending-slots.js');
  const sizeFor = (poolSize: number) => createSendingSlots({ poolSize, maxWaiting: 1, timeoutMs: 1000 }).size;
  t.same([1, 2, 3, 4, 6, 10].map(sizeFor), [1, 1, 1, 1, 2, 4], 'at least one; two sets leave a pool of three or more a connection');
  const slots = createSendingSlots({ poolSize: 5, maxWaiting: 2, timeoutMs: 60_000 });
  t.equal(slots.size, 2);
  const first = await slots.acquire();
  await slots.acquire();
  const gone = new AbortController();
  const aborted = slots.acquire(gone.signal);
  const queued = slots.acquire();
  t.equal(slots.waiting, 2);
  const full = await slots.acquire().catch((err: any) => err);
  t.equal(full.errorCode, 'database_busy', 'a full queue is refused at once');
  t.equal(full.retryAfterSeconds, 1);
  gone.abort(new Error('client gone'));
  t.equal(((await aborted.catch((err: Error) => err)) as Error).message, 'client gone', 'an abort rejects with its reason');
  t.equal(slots.waiting, 1, 'and leaves the queue');
  first();
  first(); // giving it back twice frees it once
  await queued;
  t.equal(slots.taken, 2, 'the slot passed to the next in line');
  const short = createSendingSlots({ poolSize: 2, maxWaiting: 10, timeoutMs: 20 });
  await short.acquire();
  const late = await short.acquire().catch((err: any) => err);
  t.equal(late.errorCode, 'database_busy', 'a wait past the timeout is refused');
  t.equal(short.waiting, 0);
});
