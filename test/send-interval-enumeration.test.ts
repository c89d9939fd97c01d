// The per-address send interval tells no account apart (docs/one-time-codes-and-mail.md#send-intervals): a
// known address asked twice within SMTP_MAX_FREQUENCY / SMS_MAX_FREQUENCY is refused the second time, and
// so must an address the service only pretends to send to be, with the same answer, or two requests list
// accounts. After the interval both are served again.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMailStack, type MailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD } from './helpers/users.js';

const INTERVAL = 3;
const stack: MailStack = await startMailStack(
  {
    AUTH_RATE_LIMIT_EMAIL_SENT: '100000',
    AUTH_RATE_LIMIT_SMS_SENT: '100000',
    // Sign-ups and codes share this per-client bucket (30 in five minutes): this file asks more.
    AUTH_RATE_LIMIT_OTP: '100000',
    AUTH_SMTP_MAX_FREQUENCY: `${INTERVAL}s`,
    AUTH_SMS_MAX_FREQUENCY: `${INTERVAL}s`,
  },
  { sms: true },
);
const { api } = stack;
t.teardown(() => stack.stop());

let counter = 0;
// Every number has the same length, so equal answers are equal to the byte.
const nextPhone = () => `1415556${String(++counter).padStart(4, '0')}`;

async function signUp(field: 'email' | 'phone', address: string, set: string): Promise<string> {
  const res = await api.request('POST', '/signup', { body: { [field]: address, password: PASSWORD } });
  if (res.status !== 200) throw new Error(`signup: ${res.status} ${res.text}`);
  const id: string = res.body.id ?? res.body.user.id;
  // Its sign-up's own send is past the interval: the probes below are its first requests.
  await api.db.query(`update users set confirmation_sent_at = now() - interval '1 day', ${set} where id = $1`, [id]);
  return id;
}

interface Seen {
  status: number;
  body: unknown;
  retryAfter: string | null;
}
const seen = (res: { status: number; body: unknown; headers: Headers }): Seen => ({
  status: res.status,
  body: res.body,
  retryAfter: res.headers.get('retry-after'),
});

type Ask = (address: string) => Promise<Seen>;
const post =
  (path: string, body: (address: string) => Record<string, unknown>): Ask =>
  async (address) =>
    seen(await api.request('POST', path, { body: body(address) }));

// A 200's body names the user (or is a fabricated one), or an SMS's message_id: masked, as it differs
// between any two addresses. 429s are compared whole.
const masked =
  (ask: Ask): Ask =>
  async (address) => {
    const s = await ask(address);
    return { ...s, body: s.status === 200 ? {} : s.body };
  };
/**
 * Asks each address twice in a row, then once more after the interval, the addresses concurrently; every
 * address must get the answers the first (known) one gets: 200, 429 with the same body, 200.
 */
async function alike(t: Test, ask: Ask, channel: 'email' | 'sms', addresses: Record<string, string>): Promise<void> {
  const names = Object.keys(addresses);
  const runs = await Promise.all(
    names.map(async (name) => {
      const first = await ask(addresses[name]);
      const second = await ask(addresses[name]);
      await sleep(INTERVAL * 1000 + 200);
      const third = await ask(addresses[name]);
      return { first, second, third };
    }),
  );
  const [known] = runs;
  t.equal(known.first.status, 200, `${names[0]}: the first request is served`);
  t.strictSame(
    known.second,
    {
      status: 429,
      body: {
        code: 429,
        error_code: `over_${channel}_send_rate_limit`,
        msg: `For security purposes, you can only request this after ${INTERVAL - 1} seconds.`,
      },
      retryAfter: String(INTERVAL),
    },
    `${names[0]}: a repeat within the interval is refused`,
  );
  t.equal(known.third.status, 200, `${names[0]}: served again after the interval`);
  for (const [i, run] of runs.entries()) {
    if (i === 0) continue;
    t.strictSame(run, known, `${names[i]} answers as ${names[0]}`);
  }
}

t.test('POST /recover: an unknown address is refused a repeat as a known one is', async (t) => {
  const known = uniqueEmail('recover-known');
  await signUp('email', known, 'email_confirmed_at = now()');
  await alike(
    t,
    post('/recover', (email) => ({ email })),
    'email',
    { known, unknown: uniqueEmail('recover-nobody') },
  );
});

t.test('POST /resend signup: unknown and confirmed addresses as one with a pending sign-up', async (t) => {
  const pending = uniqueEmail('resend-pending');
  await signUp('email', pending, 'email_confirmed_at = null');
  const confirmed = uniqueEmail('resend-confirmed');
  await signUp('email', confirmed, 'email_confirmed_at = now()');
  await alike(
    t,
    post('/resend', (email) => ({ type: 'signup', email })),
    'email',
    {
      pending,
      unknown: uniqueEmail('resend-nobody'),
      confirmed,
    },
  );
});

t.test('POST /resend sms: unknown and confirmed numbers as one with a pending confirmation', async (t) => {
  const pending = nextPhone();
  await signUp('phone', pending, 'phone_confirmed_at = null');
  const confirmed = nextPhone();
  await signUp('phone', confirmed, 'phone_confirmed_at = now()');
  await alike(t, masked(post('/resend', (phone) => ({ type: 'sms', phone }))), 'sms', { pending, unknown: nextPhone(), confirmed });
});

// A change's resend that finds nothing pending is served at once again, as the original serves it: its
// interval would tell only that an account has a change pending, and @supabase/auth-js's own tests resend
// a phone change twice in a row for a number nobody holds, expecting 200 both times. A pending change's
// repeat is still refused.
t.test('POST /resend email_change and phone_change: nothing pending is served twice; a pending change is not', async (t) => {
  const emailChange = post('/resend', (email) => ({ type: 'email_change', email }));
  const phoneChange = post('/resend', (phone) => ({ type: 'phone_change', phone }));
  const none = uniqueEmail('change-none');
  await signUp('email', none, 'email_confirmed_at = now()');
  for (const [what, ask, address] of [
    ['an unknown address', emailChange, uniqueEmail('change-nobody')],
    ['an address with no change pending', emailChange, none],
    ['an unknown number', phoneChange, nextPhone()],
  ] as const) {
    const answers = [await ask(address), await ask(address)];
    t.strictSame(
      answers.map((a) => [a.status, a.body]),
      [
        [200, {}],
        [200, {}],
      ],
      `${what}: served both times`,
    );
  }
  const pending = uniqueEmail('change-pending');
  await signUp(
    'email',
    pending,
    `email_confirmed_at = now(), email_change = '${uniqueEmail('change-to')}', email_change_sent_at = now() - interval '1 day'`,
  );
  t.equal((await emailChange(pending)).status, 200, 'a pending change is sent again');
  t.equal((await emailChange(pending)).status, 429, 'and its repeat within the interval is refused');
  const rows = await api.db.query("select count(*)::int as n from rate_limits where key like 'pretended_send:%change%'");
  t.equal(rows.rows[0].n, 0, 'nothing is remembered for a change');
});

const signupOf = (field: 'email' | 'phone', headers: Record<string, string> = {}) =>
  masked(async (address) => seen(await api.request('POST', '/signup', { body: { [field]: address, password: PASSWORD }, headers })));

/** An address held by a user of another audience (X-JWT-AUD), confirmed: nobody in the default one has it. */
async function foreign(field: 'email' | 'phone', address: string): Promise<string> {
  const res = await api.request('POST', '/signup', {
    body: { [field]: address, password: PASSWORD },
    headers: { 'X-JWT-AUD': 'elsewhere' },
  });
  if (res.status !== 200) throw new Error(`foreign signup: ${res.status} ${res.text}`);
  await api.db.query(
    `update users set ${field}_confirmed_at = now(), confirmation_sent_at = now() - interval '1 day' where ${field} = $1`,
    [address],
  );
  return address;
}

t.test('POST /signup: a confirmed address, or one of another audience, as a pending or unknown one', async (t) => {
  const pending = uniqueEmail('signup-pending');
  await signUp('email', pending, 'email_confirmed_at = null');
  const confirmed = uniqueEmail('signup-confirmed');
  await signUp('email', confirmed, 'email_confirmed_at = now()');
  await alike(t, signupOf('email'), 'email', {
    pending,
    unknown: uniqueEmail('signup-nobody'),
    confirmed,
    elsewhere: await foreign('email', uniqueEmail('signup-elsewhere')),
  });
});

t.test('POST /signup phone: a confirmed number, or one of another audience, as a pending or unknown one', async (t) => {
  const pending = nextPhone();
  await signUp('phone', pending, 'phone_confirmed_at = null');
  const confirmed = nextPhone();
  await signUp('phone', confirmed, 'phone_confirmed_at = now()');
  await alike(t, signupOf('phone'), 'sms', {
    pending,
    unknown: nextPhone(),
    confirmed,
    elsewhere: await foreign('phone', nextPhone()),
  });
});

t.test('POST /magiclink and /otp: an address of another audience as an unknown one', async (t) => {
  await alike(
    t,
    post('/magiclink', (email) => ({ email })),
    'email',
    {
      unknown: uniqueEmail('magiclink-nobody'),
      elsewhere: await foreign('email', uniqueEmail('magiclink-elsewhere')),
    },
  );
  await alike(
    t,
    post('/otp', (email) => ({ email })),
    'email',
    {
      unknown: uniqueEmail('otp-nobody'),
      elsewhere: await foreign('email', uniqueEmail('otp-elsewhere')),
    },
  );
  await alike(t, masked(post('/otp', (phone) => ({ phone }))), 'sms', {
    unknown: nextPhone(),
    elsewhere: await foreign('phone', nextPhone()),
  });
});

const repeatedSignups = async (email: string) =>
  Number(
    (
      await api.db.query(
        `select count(*) from audit_log_entries where payload ->> 'action' = 'user_repeated_signup' and payload ->> 'actor_username' = $1`,
        [email],
      )
    ).rows[0].count,
  );

t.test('POST /signup of a confirmed address: a refused repeat writes nothing; concurrent repeats, one served', async (t) => {
  const email = uniqueEmail('signup-refused');
  await signUp('email', email, 'email_confirmed_at = now()');
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => api.request('POST', '/signup', { body: { email, password: PASSWORD } })),
  );
  t.strictSame(answers.map((r) => r.status).sort(), [200, 429, 429, 429, 429], 'one served, the others refused');
  t.equal(await repeatedSignups(email), 1, 'only the served one is in the audit log');
  const before = await pretended();
  t.equal((await api.request('POST', '/signup', { body: { email, password: PASSWORD } })).status, 429);
  t.strictSame(await pretended(), before, 'the refusal wrote no pretended send');
  t.equal(await repeatedSignups(email), 1, 'nor an audit entry');
});

const pretended = async () =>
  (await api.db.query(`select key, updated_at from rate_limits where key like 'pretended\\_send:%' order by key`)).rows as Array<{
    key: string;
    updated_at: Date;
  }>;

t.test('a refused repeat changes nothing, and the address is not stored', async (t) => {
  const email = uniqueEmail('refused');
  t.equal((await api.request('POST', '/recover', { body: { email } })).status, 200);
  const before = await pretended();
  const mine = before.filter((r) => r.key.includes(':recovery:'));
  t.ok(mine.length >= 1, 'the pretended send is remembered');
  t.notOk(
    before.some((r) => r.key.includes(email) || r.key.includes(email.split('@')[0])),
    'under a keyed hash, not the address',
  );
  t.equal((await api.request('POST', '/recover', { body: { email } })).status, 429);
  t.strictSame(await pretended(), before, 'the refusal wrote nothing');
});

t.test('concurrent requests for one unknown address: one is served, as for a known one', async (t) => {
  const known = uniqueEmail('concurrent-known');
  await signUp('email', known, 'email_confirmed_at = now()');
  for (const [name, email] of [
    ['known', known],
    ['unknown', uniqueEmail('concurrent-nobody')],
  ]) {
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.request('POST', '/recover', { body: { email } })));
    t.strictSame(answers.map((r) => r.status).sort(), [200, 429, 429, 429, 429], `${name}: one served, the others refused`);
  }
  const number = nextPhone();
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => api.request('POST', '/resend', { body: { type: 'sms', phone: number } })),
  );
  t.strictSame(answers.map((r) => r.status).sort(), [200, 429, 429, 429, 429], '/resend of an unknown number: one served');
});
