// Leaked-password checks (docs/passwords.md#leaked-passwords): with PASSWORD_HIBP_ENABLED a new password is
// looked up in the Pwned Passwords range API by the first 5 hex digits of its SHA-1 and refused with reason
// `pwned`; a sign-in reports it in `weak_password`. A failing API is logged and ignored by default, and
// with PASSWORD_HIBP_FAIL_CLOSED refuses the password with 503. Each service here talks to its own fake of
// the range API (test/helpers/pwned-range.ts), which the test stalls past the 5 s timeout and kills.
import t, { type Test } from 'tap';
import { isAuthWeakPasswordError } from '@supabase/auth-js';
import { startTestService, type TestService } from './helpers/server.js';
import { startRangeFake, rangeKey } from './helpers/pwned-range.js';
import { authClient } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { PwnedCache } from '../dist/server/users/pwned-cache.js';
import { createHash, randomBytes } from 'node:crypto';

const PWNED_MSG = 'Password is known to be weak and easy to guess, please choose a different one.';
const UNAVAILABLE = {
  code: 503,
  error_code: 'unexpected_failure',
  msg: 'Unable to perform password strength check with HaveIBeenPwned.org.',
};
const USER_AGENT = 'portcullis-tests/1.0 (+https://example.com)';
const TIMEOUT_MS = 5000;

const openFake = await startRangeFake();
const closedFake = await startRangeFake();
const offFake = await startRangeFake();
const common = { AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_RATE_LIMIT_EMAIL_SENT: '1000' };
const [open, closed, off] = await Promise.all([
  startTestService({
    ...common,
    GOTRUE_PASSWORD_HIBP_ENABLED: 'true',
    GOTRUE_PASSWORD_HIBP_USER_AGENT: USER_AGENT,
    AUTH_PASSWORD_HIBP_URL: `${openFake.url}/`,
  }),
  startTestService({
    ...common,
    GOTRUE_PASSWORD_HIBP_ENABLED: 'true',
    GOTRUE_PASSWORD_HIBP_FAIL_CLOSED: 'true',
    GOTRUE_PASSWORD_HIBP_BLOOM_ENABLED: 'true',
    AUTH_PASSWORD_HIBP_URL: closedFake.url,
  }),
  // The check is off by default: a URL alone turns nothing on.
  startTestService({ ...common, AUTH_PASSWORD_HIBP_URL: offFake.url }),
]);
t.teardown(async () => {
  await Promise.all([open.stop(), closed.stop(), off.stop()]);
  await Promise.all([openFake.kill(), closedFake.kill(), offFake.kill()]);
});
const admin = await adminToken();

let counter = 0;
/** every password made here, for the scan of the log */
const madePasswords: string[] = [];
/** A fresh password no fake knows until the test says so. */
const freshPassword = () => {
  const password = `Fresh-${process.pid}-${++counter}-${randomBytes(4).toString('hex')}`;
  madePasswords.push(password);
  return password;
};
const signUp = (api: TestService, password: string, email = uniqueEmail('hibp')) =>
  api.request('POST', '/signup', { body: { email, password } });
const signIn = (api: TestService, email: string, password: string) =>
  api.request('POST', '/token?grant_type=password', { body: { email, password } });
const weakBody = (msg: string, reasons: string[]) => ({ code: 422, error_code: 'weak_password', msg, weak_password: { reasons } });
/** 503 with the original's code and message, and (as every 5xx) the request id as error_id. */
const unavailable = (t: Test, res: { status: number; body: any }) => {
  const { error_id: errorId, ...rest } = res.body ?? {};
  t.strictSame([res.status, rest], [503, UNAVAILABLE]);
  t.match(errorId, /^[0-9a-f-]{36}$/, 'error_id');
};
const userCount = async (api: TestService, email: string) =>
  Number((await api.db.query('SELECT count(*) FROM users WHERE email = $1', [email])).rows[0].count);

t.test('the settings: off by default, with the original defaults', async (t) => {
  const defaults = loadConfig({ env: {}, envFile: null }).password.hibp;
  t.strictSame(defaults, {
    enabled: false,
    failClosed: false,
    userAgent: 'https://github.com/supabase/gotrue',
    url: 'https://api.pwnedpasswords.com',
    bloom: { enabled: false, items: 100000, falsePositives: 0.0000099 },
  });
  const given = loadConfig({
    env: { GOTRUE_PASSWORD_HIBP_BLOOM_FALSE_POSITIVES: '1e-5', AUTH_PASSWORD_HIBP_BLOOM_ITEMS: '5000' },
    envFile: null,
  });
  t.equal(given.password.hibp.bloom.falsePositives, 0.00001, 'a float in exponent form, as Go reads it');
  t.equal(given.password.hibp.bloom.items, 5000);
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ env, envFile: null });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };
  t.match(problems({ AUTH_PASSWORD_HIBP_BLOOM_FALSE_POSITIVES: 'often' }), [/PASSWORD_HIBP_BLOOM_FALSE_POSITIVES.*not a number/]);
  t.match(problems({ AUTH_PASSWORD_HIBP_BLOOM_FALSE_POSITIVES: '1.5' }), [/PASSWORD_HIBP_BLOOM_FALSE_POSITIVES/]);
  t.match(problems({ AUTH_PASSWORD_HIBP_URL: 'ftp://mirror' }), [/PASSWORD_HIBP_URL/]);
});

t.test('off by default: a leaked password is accepted and the range API is never asked', async (t) => {
  const password = freshPassword();
  offFake.leak(password);
  const email = uniqueEmail('off');
  t.equal((await signUp(off, password, email)).status, 200);
  const signedIn = await signIn(off, email, password);
  t.equal(signedIn.status, 200);
  t.equal(signedIn.body.weak_password, null, 'not weak');
  t.equal(offFake.requests.length, 0, 'no request reached the range API');
});

t.test('sign-up through auth-js: a leaked password is 422 weak_password with reason pwned', async (t) => {
  const password = freshPassword();
  openFake.leak(password, 3861493);
  const email = uniqueEmail('leaked');
  const { data, error } = await authClient(open.url).signUp({ email, password });
  t.ok(isAuthWeakPasswordError(error), `an AuthWeakPasswordError: ${error?.name}`);
  if (!isAuthWeakPasswordError(error)) return;
  t.equal(error.status, 422);
  t.equal(error.code, 'weak_password');
  t.equal(error.message, PWNED_MSG);
  t.strictSame(error.reasons, ['pwned']);
  t.equal(data.user, null);
  t.equal(await userCount(open, email), 0, 'no user was written');

  const raw = await signUp(open, password);
  t.strictSame([raw.status, raw.body], [422, weakBody(PWNED_MSG, ['pwned'])], 'the wire answer');
});

t.test('only the 5-digit prefix leaves, with the configured User-Agent and padding asked for', async (t) => {
  const password = freshPassword();
  const before = openFake.requests.length;
  t.equal((await signUp(open, password)).status, 200);
  const { prefix, suffix } = rangeKey(password);
  t.strictSame(openFake.requests.slice(before), [{ method: 'GET', path: `/range/${prefix}`, userAgent: USER_AGENT, addPadding: 'true' }]);
  t.notOk(
    openFake.requests.some((r) => r.path.includes(suffix.slice(0, 8))),
    'no part of the suffix was sent',
  );
});

t.test('a suffix listed only as padding (count 0) is not leaked; an unknown password passes', async (t) => {
  const padded = freshPassword();
  openFake.pad(padded);
  const before = openFake.requests.length;
  t.equal((await signUp(open, padded)).status, 200, 'padding line');
  t.equal((await signUp(open, freshPassword())).status, 200, 'unknown');
  t.equal(openFake.requests.length, before + 2, 'each was looked up');
});

t.test('with the local rules: reasons in the original order, messages joined by one space', async (t) => {
  openFake.leak('abc12');
  const res = await signUp(open, 'abc12');
  t.strictSame([res.status, res.body], [422, weakBody(`Password should be at least 6 characters. ${PWNED_MSG}`, ['length', 'pwned'])]);
});

t.test('PUT /user through auth-js refuses a leaked new password and keeps the old one', async (t) => {
  const email = uniqueEmail('change');
  const password = freshPassword();
  t.equal((await signUp(open, password, email)).status, 200);
  const client = authClient(open.url);
  t.error((await client.signInWithPassword({ email, password })).error);
  const leaked = freshPassword();
  openFake.leak(leaked);
  const { error } = await client.updateUser({ password: leaked });
  t.ok(isAuthWeakPasswordError(error));
  if (isAuthWeakPasswordError(error)) t.strictSame([error.status, error.message, error.reasons], [422, PWNED_MSG, ['pwned']]);
  t.equal((await signIn(open, email, password)).status, 200, 'the old password still signs in');
  t.equal((await signIn(open, email, leaked)).status, 400, 'the leaked one was not set');
});

t.test('admin: PUT /admin/users refuses a leaked password; POST /admin/users does not check, as the original', async (t) => {
  const leaked = freshPassword();
  openFake.leak(leaked);
  const before = openFake.requests.length;
  const email = uniqueEmail('admin');
  const created = await open.request('POST', '/admin/users', { token: admin, body: { email, password: leaked, email_confirm: true } });
  t.equal(created.status, 200, created.text);
  t.equal(openFake.requests.length, before, 'creation never asks the range API');
  const updated = await open.request('PUT', `/admin/users/${created.body.id}`, { token: admin, body: { password: leaked } });
  t.strictSame([updated.status, updated.body], [422, weakBody(PWNED_MSG, ['pwned'])]);
  const fine = await open.request('PUT', `/admin/users/${created.body.id}`, { token: admin, body: { password: freshPassword() } });
  t.equal(fine.status, 200, fine.text);
});

t.test('POST /admin/generate_link signup refuses a leaked password', async (t) => {
  const leaked = freshPassword();
  openFake.leak(leaked);
  const email = uniqueEmail('link');
  const res = await open.request('POST', '/admin/generate_link', { token: admin, body: { type: 'signup', email, password: leaked } });
  t.strictSame([res.status, res.body], [422, weakBody(PWNED_MSG, ['pwned'])]);
  t.equal(await userCount(open, email), 0);
});

t.test('password sign-in through auth-js reports a leaked password in weakPassword', async (t) => {
  const email = uniqueEmail('login');
  const password = freshPassword();
  t.equal((await signUp(open, password, email)).status, 200);
  openFake.leak(password); // leaked since it was chosen
  const { data, error } = await authClient(open.url).signInWithPassword({ email, password });
  t.error(error);
  t.ok(data.session, 'signed in all the same');
  t.strictSame(data.weakPassword, { message: PWNED_MSG, reasons: ['pwned'] });
});

t.test('fail closed: a leaked password is refused, and remembered by the Bloom cache', async (t) => {
  const leaked = freshPassword();
  closedFake.leak(leaked);
  t.strictSame((await signUp(closed, leaked)).body, weakBody(PWNED_MSG, ['pwned']));
  closedFake.failWith(503);
  const before = closedFake.requests.length;
  const again = await signUp(closed, leaked);
  t.strictSame([again.status, again.body], [422, weakBody(PWNED_MSG, ['pwned'])], 'refused from the cache while the API fails');
  t.equal(closedFake.requests.length, before, 'without a request');
  closedFake.failWith(0);
});

t.test('fail closed: an API answering an error status refuses the password with 503; sign-in still works', async (t) => {
  const email = uniqueEmail('closed-login');
  const password = freshPassword();
  t.equal((await signUp(closed, password, email)).status, 200);
  closedFake.failWith(503);
  t.teardown(() => closedFake.failWith(0));
  const other = uniqueEmail('closed');
  const res = await signUp(closed, freshPassword(), other);
  unavailable(t, res);
  t.ok(Number(res.headers.get('retry-after')) > 0, 'with Retry-After');
  t.equal(await userCount(closed, other), 0);
  const signedIn = await signIn(closed, email, password);
  t.equal(signedIn.status, 200, 'a sign-in is never refused for the check');
  t.equal(signedIn.body.weak_password, null, 'not weak');
});

t.test('fail closed: an API slower than 5 s is 503 after the timeout', async (t) => {
  closedFake.stall(true);
  t.teardown(() => closedFake.stall(false));
  const started = performance.now();
  const res = await signUp(closed, freshPassword());
  const waited = performance.now() - started;
  unavailable(t, res);
  t.ok(waited >= TIMEOUT_MS - 100 && waited < TIMEOUT_MS + 4000, `gave up after the timeout (${Math.round(waited)} ms)`);
});

t.test('fail open: an API slower than 5 s lets a leaked password through after the timeout, and logs it', async (t) => {
  const leaked = freshPassword();
  openFake.leak(leaked);
  openFake.stall(true);
  t.teardown(() => openFake.stall(false));
  const email = uniqueEmail('slow');
  const started = performance.now();
  const res = await signUp(open, leaked, email);
  const waited = performance.now() - started;
  t.equal(res.status, 200, res.text);
  t.ok(waited >= TIMEOUT_MS - 100 && waited < TIMEOUT_MS + 4000, `gave up after the timeout (${Math.round(waited)} ms)`);
});

t.test('fail open: a dead API lets a leaked password through at once; the logs hold no password or hash', async (t) => {
  const leaked = freshPassword();
  openFake.leak(leaked);
  await openFake.kill();
  const email = uniqueEmail('dead');
  const res = await signUp(open, leaked, email);
  t.equal(res.status, 200, res.text);
  t.equal(await userCount(open, email), 1);
  const signedIn = await signIn(open, email, leaked);
  t.equal(signedIn.status, 200);
  t.equal(signedIn.body.weak_password, null, 'nothing to report when the API cannot tell');
});

t.test('fail open: each failure is a warning naming the request; no password, hash or prefix is logged', async (t) => {
  await open.stop(); // the log is complete once the service has stopped
  const lines = open.logs();
  const warned = lines.filter((l) => l.msg === 'leaked-password check failed: password accepted unchecked');
  t.ok(warned.length >= 2, `the stalled and the dead API (${warned.length})`);
  t.ok(
    warned.every((l) => l.level === 'warning' && typeof l.request_id === 'string' && l.request_id),
    'warnings with the request id',
  );
  t.ok(
    lines.some((l) => l.msg === 'leaked-password check failed: password accepted unchecked' && /timeout/i.test(JSON.stringify(l.err))),
    'the timeout is named',
  );
  const text = JSON.stringify(lines);
  t.notOk(text.includes('/range/'), 'no range URL (it carries the prefix)');
  for (const password of madePasswords) {
    const { prefix, suffix } = rangeKey(password);
    t.notOk(text.includes(password), 'no password');
    t.notOk(text.includes(suffix) || text.includes(`${prefix}${suffix}`.toLowerCase()), 'no hash');
  }
});

t.test('fail closed: a dead API is 503 at once', async (t) => {
  await closedFake.kill();
  const started = performance.now();
  const res = await signUp(closed, freshPassword());
  unavailable(t, res);
  t.ok(performance.now() - started < TIMEOUT_MS, 'without waiting for the timeout');
});

t.test('the Bloom cache: no false negatives, about the configured false-positive rate, cleared at 80 % full', async (t) => {
  const digest = (i: number) => createHash('sha1').update(`item-${i}`).digest();
  const cache = new PwnedCache({ enabled: true, items: 1000, falsePositives: 0.01 });
  cache.add(Array.from({ length: 800 }, (_, i) => digest(i)));
  t.ok(
    Array.from({ length: 800 }, (_, i) => digest(i)).every((d) => cache.has(d)),
    'every added hash is found',
  );
  const others = Array.from({ length: 20000 }, (_, i) => digest(100000 + i)).filter((d) => cache.has(d)).length;
  t.ok(others / 20000 < 0.03, `false positives ${others} of 20000`);
  cache.add([digest(5000)]);
  t.ok(cache.has(digest(5000)));
  t.ok(Array.from({ length: 800 }, (_, i) => digest(i)).filter((d) => cache.has(d)).length < 40, 'the earlier hashes were cleared');
});
