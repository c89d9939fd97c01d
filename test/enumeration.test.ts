// Account enumeration, black-box. Each unauthenticated endpoint that takes an address is asked about
// addresses in every state an account can be in (none, confirmed, unconfirmed, banned, SSO-only, without a
// password, invited, anonymous, soft- and hard-deleted, another letter case, surrounding spaces), and its
// answers are compared whole: status, body (ids, timestamps and the address masked), headers, and what was
// mailed or texted. The original service tells some states apart on purpose (a fabricated user with
// `identities: []` for a confirmed address, otp_disabled for an unknown one with create_user false, a
// message_id only for a confirmed number); everywhere else two states must get the same answer.
// Timing is out of scope here (bench/README.md measures it).
import t, { type Test } from 'tap';
import { startMailStack, type MailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';

const PASSWORD = 'Secret-password-1';
const LIMITS = { AUTH_RATE_LIMIT_EMAIL_SENT: '100000', AUTH_RATE_LIMIT_SMS_SENT: '100000', AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' };
const plain = await startMailStack(LIMITS, { sms: true });
const autoconfirm = await startMailStack({ ...LIMITS, AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SMS_AUTOCONFIRM: 'true' }, { sms: true });
t.teardown(async () => {
  await plain.stop();
  await autoconfirm.stop();
});

// Every address has the same length, so equal answers have equal Content-Length.
let counter = 0;
const nextEmail = () => `u${String(++counter).padStart(6, '0')}@example.com`;
const nextPhone = () => `1415555${String(++counter).padStart(4, '0')}`;

/** What a state hands the probe: the text sent as the address, and the address mail or SMS would go to. */
interface Target {
  probe: string;
  address: string;
}
type State = (s: MailStack) => Promise<Target>;
const same = (address: string): Target => ({ probe: address, address });

/** Signs `address` up over HTTP (confirmed at once on the autoconfirm stack) with its send interval passed. */
async function signUp(s: MailStack, field: 'email' | 'phone', address: string): Promise<string> {
  const res = await s.api.request('POST', '/signup', { body: { [field]: address, password: PASSWORD } });
  if (res.status !== 200) throw new Error(`signup: ${res.status} ${res.text}`);
  const id: string = res.body.id ?? res.body.user.id;
  await s.api.db.query(`update users set confirmation_sent_at = now() - interval '1 day' where id = $1`, [id]);
  return id;
}
const update = (s: MailStack, id: string, set: string) => s.api.db.query(`update users set ${set} where id = $1`, [id]);

async function deleteUser(s: MailStack, id: string, soft: boolean): Promise<void> {
  const res = await s.api.request('DELETE', `/admin/users/${id}`, { body: { should_soft_delete: soft }, token: await adminToken() });
  if (res.status !== 200) throw new Error(`delete: ${res.status} ${res.text}`);
}

async function emailUser(s: MailStack, set: string): Promise<Target> {
  const email = nextEmail();
  await update(s, await signUp(s, 'email', email), set);
  return same(email);
}
const CONFIRM_EMAIL = 'email_confirmed_at = coalesce(email_confirmed_at, now())';
const SSO = 'sso:11111111-1111-1111-1111-111111111111';

const emailStates = {
  unknown: async () => same(nextEmail()),
  confirmed: (s) => emailUser(s, CONFIRM_EMAIL),
  unconfirmed: (s) => emailUser(s, 'email_confirmed_at = null'),
  banned: (s) => emailUser(s, `${CONFIRM_EMAIL}, banned_until = now() + interval '1 day'`),
  noPassword: (s) => emailUser(s, `${CONFIRM_EMAIL}, encrypted_password = null`),
  invited: async (s) => {
    const email = nextEmail();
    const res = await s.api.request('POST', '/invite', { body: { email, data: { plan: 'gold' } }, token: await adminToken() });
    if (res.status !== 200) throw new Error(`invite: ${res.status} ${res.text}`);
    await update(s, res.body.id, `invited_at = now() - interval '1 day', confirmation_sent_at = now() - interval '1 day'`);
    return same(email);
  },
  ssoOnly: async (s) => {
    const email = nextEmail();
    const {
      rows: [user],
    } = await s.api.db.query(
      `insert into users (aud, role, email, email_confirmed_at, is_sso_user, raw_app_meta_data, raw_user_meta_data)
       values ('authenticated', 'authenticated', $1, now(), true, $2, '{}') returning id`,
      [email, { provider: SSO, providers: [SSO] }],
    );
    await s.api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, $4)`, [
      `subject-${counter}`,
      user.id,
      { sub: `subject-${counter}`, email },
      SSO,
    ]);
    return same(email);
  },
  // An anonymous user has no address; one that asked for this one has it pending as email_change.
  anonymousPending: async (s) => {
    const email = nextEmail();
    const anonymous = await s.api.request('POST', '/signup', { body: {} });
    await update(s, anonymous.body.user.id, `email_change = '${email}', email_change_sent_at = now() - interval '1 day'`);
    return same(email);
  },
  softDeleted: async (s) => {
    const email = nextEmail();
    const id = await signUp(s, 'email', email);
    await update(s, id, CONFIRM_EMAIL);
    await deleteUser(s, id, true);
    return same(email);
  },
  hardDeleted: async (s) => {
    const email = nextEmail();
    await deleteUser(s, await signUp(s, 'email', email), false);
    return same(email);
  },
  upperUnknown: async () => {
    const email = nextEmail();
    return { probe: email.toUpperCase(), address: email };
  },
  upperConfirmed: async (s) => {
    const { address } = await emailUser(s, CONFIRM_EMAIL);
    return { probe: address.toUpperCase(), address };
  },
  spacedUnknown: async () => {
    const email = nextEmail();
    return { probe: `  ${email} `, address: email };
  },
  spacedConfirmed: async (s) => {
    const { address } = await emailUser(s, CONFIRM_EMAIL);
    return { probe: `  ${address} `, address };
  },
} satisfies Record<string, State>;
type EmailState = keyof typeof emailStates;

async function phoneUser(s: MailStack, set: string): Promise<Target> {
  const phone = nextPhone();
  await update(s, await signUp(s, 'phone', phone), set);
  return same(phone);
}
const CONFIRM_PHONE = 'phone_confirmed_at = coalesce(phone_confirmed_at, now())';
const spaced = (phone: string) => `+${phone[0]} ${phone.slice(1, 4)} ${phone.slice(4)}`;

const phoneStates = {
  unknown: async () => same(nextPhone()),
  confirmed: (s) => phoneUser(s, CONFIRM_PHONE),
  unconfirmed: (s) => phoneUser(s, 'phone_confirmed_at = null'),
  banned: (s) => phoneUser(s, `${CONFIRM_PHONE}, banned_until = now() + interval '1 day'`),
  noPassword: (s) => phoneUser(s, `${CONFIRM_PHONE}, encrypted_password = null`),
  pendingChange: async (s) => {
    const phone = nextPhone();
    const { address } = await phoneUser(s, CONFIRM_PHONE);
    await s.api.db.query(`update users set phone_change = $2, phone_change_sent_at = now() - interval '1 day' where phone = $1`, [
      address,
      phone,
    ]);
    return same(phone);
  },
  softDeleted: async (s) => {
    const phone = nextPhone();
    await deleteUser(s, await signUp(s, 'phone', phone), true);
    return same(phone);
  },
  formattedUnknown: async () => {
    const phone = nextPhone();
    return { probe: spaced(phone), address: phone };
  },
  formattedConfirmed: async (s) => {
    const { address } = await phoneUser(s, CONFIRM_PHONE);
    return { probe: spaced(address), address };
  },
} satisfies Record<string, State>;
type PhoneState = keyof typeof phoneStates;

type Probe = (s: MailStack, address: string) => Promise<{ status: number; headers: Headers; text: string }>;
const post =
  (path: string, body: (address: string) => Record<string, unknown>): Probe =>
  (s, address) =>
    s.api.request('POST', path, { body: body(address) });

const emailProbes = {
  signup: post('/signup', (email) => ({ email, password: PASSWORD, data: { plan: 'free' } })),
  recover: post('/recover', (email) => ({ email })),
  otp: post('/otp', (email) => ({ email })),
  otpWithoutSignup: post('/otp', (email) => ({ email, create_user: false })),
  magiclink: post('/magiclink', (email) => ({ email })),
  resendSignup: post('/resend', (email) => ({ type: 'signup', email })),
  resendEmailChange: post('/resend', (email) => ({ type: 'email_change', email })),
  passwordRight: post('/token?grant_type=password', (email) => ({ email, password: PASSWORD })),
  passwordWrong: post('/token?grant_type=password', (email) => ({ email, password: 'Wrong-password-9' })),
  ...Object.fromEntries(
    ['signup', 'invite', 'magiclink', 'recovery', 'email', 'email_change'].map((type) => [
      `verify:${type}`,
      post('/verify', (email) => ({ type, email, token: '000000' })),
    ]),
  ),
} satisfies Record<string, Probe>;

const phoneProbes = {
  signup: post('/signup', (phone) => ({ phone, password: PASSWORD })),
  otp: post('/otp', (phone) => ({ phone })),
  otpWithoutSignup: post('/otp', (phone) => ({ phone, create_user: false })),
  resendSms: post('/resend', (phone) => ({ type: 'sms', phone })),
  resendPhoneChange: post('/resend', (phone) => ({ type: 'phone_change', phone })),
  passwordRight: post('/token?grant_type=password', (phone) => ({ phone, password: PASSWORD })),
  passwordWrong: post('/token?grant_type=password', (phone) => ({ phone, password: 'Wrong-password-9' })),
  'verify:sms': post('/verify', (phone) => ({ type: 'sms', phone, token: '000000' })),
  'verify:phone_change': post('/verify', (phone) => ({ type: 'phone_change', phone, token: '000000' })),
} satisfies Record<string, Probe>;

/** One answer, with what differs between any two requests masked: ids, times, tokens, the address itself. */
interface Answer {
  status: number;
  body: string;
  headers: string;
  /** subjects of the mails to the address, and 'sms' per text message to it */
  sent: string[];
}

function masked(text: string, address: string): string {
  return text
    .replace(new RegExp(address.replace(/[.+]/g, '\\$&'), 'gi'), '<address>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<jwt>')
    .replace(/"(refresh_token|message_id)":"[^"]+"/g, '"$1":"<token>"')
    .replace(/"expires_at":\d+/g, '"expires_at":0');
}

/** Every header but Date; Content-Length only where no timestamp in the body can change it. */
function headersOf(headers: Headers, body: string): string {
  const timed = body.includes('<time>');
  return [...headers.entries()]
    .filter(([name]) => name !== 'date' && !(timed && name === 'content-length'))
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
}

async function answer(s: MailStack, state: State, probe: Probe): Promise<Answer> {
  const { probe: value, address } = await state(s);
  const mails = () => s.smtp.mails.filter((m) => m.to === address).map((m) => m.subject);
  const texts = () => s.sms!.messages.filter((m) => m.to === address).map(() => 'sms');
  const before = { mails: mails().length, texts: texts().length };
  const res = await probe(s, value);
  const body = masked(res.text, address);
  // Mail and SMS are handed over before the answer is written (delivery/sending-tx.ts).
  return {
    status: res.status,
    body,
    headers: headersOf(res.headers, body),
    sent: [...mails().slice(before.mails), ...texts().slice(before.texts)],
  };
}

/** Each probe's answer in each state, the states of one probe asked concurrently (each has its own address). */
async function survey<S extends string>(
  s: MailStack,
  states: Record<S, State>,
  probes: Record<string, Probe>,
): Promise<Record<string, Record<S, Answer>>> {
  const results: Record<string, Record<S, Answer>> = {};
  for (const [name, probe] of Object.entries(probes)) {
    const entries = await Promise.all(
      (Object.entries(states) as Array<[S, State]>).map(async ([state, make]) => [state, await answer(s, make, probe)] as const),
    );
    results[name] = Object.fromEntries(entries) as Record<S, Answer>;
  }
  return results;
}

const plainEmail = await survey(plain, emailStates, emailProbes);
const autoconfirmEmail = await survey(autoconfirm, emailStates, emailProbes);
const plainPhone = await survey(plain, phoneStates, phoneProbes);
const autoconfirmPhone = await survey(autoconfirm, phoneStates, phoneProbes);
const surveys = [
  ['email', plainEmail],
  ['email with autoconfirm', autoconfirmEmail],
  ['phone', plainPhone],
  ['phone with autoconfirm', autoconfirmPhone],
] as const;

/** States whose answers must equal `reference`'s for every probe of a survey. */
function sameAs(t: Test, results: Record<string, Record<string, Answer>>, reference: string, states: string[]): void {
  for (const probe of Object.keys(results)) {
    for (const state of states) t.strictSame(results[probe][state], results[probe][reference], `${probe}: ${state} as ${reference}`);
  }
}

const UNKNOWN_EMAILS: EmailState[] = ['ssoOnly', 'anonymousPending', 'softDeleted', 'hardDeleted', 'upperUnknown', 'spacedUnknown'];
const UNKNOWN_PHONES: PhoneState[] = ['pendingChange', 'softDeleted', 'formattedUnknown'];

t.test('an address no account signs in with answers as an unknown one, everywhere', async (t) => {
  // An SSO user's address is the IdP's (the original's look-ups leave SSO users out); an anonymous user's
  // pending address and a deleted user's old one belong to no one yet.
  sameAs(t, plainEmail, 'unknown', UNKNOWN_EMAILS);
  sameAs(t, autoconfirmEmail, 'unknown', UNKNOWN_EMAILS);
  sameAs(t, plainPhone, 'unknown', UNKNOWN_PHONES);
  sameAs(t, autoconfirmPhone, 'unknown', UNKNOWN_PHONES);
});

t.test("another letter case, surrounding spaces or a formatted number answer as the account's own address", async (t) => {
  sameAs(t, plainEmail, 'confirmed', ['upperConfirmed', 'spacedConfirmed']);
  sameAs(t, autoconfirmEmail, 'confirmed', ['upperConfirmed', 'spacedConfirmed']);
  sameAs(t, plainPhone, 'confirmed', ['formattedConfirmed']);
  sameAs(t, autoconfirmPhone, 'confirmed', ['formattedConfirmed']);
});

t.test('endpoints that answer the same for every account state', async (t) => {
  const emailProbesAlike = [
    'recover',
    'resendSignup',
    'resendEmailChange',
    'passwordWrong',
    ...Object.keys(emailProbes).filter((p) => p.startsWith('verify:')),
  ];
  const phoneProbesAlike = ['resendPhoneChange', 'passwordWrong', 'verify:sms', 'verify:phone_change'];
  for (const [label, results] of surveys) {
    const probes = label.startsWith('email') ? [...emailProbesAlike, 'magiclink'] : phoneProbesAlike;
    for (const probe of probes) {
      const { unknown, ...others } = results[probe] as Record<string, Answer>;
      for (const [state, other] of Object.entries(others)) {
        const { sent: _sent, ...shown } = other;
        const { sent: _unknownSent, ...unknownShown } = unknown;
        t.strictSame(shown, unknownShown, `${label} ${probe}: ${state} answers as unknown`);
      }
    }
  }
  t.strictSame(plainEmail.recover.unknown, { ...plainEmail.recover.unknown, status: 200, body: '{}', sent: [] });
  t.strictSame(plainEmail.recover.confirmed.sent, ['Reset Your Password']);
  t.strictSame(plainEmail.recover.banned.sent, ['Reset Your Password'], 'the original mails banned users too');
  t.strictSame(
    plainEmail['verify:email'].confirmed.body,
    '{"code":403,"error_code":"otp_expired","msg":"Token has expired or is invalid"}',
  );
  // Without autoconfirm /otp and /magiclink always answer {}: a confirmed address gets a magic link, any
  // other a confirmation mail that signs in just the same.
  for (const probe of ['otp', 'magiclink']) {
    for (const [state, a] of Object.entries(plainEmail[probe])) {
      t.equal(a.body, '{}', `${probe} ${state}`);
      t.strictSame(
        a.sent,
        [
          ['confirmed', 'banned', 'noPassword', 'upperConfirmed', 'spacedConfirmed'].includes(state)
            ? 'Your Magic Link'
            : 'Confirm Your Signup',
        ],
        `${probe} ${state} mail`,
      );
    }
  }
});

t.test("sign-up of a confirmed address: a made-up user of the real answer's shape, nothing sent", async (t) => {
  const fresh = JSON.parse(plainEmail.signup.unknown.body);
  for (const state of ['confirmed', 'banned', 'noPassword'] as const) {
    const duplicate = plainEmail.signup[state];
    t.strictSame(duplicate.sent, [], `${state}: nothing sent`);
    const body = JSON.parse(duplicate.body);
    // identities: [] is how the original's answer (and auth-js's documentation) marks a taken address;
    // nothing else of the account shows, its ban included.
    t.strictSame(body, { ...fresh, identities: [] }, `${state}: the new user's answer but for its identities`);
  }
  t.strictSame(plainEmail.signup.unknown.sent, ['Confirm Your Signup']);
  t.strictSame(plainPhone.signup.confirmed.sent, []);
  t.strictSame(JSON.parse(plainPhone.signup.confirmed.body), { ...JSON.parse(plainPhone.signup.unknown.body), identities: [] });
  const taken = { code: 400, error_code: 'user_already_exists', msg: 'User already registered' };
  for (const state of ['confirmed', 'banned', 'noPassword'] as const) {
    t.strictSame(JSON.parse(autoconfirmEmail.signup[state].body), taken, `autoconfirm: ${state}`);
    t.strictSame(JSON.parse(autoconfirmPhone.signup[state].body), taken, `autoconfirm phone: ${state}`);
  }
});

t.test('under autoconfirm a pending account is not signed in by a sign-up: the one answer that differs from the original', async (t) => {
  // The original confirms the pending account and answers a session, as for a new address, without checking
  // the password: a takeover (docs/differences.md#security). Here the confirmation goes again to the owner,
  // and the answer is that user (its own identity only), which tells a pending account from a new address.
  for (const [label, results, identity] of [
    ['email', autoconfirmEmail, 'email'],
    ['phone', autoconfirmPhone, 'phone'],
  ] as const) {
    t.ok(JSON.parse(results.signup.unknown.body).access_token, `${label}: a new address gets a session`);
    const pending = JSON.parse(results.signup.unconfirmed.body);
    t.notOk(pending.access_token, `${label}: a pending one does not`);
    t.strictSame(
      pending.identities.map((i: { provider: string }) => i.provider),
      [identity],
      label,
    );
    t.equal(results.signup.unconfirmed.sent.length, 1, `${label}: the confirmation is sent again`);
  }
  const invited = JSON.parse(autoconfirmEmail.signup.invited.body);
  t.strictSame([invited.user_metadata, invited.identities, invited.access_token], [{}, [], undefined], 'nothing of the invitation shows');
});

t.test("create_user false: otp_disabled for an unknown address, as the original's deliberate answer", async (t) => {
  const disabled = '{"code":422,"error_code":"otp_disabled","msg":"Signups not allowed for otp"}';
  for (const [label, results] of surveys) {
    t.equal(results.otpWithoutSignup.unknown.body, disabled, label);
    t.strictSame(results.otpWithoutSignup.unknown.sent, [], label);
    t.equal(results.otpWithoutSignup.confirmed.status, 200, label);
    t.equal(results.otpWithoutSignup.confirmed.sent.length, 1, label);
  }
});

t.test('password sign-in: the account shows only to whoever knows its password', async (t) => {
  const refusal = (code: string, msg: string) => JSON.stringify({ code: 400, error_code: code, msg });
  const expected = {
    unknown: refusal('invalid_credentials', 'Invalid login credentials'),
    noPassword: refusal('invalid_credentials', 'Invalid login credentials'),
    unconfirmed: refusal('email_not_confirmed', 'Email not confirmed'),
    // After the password: docs/differences.md#security (the original checks the ban first).
    banned: refusal('user_banned', 'User is banned'),
  };
  for (const [state, body] of Object.entries(expected)) t.equal(plainEmail.passwordRight[state as EmailState].body, body, state);
  t.equal(plainPhone.passwordRight.unconfirmed.body, refusal('phone_not_confirmed', 'Phone not confirmed'));
  t.equal(plainEmail.passwordRight.confirmed.status, 200);
  for (const [label, results] of surveys) {
    for (const [state, a] of Object.entries(results.passwordWrong)) t.equal(a.body, expected.unknown, `${label} ${state}`);
  }
});

t.test('odd input is refused without internals in the answer', async (t) => {
  const { api } = plain;
  const { address: known } = await emailUser(plain, CONFIRM_EMAIL);
  const bodies: Array<[string, unknown]> = [];
  for (const email of [
    'a\u0000@example.com',
    '\ud800@example.com',
    'x'.repeat(300) + '@example.com',
    12,
    ['a@example.com'],
    { $ne: null },
    "a'b@ex",
    `${known}\n`,
  ]) {
    for (const path of ['/signup', '/recover', '/otp', '/magiclink', '/token?grant_type=password'])
      bodies.push([path, { email, password: PASSWORD }]);
    bodies.push(
      ['/otp', { email, create_user: false }],
      ['/resend', { type: 'signup', email }],
      ['/verify', { type: 'email', email, token: '1' }],
    );
  }
  for (const phone of ['1\u00004155550100', '٤١٥٥٥٥٠١٠٠', '1'.repeat(40), 14155550100, '+']) {
    for (const path of ['/signup', '/otp', '/token?grant_type=password']) bodies.push([path, { phone, password: PASSWORD }]);
    bodies.push(['/resend', { type: 'sms', phone }], ['/verify', { type: 'sms', phone, token: '1' }]);
  }
  bodies.push(
    ['/signup', { email: nextEmail(), password: PASSWORD, data: { a: 'b\u0000' } }],
    ['/verify', { type: 'signup', token_hash: 'x'.repeat(100_000) }],
    ['/token?grant_type=password', { email: known, password: 'x'.repeat(100_000) }],
  );
  const raw = [
    '{"email":"a@example.com","password":',
    '[1]',
    `{"email":"${known}","password":"\\ud800\\udc00\\ud800"}`,
    '{"type":"signup","token_hash":"\\ud800"}',
  ];
  // One at a time: concurrent requests for one address are the race tests' business.
  const answers = [];
  for (const [path, body] of bodies) answers.push(await api.request('POST', path, { body }));
  for (const text of raw)
    answers.push(await api.request('POST', '/verify', { raw: text, headers: { 'content-type': 'application/json' } }));
  answers.push(
    await api.request('GET', '/verify?type=signup&token=%ff%fe'),
    await api.request('GET', '/authorize?provider=nonexistent'),
    await api.request('POST', '/factors/00000000-0000-0000-0000-000000000000/challenge', { body: {} }),
  );
  for (const res of answers) {
    t.ok(res.status < 500, `${res.status} ${res.text.slice(0, 120)}`);
    t.notMatch(res.text, /SELECT|INSERT|UPDATE |pg_|\$argon2|\$2[aby]\$|\/work|node_modules|\bat \S+ \(|\.ts:\d|\.js:\d/, 'no internals');
  }
});
