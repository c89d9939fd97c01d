// A password-login flood past the hashing queue's bound (issue 11): the excess is refused at once with a
// JSON 503 and Retry-After, every accepted login succeeds, and none waits into the 504 deadline.
// Default-cost argon2 so that the queue really fills.
import t from 'tap';
import { startTestService } from './helpers/server.js';

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
