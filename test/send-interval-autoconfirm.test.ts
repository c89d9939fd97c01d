// Under MAILER_AUTOCONFIRM, /magiclink signs an unknown address up confirmed and sends it a magic link, so
// its repeat is refused by the recovery mail's interval; an address held in another audience, which gets
// nothing, must be refused alike (docs/one-time-codes-and-mail.md#send-intervals).
import t from 'tap';
import { startMailStack, type MailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD } from './helpers/users.js';

const stack: MailStack = await startMailStack({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_RATE_LIMIT_EMAIL_SENT: '100000',
  AUTH_SMTP_MAX_FREQUENCY: '60s',
});
const { api } = stack;
t.teardown(() => stack.stop());

const twice = async (email: string) => {
  const answers = [];
  for (let i = 0; i < 2; i++) {
    const res = await api.request('POST', '/magiclink', { body: { email } });
    answers.push({ status: res.status, body: res.body, retryAfter: res.headers.get('retry-after') });
  }
  return answers;
};

t.test('POST /magiclink: an address of another audience as an unknown one', async (t) => {
  const elsewhere = uniqueEmail('autoconfirm-elsewhere');
  const res = await api.request('POST', '/signup', {
    body: { email: elsewhere, password: PASSWORD },
    headers: { 'X-JWT-AUD': 'elsewhere' },
  });
  t.equal(res.status, 200, 'signed up in another audience');
  const unknown = await twice(uniqueEmail('autoconfirm-nobody'));
  t.strictSame(
    unknown.map((a) => a.status),
    [200, 429],
    'an unknown address is signed up and sent a link, then refused',
  );
  t.strictSame(await twice(elsewhere), unknown, "the other audience's address answers alike");
});
