// The global send limits (RATE_LIMIT_EMAIL_SENT, RATE_LIMIT_SMS_SENT) tell no account apart
// (docs/one-time-codes-and-mail.md#global-send-limits): a request that only pretends to send — a sign-up of
// a confirmed address, a resend to an address with no account or nothing pending — takes a permit as a
// real send does, so once the limit is spent every such request is refused with the same 429.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD } from './helpers/users.js';

const stack = await startMailStack(
  { AUTH_RATE_LIMIT_EMAIL_SENT: '100000', AUTH_RATE_LIMIT_SMS_SENT: '100000', AUTH_RATE_LIMIT_OTP: '100000' },
  { sms: true },
);
const { api } = stack;
t.teardown(() => stack.stop());

let counter = 0;
const nextPhone = () => `1415557${String(++counter).padStart(4, '0')}`;

/** A signed-up address, confirmed, whose sign-up's own send is past any interval. */
async function confirmedAddress(field: 'email' | 'phone', address: string): Promise<void> {
  const res = await api.request('POST', '/signup', { body: { [field]: address, password: PASSWORD } });
  if (res.status !== 200) throw new Error(`signup: ${res.status} ${res.text}`);
  const confirmed = field === 'email' ? 'email_confirmed_at' : 'phone_confirmed_at';
  await api.db.query(`update users set ${confirmed} = now(), confirmation_sent_at = now() - interval '1 day' where id = $1`, [res.body.id]);
}

const sentCount = async (key: 'email_sent' | 'sms_sent'): Promise<number> =>
  Number((await api.db.query('select count from rate_limits where key = $1', [key])).rows[0]?.count ?? 0);

const confirmedEmail = uniqueEmail('confirmed');
const confirmedPhone = nextPhone();

t.before(async () => {
  await confirmedAddress('email', confirmedEmail);
  await confirmedAddress('phone', confirmedPhone);
});

t.test('a pretended send takes a global permit, as a real send does', async (t) => {
  const cases: [string, 'email_sent' | 'sms_sent', () => Promise<{ status: number }>][] = [
    [
      'sign-up of a confirmed email',
      'email_sent',
      () => api.request('POST', '/signup', { body: { email: confirmedEmail, password: PASSWORD } }),
    ],
    [
      'sign-up of a confirmed phone',
      'sms_sent',
      () => api.request('POST', '/signup', { body: { phone: confirmedPhone, password: PASSWORD } }),
    ],
    [
      'resend to an unknown email',
      'email_sent',
      () => api.request('POST', '/resend', { body: { type: 'signup', email: uniqueEmail('ghost') } }),
    ],
    ['resend to an unknown phone', 'sms_sent', () => api.request('POST', '/resend', { body: { type: 'sms', phone: nextPhone() } })],
  ];
  for (const [name, key, ask] of cases) {
    const before = await sentCount(key);
    const res = await ask();
    t.equal(res.status, 200, name);
    t.equal(await sentCount(key), before + 1, `${name}: one ${key} permit`);
  }
});

t.test('with the global limit spent, a pretended send is refused as a real one is', async (t) => {
  // Addresses of their own: those above are within their send interval now.
  const email = uniqueEmail('confirmed');
  const phone = nextPhone();
  await confirmedAddress('email', email);
  await confirmedAddress('phone', phone);
  const repeats = async () =>
    (await api.db.query("select 1 from audit_log_entries where payload->>'action' = 'user_repeated_signup'")).rowCount;
  const repeatsBefore = await repeats();
  await api.db.query("update rate_limits set count = 1000000, window_start = now() where key in ('email_sent', 'sms_sent')");
  const unknownSignup = await api.request('POST', '/signup', { body: { email: uniqueEmail('fresh'), password: PASSWORD } });
  t.strictSame(unknownSignup.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: 'email rate limit exceeded' });
  const asks: [string, () => Promise<{ status: number; body: unknown }>][] = [
    ['sign-up of a confirmed email', () => api.request('POST', '/signup', { body: { email, password: PASSWORD } })],
    ['resend to an unknown email', () => api.request('POST', '/resend', { body: { type: 'signup', email: uniqueEmail('ghost') } })],
    ['resend to a confirmed email', () => api.request('POST', '/resend', { body: { type: 'signup', email } })],
  ];
  for (const [name, ask] of asks) t.strictSame((await ask()).body, unknownSignup.body, name);
  const unknownPhone = await api.request('POST', '/signup', { body: { phone: nextPhone(), password: PASSWORD } });
  t.equal(unknownPhone.status, 429);
  t.equal(unknownPhone.body.error_code, 'over_sms_send_rate_limit');
  const confirmedPhoneAgain = await api.request('POST', '/signup', { body: { phone, password: PASSWORD } });
  t.strictSame(confirmedPhoneAgain.body, unknownPhone.body, 'sign-up of a confirmed phone');
  const resendPhone = await api.request('POST', '/resend', { body: { type: 'sms', phone: nextPhone() } });
  t.strictSame(resendPhone.body, unknownPhone.body, 'resend to an unknown phone');
  t.equal(await repeats(), repeatsBefore, 'a refused repeat leaves no audit entry behind');
});
