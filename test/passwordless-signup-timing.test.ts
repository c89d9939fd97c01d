// /magiclink (and /otp by email) for an address another audience holds signs nobody up and sends nothing:
// it must still answer after as long as a real sign-up's confirmation mail takes, or its quick answer tells
// that address from an unknown one (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts).
// The relay here takes a second to accept each mail, so a real send takes at least that long; the bound
// checked is the wait itself, which cannot end early.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { uniqueEmail } from './helpers/accounts.js';

const RELAY_DELAY_MS = 1000;
const smtp = await startSmtpServer({ delayMs: RELAY_DELAY_MS });
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
  AUTH_RATE_LIMIT_EMAIL_SENT: '100000',
  AUTH_RATE_LIMIT_OTP: '100000',
  // Send durations are kept per HTTP thread: one thread, so the pretended request sees the real ones.
  AUTH_HTTP_WORKERS: '1',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});

async function timed(path: string, email: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await api.request('POST', path, { body: { email } });
  return { status: res.status, ms: performance.now() - started };
}

t.test('an address held in another audience answers no sooner than a real sign-up', async (t) => {
  // Real sign-ups through each route: their mails set how long such a request takes.
  for (const path of ['/magiclink', '/otp']) {
    const real = await timed(path, uniqueEmail('new'));
    t.equal(real.status, 200, `${path}: a new address is signed up`);
    t.ok(real.ms >= RELAY_DELAY_MS, `${path}: its mail waited for the relay`);
  }
  const mailsBefore = smtp.mails.length;
  for (const path of ['/magiclink', '/otp']) {
    const held = uniqueEmail('elsewhere');
    await api.db.query(
      `insert into users (aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
       values ('other-audience', 'authenticated', $1, now(), '{}', '{}')`,
      [held],
    );
    const pretended = await timed(path, held);
    t.equal(pretended.status, 200, `${path}: answered as an unknown address`);
    // The median of the real sends, less what the request already spent: well over half the relay's delay.
    t.ok(pretended.ms >= RELAY_DELAY_MS / 2, `${path}: waited out a send's duration (${Math.round(pretended.ms)} ms)`);
    const users = await api.db.query('select aud from users where email = $1', [held]);
    t.strictSame(
      users.rows.map((r) => r.aud),
      ['other-audience'],
      `${path}: nobody signed up`,
    );
  }
  t.equal(smtp.mails.length, mailsBefore, 'and nothing was sent');
});
