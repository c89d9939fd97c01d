// GET and POST /verify for every type (REFERENCE §2.3): success, each error row, expired and reused
// tokens (rows aged in SQL), and the attempt limit on typed codes.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { fragmentOf, insertUser, plantToken } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { inOrderBehindUserLock } from './helpers/row-lock.js';

const api = await startTestService({
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC1',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'x',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
  AUTH_URI_ALLOW_LIST: 'com.example.app://**',
});
t.teardown(() => api.stop());

let n = 0;
const nextEmail = () => `v${++n}@example.com`;
const post = (body: unknown) => api.request('POST', '/verify', { body });
const get = (query: Record<string, string>) => api.request('GET', `/verify?${new URLSearchParams(query)}`);
const LINK_INVALID = {
  error: 'access_denied',
  error_code: 'otp_expired',
  error_description: 'Email link is invalid or has expired',
  sb: '',
};
const CODE_403 = { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' };
const LINK_403 = { code: 403, error_code: 'otp_expired', msg: 'Email link is invalid or has expired' };
const ottCount = async (userId: string) => (await api.db.query('select 1 from one_time_tokens where user_id = $1', [userId])).rowCount;

// Each email type: the token type it consumes and the user it starts from.
const EMAIL_TYPES = [
  { type: 'signup', tokenType: 'confirmation_token', user: {} },
  { type: 'invite', tokenType: 'confirmation_token', user: { invited: true } },
  { type: 'magiclink', tokenType: 'recovery_token', user: { confirmed: true } },
  { type: 'recovery', tokenType: 'recovery_token', user: { confirmed: true } },
];

for (const { type, tokenType, user } of EMAIL_TYPES) {
  t.test(`GET ${type}: 303 to redirect_to with the session and type in the fragment; the link works once`, async (t) => {
    const email = nextEmail();
    const id = await insertUser(api.db, { email, ...user });
    const { linkToken } = await plantToken(api.db, id, tokenType, email);
    const res = await get({ type, token: linkToken, redirect_to: 'http://localhost:3000/after' });
    t.equal(res.status, 303);
    const location = res.headers.get('location')!;
    t.ok(location.startsWith('http://localhost:3000/after#'), location);
    const fragment = fragmentOf(location);
    t.strictSame(Object.keys(fragment), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type']);
    t.equal(fragment.type, type);
    t.equal(fragment.expires_in, '3600');
    const me = await api.request('GET', '/user', { token: fragment.access_token });
    t.equal(me.body.id, id);
    t.ok(me.body.email_confirmed_at, 'the address is confirmed');
    if ('confirmed' in user) {
      // A sign-in by link of a confirmed user changes nothing of it, as the original's recovery.
      t.equal(me.body.identities[0].identity_data.email_verified, false, 'the identity is left as it was');
      t.strictSame(me.body.user_metadata, {}, 'user_metadata is left as it was');
    } else {
      t.equal(me.body.identities[0].identity_data.email_verified, true);
      t.equal(me.body.user_metadata.email_verified, true);
    }
    t.equal(await ottCount(id), 0, 'every one-time token of the user is spent');
    const again = await get({ type, token: linkToken });
    t.strictSame(fragmentOf(again.headers.get('location')), LINK_INVALID);
    t.ok(again.headers.get('location')!.startsWith('http://localhost:3000#'), 'no redirect_to: SITE_URL');
  });

  t.test(`POST ${type}: with token + email, and with token_hash; type in the body`, async (t) => {
    const email = nextEmail();
    const id = await insertUser(api.db, { email, ...user });
    const { code } = await plantToken(api.db, id, tokenType, email);
    const res = await post({ type, token: code, email: email.toUpperCase() });
    t.equal(res.status, 200);
    t.equal(res.body.type, type);
    t.equal(res.body.token_type, 'bearer');
    t.equal(res.body.user.id, id);
    t.strictSame(await post({ type, token: code, email }).then((r) => r.body), CODE_403, 'reused code');
    const { linkToken } = await plantToken(api.db, id, tokenType, email);
    const byHash = await post({ type, token_hash: linkToken });
    t.equal(byHash.status, 200);
    t.equal(byHash.body.user.id, id);
    t.strictSame((await post({ type, token_hash: linkToken })).body, LINK_403, 'reused link token');
  });

  t.test(`${type}: an expired token is refused on GET and POST`, async (t) => {
    const email = nextEmail();
    const id = await insertUser(api.db, { email, ...user });
    const { code, linkToken } = await plantToken(api.db, id, tokenType, email);
    await api.db.query("update one_time_tokens set created_at = now() - interval '1 day 1 minute' where user_id = $1", [id]);
    t.strictSame(fragmentOf((await get({ type, token: linkToken })).headers.get('location')), LINK_INVALID);
    t.strictSame((await post({ type, token: code, email })).body, CODE_403);
    t.strictSame((await post({ type, token_hash: linkToken })).body, LINK_403);
    t.equal(await ottCount(id), 1, 'the refused attempts changed nothing but the counter');
  });
}

t.test('HEAD on a link (a mail scanner, a link preview) is 405 and spends nothing; the GET after it still signs in', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email, confirmed: true });
  const { linkToken } = await plantToken(api.db, id, 'recovery_token', email);
  const head = await api.request('HEAD', `/verify?${new URLSearchParams({ type: 'magiclink', token: linkToken })}`);
  t.equal(head.status, 405);
  t.equal(head.headers.get('allow'), 'GET, POST');
  t.equal(head.headers.get('location'), null, 'no session in a Location');
  t.equal(await ottCount(id), 1, 'the link is not spent');
  const res = await get({ type: 'magiclink', token: linkToken });
  t.equal(res.status, 303);
  t.ok(fragmentOf(res.headers.get('location')).access_token, 'the link still signs in');
  for (const path of ['/reauthenticate', '/authorize?provider=github', '/callback', '/user/identities/authorize']) {
    t.equal((await api.request('HEAD', path)).status, 405, `HEAD ${path}`);
  }
  t.equal((await api.request('HEAD', '/settings')).status, 200, 'a GET that only reads still answers HEAD');
});

t.test('POST email: the code of a confirmation or of a recovery mail', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const { code } = await plantToken(api.db, id, 'confirmation_token', email);
  const res = await post({ type: 'email', token: code, email });
  t.equal(res.status, 200);
  t.equal(res.body.type, 'email');
  t.ok(res.body.user.email_confirmed_at);
  const recovery = await plantToken(api.db, id, 'recovery_token', email);
  t.equal((await post({ type: 'email', token_hash: recovery.linkToken })).status, 200);
});

t.test(
  "a code is the user's of that address in the request's audience (X-JWT-AUD); a token_hash names its user whatever it is",
  async (t) => {
    const email = nextEmail();
    const id = await insertUser(api.db, { email });
    const { code } = await plantToken(api.db, id, 'confirmation_token', email);
    const foreign = await api.request('POST', '/verify', {
      body: { type: 'email', token: code, email },
      headers: { 'X-JWT-AUD': 'another-audience' },
    });
    t.strictSame(foreign.body, CODE_403, 'the user is in JWT_AUD, the request asks for another audience');
    t.equal(await ottCount(id), 1, 'the token is left unspent');
    const own = await api.request('POST', '/verify', {
      body: { type: 'email', token: code, email },
      headers: { 'X-JWT-AUD': 'authenticated' },
    });
    t.equal(own.status, 200, "the same code in the user's audience");
    const again = await plantToken(api.db, id, 'recovery_token', email);
    const byHash = await api.request('POST', '/verify', {
      body: { type: 'email', token_hash: again.linkToken },
      headers: { 'X-JWT-AUD': 'another-audience' },
    });
    t.equal(byHash.status, 200, 'a token_hash is not looked up by address, so no audience applies, as in the original');
  },
);

t.test('POST sms: the code confirms the phone; no type in the body', async (t) => {
  const id = await insertUser(api.db, { phone: '15550009999' });
  const { code } = await plantToken(api.db, id, 'confirmation_token', '15550009999');
  t.strictSame((await post({ type: 'sms', token: '000000', phone: '+15550009998' })).body, CODE_403, 'another number');
  const res = await post({ type: 'sms', token: code, phone: '+1 555 000 9999' });
  t.equal(res.status, 200);
  t.notOk('type' in res.body);
  t.ok(res.body.user.phone_confirmed_at);
  const aged = await plantToken(api.db, id, 'confirmation_token', '15550009999');
  await api.db.query("update one_time_tokens set created_at = now() - interval '61 seconds' where user_id = $1", [id]);
  t.strictSame((await post({ type: 'sms', token: aged.code, phone: '+15550009999' })).body, CODE_403, 'SMS_OTP_EXP is 60 s');
});

t.test('POST sms for a confirmed phone: a sign-in by code confirms it again, now, as the original', async (t) => {
  const id = await insertUser(api.db, { phone: '15550009977', confirmed: true });
  await api.db.query("update users set phone_confirmed_at = '2024-01-01T00:00:00Z' where id = $1", [id]);
  const { code } = await plantToken(api.db, id, 'confirmation_token', '15550009977');
  const res = await post({ type: 'sms', token: code, phone: '15550009977' });
  t.equal(res.status, 200);
  t.ok(Date.parse(res.body.user.phone_confirmed_at) > Date.parse('2025-01-01T00:00:00Z'), 'moved to now');
});

t.test('a token proves only the address it was sent to: an SMS code by link confirms no email, a mail link no phone', async (t) => {
  const email = 'two-addresses@example.com';
  const phone = '15550009955';
  const id = await insertUser(api.db, { email, phone });
  await api.db.query('update users set phone_confirmed_at = now() where id = $1', [id]);
  const sms = await plantToken(api.db, id, 'confirmation_token', phone);
  for (const type of ['signup', 'email', 'magiclink', 'invite']) {
    const res = await post({ type, token_hash: sms.linkToken });
    t.strictSame([res.status, res.body.error_code], [403, 'otp_expired'], `the SMS code's link as type ${type}`);
  }
  const { rows } = await api.db.query('select email_confirmed_at from users where id = $1', [id]);
  t.equal(rows[0].email_confirmed_at, null, 'the email stays unconfirmed');
  const mail = await plantToken(api.db, id, 'confirmation_token', email);
  const confirmed = await post({ type: 'signup', token_hash: mail.linkToken });
  t.equal(confirmed.status, 200, 'the mail link confirms the email it was sent to');
  t.ok(confirmed.body.user.email_confirmed_at);
  // A link sent to an address the user has since left confirms nothing.
  const moved = await plantToken(api.db, id, 'recovery_token', email);
  await api.db.query("update users set email = 'moved-away@example.com' where id = $1", [id]);
  const stale = await post({ type: 'recovery', token_hash: moved.linkToken });
  t.strictSame([stale.status, stale.body.error_code], [403, 'otp_expired'], 'a link to the old address');
});

t.test("a confirmation marks every identity carrying the address verified, an OAuth one too; a recovery only the email's", async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const github = (userId: string, subject: string) =>
    api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
      subject,
      userId,
      { sub: subject, email, email_verified: false },
    ]);
  await github(id, `gh-${id}`);
  const { code } = await plantToken(api.db, id, 'confirmation_token', email);
  t.equal((await post({ type: 'signup', token: code, email })).status, 200);
  const verified = async (userId: string) =>
    (
      await api.db.query("select provider, identity_data -> 'email_verified' as v from identities where user_id = $1 order by provider", [
        userId,
      ])
    ).rows;
  t.strictSame(await verified(id), [
    { provider: 'email', v: true },
    { provider: 'github', v: true },
  ]);
  const other = nextEmail();
  const recovering = await insertUser(api.db, { email: other });
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
    `gh-${recovering}`,
    recovering,
    { sub: `gh-${recovering}`, email: other, email_verified: false },
  ]);
  const recovery = await plantToken(api.db, recovering, 'recovery_token', other);
  t.equal((await post({ type: 'recovery', token: recovery.code, email: other })).status, 200);
  t.strictSame(await verified(recovering), [
    { provider: 'email', v: true },
    { provider: 'github', v: false },
  ]);
});

t.test('a code is verified on its own channel only: a mail type by the email, a phone type by the phone, as the original', async (t) => {
  const email = nextEmail();
  const mailUser = await insertUser(api.db, { email });
  const mailed = await plantToken(api.db, mailUser, 'confirmation_token', email);
  t.strictSame((await post({ type: 'sms', token: mailed.code, email })).body, CODE_403, "the mail's code as an SMS code");
  const phone = '15550007777';
  const phoneUser = await insertUser(api.db, { phone });
  const texted = await plantToken(api.db, phoneUser, 'confirmation_token', phone);
  for (const type of ['signup', 'email', 'magiclink']) {
    t.strictSame((await post({ type, token: texted.code, phone: `+${phone}` })).body, CODE_403, `the SMS code as ${type}`);
  }
  const { rows } = await api.db.query('select id, email_confirmed_at, phone_confirmed_at from users where id = any($1)', [
    [mailUser, phoneUser],
  ]);
  t.ok(
    rows.every((r: any) => r.email_confirmed_at === null && r.phone_confirmed_at === null),
    'neither user confirmed anything',
  );
  t.equal((await post({ type: 'signup', token: mailed.code, email })).status, 200, 'each code still works where it went');
  t.equal((await post({ type: 'sms', token: texted.code, phone: `+${phone}` })).status, 200);
});

t.test('each verification is audited as the original audits it', async (t) => {
  const entries = async (id: string) =>
    (await api.db.query(`select payload from audit_log_entries where payload->>'actor_id' = $1 order by created_at`, [id])).rows.map(
      (r: any) => [r.payload.action, r.payload.traits],
    );
  const unconfirmed = nextEmail();
  const a = await insertUser(api.db, { email: unconfirmed });
  t.equal(
    (await post({ type: 'recovery', token: (await plantToken(api.db, a, 'recovery_token', unconfirmed)).code, email: unconfirmed })).status,
    200,
  );
  t.strictSame(await entries(a), [['user_signedup', { provider: 'email' }]], 'a recovery link for an address never confirmed: a sign-up');
  t.equal(
    (await post({ type: 'magiclink', token: (await plantToken(api.db, a, 'recovery_token', unconfirmed)).code, email: unconfirmed }))
      .status,
    200,
  );
  t.strictSame((await entries(a))[1], ['login', undefined], 'then a login, with no traits');
  t.equal(
    (await post({ type: 'signup', token: (await plantToken(api.db, a, 'confirmation_token', unconfirmed)).code, email: unconfirmed }))
      .status,
    200,
  );
  t.strictSame((await entries(a))[2], ['user_signedup', { provider: 'email' }], 'a confirmation is a sign-up, each time');

  const phone = '15550006666';
  const p = await insertUser(api.db, { phone, confirmed: true });
  t.equal(
    (await post({ type: 'sms', token: (await plantToken(api.db, p, 'confirmation_token', phone)).code, phone: `+${phone}` })).status,
    200,
  );
  t.strictSame(
    await entries(p),
    [['user_signedup', { provider: 'phone' }]],
    'a phone code is a sign-up by phone, even for a confirmed number',
  );
  await api.db.query(`update users set phone_change = '15550006667' where id = $1`, [p]);
  const changed = await post({
    type: 'phone_change',
    token: (await plantToken(api.db, p, 'phone_change_token', '15550006667')).code,
    phone: '+15550006667',
  });
  t.equal(changed.status, 200);
  t.strictSame((await entries(p))[1], ['user_modified', undefined], 'an address change is a modification');
});

t.test('a token of another type does not verify', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email, confirmed: true });
  const { code, linkToken } = await plantToken(api.db, id, 'recovery_token', email);
  t.strictSame((await post({ type: 'signup', token: code, email })).body, CODE_403);
  t.strictSame(fragmentOf((await get({ type: 'invite', token: linkToken })).headers.get('location')), LINK_INVALID);
});

t.test('the attempt limit: after 5 wrong codes the right one fails too', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const { code } = await plantToken(api.db, id, 'confirmation_token', email, { code: '123456' });
  for (let i = 0; i < 4; i++) t.strictSame((await post({ type: 'signup', token: '654321', email })).body, CODE_403);
  const {
    rows: [row],
  } = await api.db.query('select attempts from one_time_tokens where user_id = $1', [id]);
  t.equal(row.attempts, 4, 'wrong codes are counted and committed');
  t.strictSame((await post({ type: 'signup', token: '111111', email })).body, CODE_403, 'fifth wrong code');
  t.equal(await ottCount(id), 0, 'the token is invalidated');
  t.strictSame((await post({ type: 'signup', token: code, email })).body, CODE_403, 'the right code no longer works');
});

t.test('a banned user: 403 user_banned on POST, in the fragment on GET', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email, confirmed: true, banned: true });
  const { code, linkToken } = await plantToken(api.db, id, 'recovery_token', email);
  t.strictSame((await post({ type: 'recovery', token: code, email })).body, {
    code: 403,
    error_code: 'user_banned',
    msg: 'User is banned',
  });
  t.strictSame(fragmentOf((await get({ type: 'recovery', token: linkToken })).headers.get('location')), {
    error: 'access_denied',
    error_code: 'user_banned',
    error_description: 'User is banned',
    sb: '',
  });
});

t.test('POST validation rows', async (t) => {
  const rows: Array<[unknown, number, string, string]> = [
    [{ token: '1' }, 400, 'validation_failed', 'Verify requires a verification type'],
    [{ type: 'signup' }, 400, 'validation_failed', 'Verify requires either a token or a token hash'],
    [{ type: 'signup', token: '1', token_hash: 'x' }, 400, 'validation_failed', 'Verify requires either a token or a token hash'],
    [{ type: 'signup', token: '1' }, 400, 'validation_failed', 'Only an email address or phone number should be provided on verify'],
    [
      { type: 'signup', token: '1', email: 'a@example.com', phone: '+15550001234' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on verify',
    ],
    [
      { type: 'signup', token_hash: 'x', email: 'a@example.com' },
      400,
      'validation_failed',
      'Only the token_hash and type should be provided',
    ],
    [
      { type: 'signup', token_hash: 'x', redirect_to: 'http://localhost:3000' },
      400,
      'validation_failed',
      'Only the token_hash and type should be provided',
    ],
    [{ type: 'signup', token: '1', email: 'not-an-email' }, 422, 'validation_failed', 'Invalid email format'],
    [{ type: 'bogus', token_hash: 'x' }, 400, 'validation_failed', 'Invalid email verification type'],
    [{ type: 'sms', token_hash: 'x' }, 400, 'validation_failed', 'Invalid email verification type'],
    [{ type: 'phone_change', token_hash: 'x' }, 400, 'validation_failed', 'Invalid email verification type'],
    [{ type: 'bogus', token: '123456', email: 'a@example.com' }, 403, 'otp_expired', 'Token has expired or is invalid'],
    [{ type: 'signup', token: '123456', email: 'nobody@example.com' }, 403, 'otp_expired', 'Token has expired or is invalid'],
    [{ type: 'signup', token_hash: 'f'.repeat(56) }, 403, 'otp_expired', 'Email link is invalid or has expired'],
  ];
  for (const [body, status, code, msg] of rows) {
    const res = await post(body);
    t.strictSame({ status: res.status, body: res.body }, { status, body: { code: status, error_code: code, msg } }, JSON.stringify(body));
  }
});

t.test('GET email: the link of a confirmation or recovery mail signs in, named signup or magiclink as the token it spent', async (t) => {
  for (const [tokenType, user, named] of [
    ['confirmation_token', {}, 'signup'],
    ['recovery_token', { confirmed: true }, 'magiclink'],
  ] as const) {
    const email = nextEmail();
    const id = await insertUser(api.db, { email, ...user });
    const { linkToken } = await plantToken(api.db, id, tokenType, email);
    const res = await get({ type: 'email', token: linkToken });
    const fragment = fragmentOf(res.headers.get('location'));
    t.equal(fragment.type, named, tokenType);
    const me = await api.request('GET', '/user', { token: fragment.access_token });
    t.equal(me.body.id, id);
    t.ok(me.body.email_confirmed_at, 'the address is confirmed');
    t.strictSame(fragmentOf((await get({ type: 'email', token: linkToken })).headers.get('location')), LINK_INVALID, 'once');
  }
});

t.test('GET: missing parameters are JSON errors; other failures redirect', async (t) => {
  const noType = await get({ token: 'x' });
  t.equal(noType.status, 400);
  t.strictSame(noType.body, { code: 400, error_code: 'validation_failed', msg: 'Verify requires a verification type' });
  const noToken = await get({ type: 'signup' });
  t.strictSame(noToken.body, { code: 400, error_code: 'validation_failed', msg: 'Verify requires a token or a token hash' });
  const unknown = await get({ type: 'bogus', token: 'x' });
  t.equal(unknown.status, 303);
  t.strictSame(fragmentOf(unknown.headers.get('location')), {
    error: 'invalid_request',
    error_code: 'validation_failed',
    error_description: 'Invalid email verification type',
    sb: '',
  });
  for (const type of ['sms', 'phone_change']) {
    const codeOnly = await get({ type, token: 'x' });
    t.strictSame(
      fragmentOf(codeOnly.headers.get('location')),
      { error: 'invalid_request', error_code: 'validation_failed', error_description: 'Invalid email verification type', sb: '' },
      `${type}: phone codes have no links, refused as the original refuses them`,
    );
  }
  t.strictSame(
    fragmentOf((await get({ type: 'email', token: 'f'.repeat(56) })).headers.get('location')),
    LINK_INVALID,
    'email is a link type',
  );
  const wrong = await get({ type: 'signup', token: 'f'.repeat(56), redirect_to: 'https://evil.example/steal' });
  t.equal(
    wrong.headers.get('location'),
    'http://localhost:3000#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
    'a foreign redirect_to falls back to SITE_URL; the exact encoding of the original',
  );
});

t.test('GET: a target’s own fragment stays before the session, as the original appends it; errors replace it', async (t) => {
  const sessionOf = (location: string) => Object.fromEntries(new URLSearchParams(location.slice(location.lastIndexOf('#') + 1)));
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const { linkToken } = await plantToken(api.db, id, 'confirmation_token', email);
  const hashRouted = await get({ type: 'signup', token: linkToken, redirect_to: 'http://localhost:3000/#/welcome' });
  t.equal(hashRouted.status, 303);
  const location = hashRouted.headers.get('location')!;
  t.ok(location.startsWith('http://localhost:3000/#/welcome#access_token='), location);
  t.equal((await api.request('GET', '/user', { token: sessionOf(location).access_token })).body.id, id);

  const refused = await get({ type: 'signup', token: linkToken, redirect_to: 'http://localhost:3000/#/welcome' });
  t.equal(
    refused.headers.get('location'),
    'http://localhost:3000/#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
    'an error replaces the fragment, as the original’s error redirect does',
  );
});

t.test('GET: an allow-list entry ending in ** takes app deep links with a path (the original’s verify_test cases)', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const { linkToken } = await plantToken(api.db, id, 'confirmation_token', email);
  const res = await get({ type: 'signup', token: linkToken, redirect_to: 'com.example.app://sign-in/v2' });
  t.equal(res.status, 303);
  t.ok(res.headers.get('location')!.startsWith('com.example.app://sign-in/v2#access_token='), res.headers.get('location')!);
  const bare = await get({ type: 'signup', token: 'f'.repeat(56), redirect_to: 'com.example.app://' });
  t.ok(bare.headers.get('location')!.startsWith('com.example.app://#error='), 'the app link without a host');
});

t.test('POST invite with password: the invited user gets it and can then sign in with it', async (t) => {
  const email = nextEmail();
  const id = await insertUser(api.db, { email, invited: true });
  const { linkToken } = await plantToken(api.db, id, 'confirmation_token', email);
  const weak = await post({ type: 'invite', token_hash: linkToken, password: '123' });
  t.equal(weak.status, 422);
  t.equal(weak.body.error_code, 'weak_password');
  t.equal(await ottCount(id), 1, 'a refused password leaves the token unspent');
  const res = await post({ type: 'invite', token_hash: linkToken, password: 'chosen-password' });
  t.equal(res.status, 200);
  t.equal(res.body.type, 'invite');
  const login = await api.request('POST', '/token?grant_type=password', { body: { email, password: 'chosen-password' } });
  t.equal(login.status, 200);
  t.equal(login.body.user.id, id);
});

t.test('POST signup with password: an existing password is not replaced', async (t) => {
  const email = nextEmail();
  await api.request('POST', '/signup', { body: { email, password: 'original-password' } });
  const {
    rows: [{ id }],
  } = await api.db.query('select id from users where email = $1', [email]);
  const { code } = await plantToken(api.db, id, 'confirmation_token', email);
  t.equal((await post({ type: 'signup', token: code, email, password: 'other-password' })).status, 200);
  const login = await api.request('POST', '/token?grant_type=password', { body: { email, password: 'original-password' } });
  t.equal(login.status, 200);
});

t.test('verifications of one user at once: one after the other, never a deadlock (500)', async (t) => {
  // Two links of one user: the second finds its token spent by the first, as it would afterwards.
  const email = nextEmail();
  const id = await insertUser(api.db, { email });
  const confirmation = await plantToken(api.db, id, 'confirmation_token', email);
  const recovery = await plantToken(api.db, id, 'recovery_token', email);
  const [signup, recover] = await inOrderBehindUserLock(api.db, id, [
    () => post({ type: 'signup', token_hash: confirmation.linkToken }),
    () => post({ type: 'recovery', token_hash: recovery.linkToken }),
  ]);
  t.equal(signup.status, 200);
  t.strictSame(recover.body, LINK_403);
  // An admin's new address (which voids the user's tokens) queued ahead of a verification of the old one.
  const other = nextEmail();
  const changed = await insertUser(api.db, { email: other });
  const pending = await plantToken(api.db, changed, 'confirmation_token', other);
  const [update, verify] = await inOrderBehindUserLock(api.db, changed, [
    async () => api.request('PUT', `/admin/users/${changed}`, { token: await adminToken(), body: { email: nextEmail() } }),
    () => post({ type: 'signup', token_hash: pending.linkToken }),
  ]);
  t.equal(update.status, 200);
  t.strictSame(verify.body, LINK_403);
  // A repeated sign-up (which replaces the confirmation token) queued behind the verification of that token:
  // it then finds the address confirmed, and answers as for any confirmed address.
  const repeated = nextEmail();
  const pendingUser = await insertUser(api.db, { email: repeated });
  const confirming = await plantToken(api.db, pendingUser, 'confirmation_token', repeated);
  const [confirmed, again] = await inOrderBehindUserLock(api.db, pendingUser, [
    () => post({ type: 'signup', token_hash: confirming.linkToken }),
    () => api.request('POST', '/signup', { body: { email: repeated, password: 'secret99' } }),
  ]);
  t.equal(confirmed.status, 200);
  t.equal(again.status, 200);
  t.strictSame(again.body.identities, [], 'the answer of a confirmed address');
});

t.test("GET: a SITE_URL that is an app's deep link starts the service, and a link without redirect_to lands there", async (t) => {
  const app = await startTestService({ AUTH_SITE_URL: 'io.supabase.app://login-callback' });
  t.teardown(() => app.stop());
  const email = 'deep-link@example.com';
  const id = await insertUser(app.db, { email });
  const { linkToken } = await plantToken(app.db, id, 'confirmation_token', email);
  const res = await app.request('GET', `/verify?${new URLSearchParams({ type: 'signup', token: linkToken })}`);
  t.equal(res.status, 303);
  const location = res.headers.get('location') ?? '';
  t.ok(location.startsWith('io.supabase.app://login-callback#'), location);
  t.ok(fragmentOf(location).access_token, 'with the session');
});
