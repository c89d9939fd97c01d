// A password-login flood past the hashing queue's bound (issue 11): the excess is refused at once with a
// JSON 503 and Retry-After, every accepted login succeeds, and none waits into the 504 deadline.
// Default-cost argon2 so that the queue really fills.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { samples, scrapeMetrics } from './helpers/exposition.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_CRYPTO_WORKERS: '2',
  AUTH_PASSWORD_HASH_MEMORY_KIB: '19456',
  AUTH_PASSWORD_HASH_TIME_COST: '2',
  AUTH_PASSWORD_HASH_MAX_QUEUE: '4',
});
t.teardown(() => api.stop());

t.test('a login flood past the queue bound: the excess refused with Retry-After, accepted logins succeed', async (t) => {
  t.equal((await api.request('POST', '/signup', { body: { email: 'flood@example.com', password: 'secret99' } })).status, 200);
  const answers = await Promise.all(
    Array.from({ length: 300 }, () =>
      api.request('POST', '/token?grant_type=password', { body: { email: 'flood@example.com', password: 'secret99' } }),
    ),
  );
  const accepted = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 503);
  t.equal(
    accepted.length + refused.length,
    answers.length,
    `only 200 and 503: ${JSON.stringify([...new Set(answers.map((a) => a.status))])}`,
  );
  t.ok(refused.length > 0, 'the excess was refused');
  t.ok(accepted.length > 0, 'and the rest accepted');
  for (const a of accepted) t.ok(a.body.access_token && a.body.refresh_token, 'an accepted login carries tokens');
  for (const r of refused) {
    t.strictSame(r.body, {
      code: 503,
      error_code: 'over_capacity',
      msg: 'The service is at capacity, please retry after a moment.',
      error_id: r.body.error_id,
    });
    t.equal(r.headers.get('retry-after'), '1');
  }
  const after = await api.request('POST', '/token?grant_type=password', { body: { email: 'flood@example.com', password: 'secret99' } });
  t.equal(after.status, 200, 'logins succeed once the flood is over');
});

// With the hashing queue full, a login is refused before its lookup: a flood's refused logins took a pooled
// connection each for the lookup, and starved the other routes of the pool. Shown in order, not by timing:
// with the users table locked, the refusal must come back without the login waiting on that lock.
t.test('with the hashing queue full a login is refused before it reads the database', async (t) => {
  const slow = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_CRYPTO_WORKERS: '1',
    // The heaviest hash a sign-in verifies (256 MiB over 4 passes, docs/passwords.md#imported-hash-formats),
    // about a second and more: the queue stays full for that long once a second login waits.
    AUTH_PASSWORD_HASH_MEMORY_KIB: '262144',
    AUTH_PASSWORD_HASH_TIME_COST: '4',
    AUTH_PASSWORD_HASH_MAX_QUEUE: '1',
    AUTH_API_MAX_REQUEST_DURATION: '120',
    AUTH_METRICS_ENABLED: 'true',
    AUTH_METRICS_EXPORTER: 'prometheus',
  });
  t.teardown(() => slow.stop());
  const login = () => slow.request('POST', '/token?grant_type=password', { body: { email: 'full@example.com', password: 'secret99' } });
  t.equal((await slow.request('POST', '/signup', { body: { email: 'full@example.com', password: 'secret99' } })).status, 200);
  const gauge = async (name: string) => samples(await scrapeMetrics(slow.service.metricsPort)).find((s) => s.name === name)?.value ?? 0;
  const filling = [login(), login()];
  for (let i = 0; i < 600 && (await gauge('auth_crypto_pool_queued_tasks')) < 1; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(await gauge('auth_crypto_pool_running_tasks'), 1, 'one login hashing');
  t.equal(await gauge('auth_crypto_pool_queued_tasks'), 1, 'and one waiting: the queue is full');

  const holder = await slow.db.connect();
  await holder.query('begin');
  await holder.query('lock table users in access exclusive mode');
  const waitedOnLock = (async () => {
    for (;;) {
      const { rows } = await slow.db.query(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (rows[0].n > 0) return 'waited on the lock' as const;
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const refused = login();
  const first = await Promise.race([refused.then(() => 'answered' as const), waitedOnLock]);
  await holder.query('commit');
  holder.release();
  t.equal(first, 'answered', 'answered without reading users');
  const res = await refused;
  t.strictSame([res.status, res.body.error_code, res.headers.get('retry-after')], [503, 'over_capacity', '1']);
  for (const filled of await Promise.all(filling)) t.equal(filled.status, 200, 'the logins admitted before still succeed');
});
