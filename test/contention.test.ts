// Sign-up bursts against a slow mail server (issue 11): a transaction never waits for a second pooled
// connection, a send never holds the global counter's row lock, and a request whose deadline passes
// inside its transaction leaves nothing behind, also once the mail server answers after all.
import t, { type Test } from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';

const mailEnv = (smtp: SmtpTestServer) => ({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
  AUTH_MAILER_AUTOCONFIRM: 'false',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
});

async function slowMail(t: Test) {
  const smtp = await startSmtpServer({ delayMs: 200 });
  t.teardown(() => smtp.close());
  return smtp;
}

/** The service still answers: a fresh sign-up (database and mail) and /health. */
async function answersNormally(t: Test, api: TestService, smtp: SmtpTestServer, email: string) {
  const res = await api.request('POST', '/signup', { body: { email, password: 'secret99' } });
  t.equal(res.status, 200, 'a sign-up afterwards succeeds');
  await smtp.waitForMail(email);
  t.equal((await api.request('GET', '/health')).status, 200);
}

t.test('12 concurrent sign-ups of one address through a pool of 6: one user, every request answered', async (t) => {
  const smtp = await slowMail(t);
  const api = await startTestService({ ...mailEnv(smtp), AUTH_DB_MAX_POOL_SIZE: '6', AUTH_HTTP_WORKERS: '1' });
  t.teardown(() => api.stop());
  const answers = await Promise.all(
    Array.from({ length: 12 }, () => api.request('POST', '/signup', { body: { email: 'same@example.com', password: 'secret99' } })),
  );
  for (const a of answers) {
    // A request that starts after the first committed re-sends the pending confirmation: within the
    // interval that is the documented 429, never a 5xx.
    if (a.status === 429) t.equal(a.body.error_code, 'over_email_send_rate_limit');
    else t.equal(a.status, 200, JSON.stringify(a.body));
  }
  t.ok(
    answers.some((a) => a.status === 200),
    'at least the first sign-up succeeded',
  );
  const users = await api.db.query("select id from users where email = 'same@example.com'");
  t.equal(users.rowCount, 1, 'one user');
  const identities = await api.db.query('select 1 from identities where user_id = $1', [users.rows[0].id]);
  t.equal(identities.rowCount, 1, 'with one identity');
  await smtp.waitForMail('same@example.com');
  await answersNormally(t, api, smtp, 'after-same@example.com');
});

t.test('60 clients signing up distinct addresses through a pool of 6: every request answered, nothing half-done', async (t) => {
  const smtp = await slowMail(t);
  const api = await startTestService({ ...mailEnv(smtp), AUTH_DB_MAX_POOL_SIZE: '6', AUTH_HTTP_WORKERS: '1' });
  t.teardown(() => api.stop());
  const emails = Array.from({ length: 60 }, (_, i) => `burst${i}@example.com`);
  const answers = await Promise.all(emails.map((email) => api.request('POST', '/signup', { body: { email, password: 'secret99' } })));
  // Each sign-up holds its connection while its mail goes out (README "Faults and readiness"), so a burst
  // larger than the pool clears within DB_ACQUIRE_TIMEOUT only on a quiet machine; the rest is shed.
  const shed = answers.filter((a) => a.status !== 200);
  t.strictSame(
    shed.filter((a) => a.status !== 503 || a.body.error_code !== 'database_busy' || !a.headers.get('retry-after')).map((a) => a.body),
    [],
    'every answer is 200, or 503 database_busy with Retry-After',
  );
  t.ok(shed.length < answers.length, 'the pool kept serving');
  const accepted = emails.filter((_, i) => answers[i].status === 200);
  const users = await api.db.query("select email from users where email like 'burst%'");
  t.strictSame(users.rows.map((r) => r.email).sort(), [...accepted].sort(), 'a user for every 200 and none for a 503');
  await Promise.all(accepted.map((email) => smtp.waitForMail(email, 10_000)));
  await answersNormally(t, api, smtp, 'after-burst@example.com');
});

t.test('a deadline hit inside the transaction leaves no rows, also after the mail server answers', async (t) => {
  const smtp = await startSmtpServer();
  t.teardown(() => smtp.close());
  const api = await startTestService({ ...mailEnv(smtp), AUTH_API_MAX_REQUEST_DURATION: '1', AUTH_SEND_TIMEOUT: '60' });
  t.teardown(() => api.stop());
  smtp.stall();
  const res = await api.request('POST', '/signup', { body: { email: 'stalled@example.com', password: 'secret99' } });
  t.equal(res.status, 504);
  t.strictSame(res.body, {
    code: 504,
    error_code: 'request_timeout',
    msg: 'Processing this request timed out, please retry after a moment.',
    error_id: res.body.error_id,
  });
  t.equal((await api.db.query("select 1 from users where email = 'stalled@example.com'")).rowCount, 0, 'no user at the 504');
  // The abandoned transaction's connection is closed, so no session of the service stays in a transaction.
  await until(
    async () =>
      (
        await api.db.query(
          "select 1 from pg_stat_activity where datname = current_database() and application_name = 'portcullis' and state like 'idle in transaction%'",
        )
      ).rowCount === 0,
  );
  await until(async () => smtp.held === 1);
  smtp.release();
  await smtp.waitForMail('stalled@example.com');
  await answersNormally(t, api, smtp, 'after-stall@example.com');
  t.equal((await api.db.query("select 1 from users where email = 'stalled@example.com'")).rowCount, 0, 'no user after the mail went out');
  t.equal((await api.db.query("select 1 from one_time_tokens where relates_to = 'stalled@example.com'")).rowCount, 0, 'no token');
});

/** Polls `condition` every 20 ms for at most 5 s. */
async function until(condition: () => Promise<boolean>, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
