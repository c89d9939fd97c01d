// GET and POST /verify driven as apps drive them, compared with the original's answers (internal/api/verify.go):
// the links of the mails the service really sends (real SMTP server) followed with GET, auth-js verifyOtp with
// {email, token}, {phone, token} and {token_hash}, PKCE links finished with exchangeCodeForSession, and the
// exact redirects and JSON errors of every type. Rows are aged in SQL for expiry; nothing here waits on a clock.
import t from 'tap';
import { authClient } from './helpers/auth-client.js';
import { startMailStack, linkOf, codeOf, fragmentOf } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import type { CapturedMail } from './helpers/smtp.js';

const ALLOWED = 'http://allowed.example';
const stack = await startMailStack(
  // A lifetime of one hour (the default is a day) that expireTokensOf ages rows past.
  { AUTH_URI_ALLOW_LIST: `${ALLOWED}/**`, AUTH_MAILER_OTP_EXP: '3600' },
  { sms: true },
);
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(() => stack.stop());

const PASSWORD = 'Secret-password-1';
const SECOND_LINK = 'Confirmation link accepted. Please proceed to confirm link sent to the other email';
const LINK_INVALID = {
  error: 'access_denied',
  error_code: 'otp_expired',
  error_description: 'Email link is invalid or has expired',
  sb: '',
};
const CODE_403 = { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' };
const LINK_403 = { code: 403, error_code: 'otp_expired', msg: 'Email link is invalid or has expired' };
const SESSION_KEYS = ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type'];

let n = 0;
const nextEmail = (prefix = 'vb') => `${prefix}${++n}@example.com`;
const follow = (mail: CapturedMail) => api.request('GET', linkOf(mail).path);
const get = (query: string) => api.request('GET', `/verify?${query}`);
const post = (body: unknown) => api.request('POST', '/verify', { body });
const locationOf = (res: { headers: Headers }) => res.headers.get('location') ?? '';
const smsCodeOf = (body: string) => /(\d{6})/.exec(body)![1];

/** Lets an address be sent another mail of a kind at once: the per-user interval is measured from these times. */
const allowAnotherMail = (email: string) =>
  api.db.query('update users set recovery_sent_at = null, confirmation_sent_at = null where email = $1', [email]);

/** An account signed up and confirmed through its confirmation code, as an app does it; its signed-in client. */
async function confirmedAccount(email = nextEmail()) {
  const auth = authClient(api.url);
  t.equal((await auth.signUp({ email, password: PASSWORD })).error, null);
  const { error } = await auth.verifyOtp({ email, token: codeOf(await smtp.waitForMail(email)), type: 'signup' });
  t.equal(error, null);
  return { auth, email };
}

/** Ages every one-time token (and the send times) of an address past MAILER_OTP_EXP (one hour here). */
async function expireTokensOf(email: string) {
  await api.db.query(
    `update one_time_tokens set created_at = now() - interval '2 hours' where user_id = (select id from users where email = $1)`,
    [email],
  );
  await api.db.query(
    `update users set confirmation_sent_at = now() - interval '2 hours', recovery_sent_at = now() - interval '2 hours'
    where email = $1`,
    [email],
  );
}

t.test('a code is compared as typed: surrounding spaces make it a wrong code, as the original hashes it as sent', async (t) => {
  const email = nextEmail();
  const auth = authClient(api.url);
  await auth.signUp({ email, password: PASSWORD });
  const code = codeOf(await smtp.waitForMail(email));
  for (const typed of [` ${code}`, `${code} `, `\t${code}\n`]) {
    const res = await post({ type: 'signup', email, token: typed });
    t.equal(res.status, 403, JSON.stringify(typed));
    t.strictSame(res.body, CODE_403);
  }
  const { data, error } = await auth.verifyOtp({ email, token: code, type: 'signup' });
  t.equal(error, null, 'the code as sent still works');
  t.equal(data.user?.email, email);
});

t.test("a PKCE link's ?code= keeps the target's query as the original writes it back: every value, sorted, Go's escaping", async (t) => {
  const email = nextEmail('pkce');
  const auth = authClient(api.url, { flowType: 'pkce' });
  await auth.signUp({ email, password: PASSWORD, options: { emailRedirectTo: `${ALLOWED}/cb?tag=b&tag=a&p=~me*#/route` } });
  const mail = await smtp.waitForMail(email);
  t.match(linkOf(mail).token, /^pkce_[0-9a-f]{56}$/);
  const res = await follow(mail);
  t.equal(res.status, 303);
  const location = locationOf(res);
  const code = new URL(location).searchParams.get('code')!;
  t.equal(location, `${ALLOWED}/cb?code=${code}&p=~me%2A&tag=b&tag=a#/route`, 'repeated keys kept in order; ~ as is, * escaped');
  const { data, error } = await auth.exchangeCodeForSession(code);
  t.equal(error, null);
  t.equal(data.user?.email, email);
  t.ok(data.user?.email_confirmed_at, 'the link confirmed the address');

  const again = await follow(mail);
  const failed = new URL(locationOf(again));
  t.strictSame(
    Object.fromEntries(failed.searchParams),
    { error: 'access_denied', error_code: 'otp_expired', error_description: 'Email link is invalid or has expired', p: '~me*', tag: 'a' },
    'a PKCE error goes to the query too',
  );
  t.strictSame(failed.searchParams.getAll('tag'), ['b', 'a']);
  t.strictSame(fragmentOf(locationOf(again)), LINK_INVALID, 'and replaces the fragment');
});

t.test('secure email change by links: the first answers the message (the query written back sorted), the second the session', async (t) => {
  const { auth, email } = await confirmedAccount();
  const newEmail = nextEmail('changed');
  const { error } = await auth.updateUser({ email: newEmail }, { emailRedirectTo: `${ALLOWED}/ec?z=1&a=2` });
  t.equal(error, null);
  const current = await smtp.waitForMail(email);
  const next = await smtp.waitForMail(newEmail);
  t.equal(linkOf(current).type, 'email_change');

  const first = await follow(current);
  t.equal(first.status, 303);
  t.equal(locationOf(first), `${ALLOWED}/ec?a=2&z=1#message=${SECOND_LINK.replace(/ /g, '+')}&sb=`);
  t.strictSame(fragmentOf(locationOf(await follow(current))), LINK_INVALID, 'the first link works once');

  const second = await follow(next);
  const fragment = fragmentOf(locationOf(second));
  t.ok(locationOf(second).startsWith(`${ALLOWED}/ec?z=1&a=2#access_token=`), 'a session is appended to the target as it stands');
  t.strictSame(Object.keys(fragment), SESSION_KEYS);
  t.equal(fragment.type, 'email_change');
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.body.email, newEmail);
  t.strictSame(fragmentOf(locationOf(await follow(next))), LINK_INVALID);
});

t.test('secure email change by codes: each code with the address it went to; the first half answers {msg, code: "200"}', async (t) => {
  const { auth, email } = await confirmedAccount();
  const newEmail = nextEmail('changed');
  await auth.updateUser({ email: newEmail });
  const currentCode = codeOf(await smtp.waitForMail(email));
  const newCode = codeOf(await smtp.waitForMail(newEmail));
  t.strictSame(
    (await post({ type: 'email_change', email: newEmail, token: currentCode })).body,
    CODE_403,
    'the current code with the new address',
  );
  const first = await post({ type: 'email_change', email: email.toUpperCase(), token: currentCode });
  t.equal(first.status, 200);
  t.strictSame(first.body, { msg: SECOND_LINK, code: '200' });
  t.strictSame((await post({ type: 'email_change', email, token: currentCode })).body, CODE_403, 'a code works once');
  const { data, error } = await auth.verifyOtp({ email: newEmail, token: newCode, type: 'email_change' });
  t.equal(error, null);
  t.equal(data.user?.email, newEmail);
  t.ok(data.session?.access_token);
});

t.test('a user without an email adding one: a single mail whose link completes the change at once', async (t) => {
  const auth = authClient(api.url);
  await auth.signInWithOtp({ phone: '+15550170001' });
  await auth.verifyOtp({ phone: '+15550170001', token: smsCodeOf((await sms.waitForMessage('15550170001')).body), type: 'sms' });
  const email = nextEmail('first');
  t.equal((await auth.updateUser({ email })).error, null);
  const mail = await smtp.waitForMail(email);
  const fragment = fragmentOf(locationOf(await follow(mail)));
  t.equal(fragment.type, 'email_change');
  t.equal((await api.request('GET', '/user', { token: fragment.access_token })).body.email, email);
  t.equal(smtp.mails.filter((m) => m.subject === mail.subject && m.to === email).length, 1);
});

t.test('signup link: the session in the fragment works in the client; a second click is the invalid-link redirect', async (t) => {
  const email = nextEmail();
  const auth = authClient(api.url);
  await auth.signUp({ email, password: PASSWORD, options: { emailRedirectTo: `${ALLOWED}/welcome` } });
  const mail = await smtp.waitForMail(email);
  t.equal(linkOf(mail).type, 'signup');
  t.equal(linkOf(mail).redirectTo, `${ALLOWED}/welcome`);
  const res = await follow(mail);
  t.equal(res.status, 303);
  t.ok(locationOf(res).startsWith(`${ALLOWED}/welcome#access_token=`));
  const fragment = fragmentOf(locationOf(res));
  t.strictSame(Object.keys(fragment), SESSION_KEYS);
  t.match(fragment, { token_type: 'bearer', type: 'signup', expires_in: '3600', sb: '' });
  t.equal(Number(fragment.expires_at) - Math.floor(Date.now() / 1000) <= 3600, true);
  const { data, error } = await auth.setSession({ access_token: fragment.access_token, refresh_token: fragment.refresh_token });
  t.equal(error, null);
  t.ok(data.user?.email_confirmed_at);
  const again = await follow(mail);
  t.equal(
    locationOf(again),
    `${ALLOWED}/welcome#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=`,
  );
});

t.test('redirect_to: allowed kept, disallowed or missing falls back to SITE_URL (error and success alike)', async (t) => {
  const email = nextEmail();
  await authClient(api.url).signUp({ email, password: PASSWORD });
  const { token } = linkOf(await smtp.waitForMail(email));
  const refused = await get(`type=signup&token=nope&redirect_to=${encodeURIComponent('http://evil.example/x')}`);
  t.equal(
    locationOf(refused),
    'http://localhost:3000#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
  );
  const allowed = await get(`type=signup&token=nope&redirect_to=${encodeURIComponent(`${ALLOWED}/x`)}`);
  t.ok(locationOf(allowed).startsWith(`${ALLOWED}/x#error=access_denied`));
  const success = await get(`type=signup&token=${token}`);
  t.ok(locationOf(success).startsWith('http://localhost:3000#access_token='), 'no redirect_to: SITE_URL');
});

t.test('invite link without redirect_to: SITE_URL with type=invite', async (t) => {
  const email = nextEmail('invited');
  t.equal((await api.request('POST', '/invite', { body: { email }, token: await adminToken() })).status, 200);
  const mail = await smtp.waitForMail(email);
  t.equal(linkOf(mail).type, 'invite');
  const res = await api.request('GET', `/verify?type=invite&token=${linkOf(mail).token}`);
  t.ok(locationOf(res).startsWith('http://localhost:3000#access_token='));
  t.equal(fragmentOf(locationOf(res)).type, 'invite');
});

t.test('magic link of a confirmed user: type=magiclink by link, by code and by token_hash; each spends the others', async (t) => {
  const { email } = await confirmedAccount();
  const auth = authClient(api.url);
  await auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
  let mail = await smtp.waitForMail(email);
  t.equal(linkOf(mail).type, 'magiclink');
  t.equal(fragmentOf(locationOf(await follow(mail))).type, 'magiclink');
  t.strictSame((await post({ type: 'magiclink', email, token: codeOf(mail) })).body, CODE_403, 'the code of a followed link is spent');

  await allowAnotherMail(email);
  await auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
  mail = await smtp.waitForMail(email);
  const byHash = await auth.verifyOtp({ token_hash: linkOf(mail).token, type: 'magiclink' });
  t.equal(byHash.error, null);
  t.equal(byHash.data.user?.email, email);
  const byCode = await auth.verifyOtp({ email, token: codeOf(mail), type: 'magiclink' });
  t.equal(byCode.error?.status, 403);
  t.equal(byCode.error?.code, 'otp_expired');
  t.equal(byCode.error?.message, 'Token has expired or is invalid');
});

t.test('recovery: verifyOtp type recovery with the code (address in another case), then the link is spent', async (t) => {
  const { email } = await confirmedAccount();
  const auth = authClient(api.url);
  await auth.resetPasswordForEmail(email, { redirectTo: `${ALLOWED}/reset` });
  const mail = await smtp.waitForMail(email);
  t.equal(linkOf(mail).type, 'recovery');
  t.equal(linkOf(mail).redirectTo, `${ALLOWED}/reset`);
  const { data, error } = await auth.verifyOtp({ email: email.toUpperCase(), token: codeOf(mail), type: 'recovery' });
  t.equal(error, null);
  t.equal(data.user?.email, email);
  t.equal(
    locationOf(await follow(mail)),
    `${ALLOWED}/reset#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=`,
  );
});

t.test('type email: the code of a confirmation mail, and the token_hash of a recovery mail', async (t) => {
  const email = nextEmail();
  const auth = authClient(api.url);
  await auth.signInWithOtp({ email });
  const signup = await auth.verifyOtp({ email, token: codeOf(await smtp.waitForMail(email)), type: 'email' });
  t.equal(signup.error, null);
  t.ok(signup.data.user?.email_confirmed_at);
  await allowAnotherMail(email);
  await auth.resetPasswordForEmail(email);
  const recovery = await auth.verifyOtp({ token_hash: linkOf(await smtp.waitForMail(email)).token, type: 'email' });
  t.equal(recovery.error, null);
  t.equal(recovery.data.user?.email, email);
});

t.test('expired tokens (MAILER_OTP_EXP): the link redirects the error; code and token_hash are 403 with their texts', async (t) => {
  const email = nextEmail();
  await authClient(api.url).signUp({ email, password: PASSWORD });
  const mail = await smtp.waitForMail(email);
  await expireTokensOf(email);
  t.strictSame(fragmentOf(locationOf(await follow(mail))), LINK_INVALID);
  t.strictSame((await post({ type: 'signup', email, token: codeOf(mail) })).body, CODE_403);
  const byHash = await post({ type: 'signup', token_hash: linkOf(mail).token });
  t.equal(byHash.status, 403);
  t.strictSame(byHash.body, LINK_403);
});

t.test('wrong tokens: an unknown link, a wrong code, a token of another type', async (t) => {
  const { email } = await confirmedAccount();
  t.strictSame(fragmentOf(locationOf(await get('type=magiclink&token=0123'))), LINK_INVALID);
  t.strictSame((await post({ type: 'magiclink', email, token: '000000' })).body, CODE_403);
  await authClient(api.url).resetPasswordForEmail(email);
  const mail = await smtp.waitForMail(email);
  t.strictSame((await post({ type: 'signup', token_hash: linkOf(mail).token })).body, LINK_403, 'a recovery token is no signup token');
  t.strictSame(fragmentOf(locationOf(await get(`type=invite&token=${linkOf(mail).token}`))), LINK_INVALID);
});

t.test('sms and phone_change: codes by phone (written with spaces); a code of one is not the other', async (t) => {
  const auth = authClient(api.url);
  await auth.signInWithOtp({ phone: '+15550170011' });
  const code = smsCodeOf((await sms.waitForMessage('15550170011')).body);
  const signedIn = await auth.verifyOtp({ phone: '+1 555 017 0011', token: code, type: 'sms' });
  t.equal(signedIn.error, null);
  t.equal(signedIn.data.user?.phone, '15550170011');
  t.strictSame((await post({ type: 'sms', phone: '+15550170011', token: code })).body, CODE_403, 'a code works once');

  t.equal((await auth.updateUser({ phone: '+15550170012' })).error, null);
  const changeCode = smsCodeOf((await sms.waitForMessage('15550170012')).body);
  t.strictSame((await post({ type: 'sms', phone: '+15550170012', token: changeCode })).body, CODE_403, 'not an sms code');
  t.strictSame((await post({ type: 'phone_change', phone: '+15550170011', token: changeCode })).body, CODE_403, 'the old number');
  const changed = await auth.verifyOtp({ phone: '+15550170012', token: changeCode, type: 'phone_change' });
  t.equal(changed.error, null);
  t.equal(changed.data.user?.phone, '15550170012');
  t.equal((changed.data.session as unknown as Record<string, unknown>)?.type, undefined, 'no type beside a phone session');

  const viaLink = await get(`type=sms&token=abc&redirect_to=${encodeURIComponent(`${ALLOWED}/s`)}`);
  t.equal(
    locationOf(viaLink),
    `${ALLOWED}/s#error=invalid_request&error_code=validation_failed&error_description=Invalid+email+verification+type&sb=`,
    'phone codes have no links',
  );
});

t.test('GET: missing type or token are JSON 400s; an unknown type is redirected', async (t) => {
  const missingType = await get('token=abc');
  t.equal(missingType.status, 400);
  t.strictSame(missingType.body, { code: 400, error_code: 'validation_failed', msg: 'Verify requires a verification type' });
  t.strictSame((await get('')).body, missingType.body);
  const missingToken = await get('type=signup');
  t.equal(missingToken.status, 400);
  t.strictSame(missingToken.body, { code: 400, error_code: 'validation_failed', msg: 'Verify requires a token or a token hash' });
  const unknown = await get('type=bogus&token=abc');
  t.equal(unknown.status, 303);
  t.equal(
    locationOf(unknown),
    'http://localhost:3000#error=invalid_request&error_code=validation_failed&error_description=Invalid+email+verification+type&sb=',
  );
});

t.test('POST: the JSON answers of each refusal', async (t) => {
  const rows: Array<[string, unknown, number, string, string]> = [
    ['no type', { token: '1', email: 'a@example.com' }, 400, 'validation_failed', 'Verify requires a verification type'],
    [
      'neither token',
      { type: 'signup', email: 'a@example.com' },
      400,
      'validation_failed',
      'Verify requires either a token or a token hash',
    ],
    [
      'both tokens',
      { type: 'signup', token: '1', token_hash: 'x' },
      400,
      'validation_failed',
      'Verify requires either a token or a token hash',
    ],
    [
      'neither address',
      { type: 'signup', token: '1' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on verify',
    ],
    [
      'both addresses',
      { type: 'signup', token: '1', email: 'a@example.com', phone: '15550170099' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on verify',
    ],
    [
      'token_hash and email',
      { type: 'signup', token_hash: 'x', email: 'a@example.com' },
      400,
      'validation_failed',
      'Only the token_hash and type should be provided',
    ],
    [
      'token_hash and redirect_to',
      { type: 'signup', token_hash: 'x', redirect_to: ALLOWED },
      400,
      'validation_failed',
      'Only the token_hash and type should be provided',
    ],
    ['bad email', { type: 'signup', token: '1', email: 'not-an-email' }, 422, 'validation_failed', 'Invalid email format'],
    ['bad phone', { type: 'sms', token: '1', phone: '12ab' }, 400, 'validation_failed', 'Invalid phone number format (E.164 required)'],
    ['unknown type, token_hash', { type: 'bogus', token_hash: 'x' }, 400, 'validation_failed', 'Invalid email verification type'],
    ['sms type, token_hash', { type: 'sms', token_hash: 'x' }, 400, 'validation_failed', 'Invalid email verification type'],
    [
      'unknown type, code',
      { type: 'bogus', token: '123456', email: 'a@example.com' },
      403,
      'otp_expired',
      'Token has expired or is invalid',
    ],
    ['unknown token_hash', { type: 'signup', token_hash: 'x' }, 403, 'otp_expired', 'Email link is invalid or has expired'],
  ];
  for (const [name, body, status, errorCode, msg] of rows) {
    const res = await post(body);
    t.equal(res.status, status, name);
    t.strictSame(res.body, { code: status, error_code: errorCode, msg }, name);
  }
});

t.test('MAILER_SECURE_EMAIL_CHANGE_ENABLED=false: one mail, to the new address, whose code completes the change', async (t) => {
  const single = await startMailStack({ AUTH_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
  t.teardown(() => single.stop());
  const email = nextEmail();
  const auth = authClient(single.api.url);
  await auth.signUp({ email, password: PASSWORD });
  await auth.verifyOtp({ email, token: codeOf(await single.smtp.waitForMail(email)), type: 'signup' });
  const newEmail = nextEmail('changed');
  t.equal((await auth.updateUser({ email: newEmail })).error, null);
  const mail = await single.smtp.waitForMail(newEmail);
  t.equal(linkOf(mail).type, 'email_change');
  const { data, error } = await auth.verifyOtp({ email: newEmail, token: codeOf(mail), type: 'email_change' });
  t.equal(error, null);
  t.equal(data.user?.email, newEmail);
  t.ok(data.session?.access_token, 'a session, not the message of a first half');
  t.strictSame(fragmentOf((await single.api.request('GET', linkOf(mail).path)).headers.get('location')), LINK_INVALID, 'its link is spent');
  t.equal(single.smtp.mails.filter((m) => m.to === email).length, 1, 'the old address got only its sign-up mail');
});
