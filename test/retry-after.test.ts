// Every 429 and 503 carries Retry-After (issue 18 item 5): the per-client limiter (RATE_LIMIT_HEADER),
// the per-user send interval and the global send limit over HTTP, and the renderer's default for a 503.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { confirmedUser } from './helpers/users.js';
import { ApiError } from '../dist/server/errors.js';
import { renderError } from '../dist/server/http/render-error.js';
import { assertSendInterval } from '../dist/server/limits/sends.js';

const stack = await startMailStack({
  AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
  AUTH_RATE_LIMIT_TOKEN_REFRESH: '0',
  AUTH_RATE_LIMIT_VERIFY: '3',
  AUTH_SMTP_MAX_FREQUENCY: '120',
  AUTH_RATE_LIMIT_EMAIL_SENT: '3',
});
const { api } = stack;
t.teardown(() => stack.stop());

t.test('the per-client limiter answers 429 with Retry-After', async (t) => {
  const res = await api.request('POST', '/token?grant_type=password', {
    headers: { 'X-Real-IP': '203.0.113.7' },
    body: { email: 'a@example.com', password: 'x' },
  });
  t.equal(res.status, 429);
  t.strictSame(res.body, { code: 429, error_code: 'over_request_rate_limit', msg: 'Request rate limit reached' });
  t.equal(res.headers.get('retry-after'), '300', 'a bucket that never refills: come back after its period');
});

t.test('an emptied bucket says when its next token arrives', async (t) => {
  const headers = { 'X-Real-IP': '203.0.113.8' };
  let res = await api.request('POST', '/verify', { headers, body: { type: 'signup', token_hash: 'nope' } });
  for (let i = 1; i < 40 && res.status !== 429; i++) {
    // the burst is 30
    res = await api.request('POST', '/verify', { headers, body: { type: 'signup', token_hash: 'nope' } });
  }
  t.equal(res.status, 429);
  t.equal(res.body.error_code, 'over_request_rate_limit');
  t.equal(res.headers.get('retry-after'), '100', 'RATE_LIMIT_VERIFY=3 per 5 minutes: one token every 100 s');
});

t.test('the per-user send interval gives the seconds it names', async (t) => {
  const email = uniqueEmail('interval');
  t.equal((await api.request('POST', '/otp', { body: { email } })).status, 200);
  const res = await api.request('POST', '/otp', { body: { email } });
  t.equal(res.status, 429);
  t.equal(res.body.error_code, 'over_email_send_rate_limit');
  const seconds = /after (\d+) seconds/.exec(res.body.msg)?.[1];
  t.ok(seconds, res.body.msg);
  // The message truncates as the original's; Retry-After rounds up, never sending a client back too early.
  t.ok([0, 1].includes(Number(res.headers.get('retry-after')) - Number(seconds)), `${res.headers.get('retry-after')} after ${seconds}`);
});

t.test("/recover, /otp, /magiclink and /resend each have their own bucket, as the original's separate limiters", async (t) => {
  const own = await startMailStack({ AUTH_RATE_LIMIT_HEADER: 'X-Real-IP', AUTH_RATE_LIMIT_EMAIL_SENT: '1000' });
  t.teardown(() => own.stop());
  const api = own.api;
  const headers = { 'x-real-ip': '198.51.100.23' };
  const unknown = { email: uniqueEmail('nobody'), create_user: false };
  // RATE_LIMIT_OTP's default: a burst of 30 in each bucket. A new address each time: one asked again within
  // SMTP_MAX_FREQUENCY is refused by its send interval, unknown or not.
  for (let i = 0; i < 30; i++) {
    const res = await api.request('POST', '/recover', { headers, body: { email: uniqueEmail('nobody') } });
    if (res.status !== 200) t.fail(`recover ${i}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const spent = await api.request('POST', '/recover', { headers, body: { email: unknown.email } });
  t.equal(spent.body.error_code, 'over_request_rate_limit', 'the recover bucket is spent');
  const otp = await api.request('POST', '/otp', { headers, body: unknown });
  t.not(otp.body.error_code, 'over_request_rate_limit', `/otp still answers: ${otp.status} ${otp.body.error_code}`);
  const link = await api.request('POST', '/magiclink', { headers, body: { email: unknown.email } });
  t.not(link.body.error_code, 'over_request_rate_limit', `/magiclink still answers: ${link.status}`);
  const resend = await api.request('POST', '/resend', { headers, body: { type: 'signup', email: unknown.email } });
  t.not(resend.body.error_code, 'over_request_rate_limit', `/resend still answers: ${resend.status}`);
});

t.test('the interval message names the whole seconds left, truncated as the original; Retry-After rounds up', async (t) => {
  const sentAt = new Date('2026-11-25T10:00:00Z');
  const at = (ms: number) => {
    try {
      assertSendInterval('email', sentAt, 60, sentAt.getTime() + ms);
      return null;
    } catch (err) {
      const e = err as ApiError;
      return [e.status, e.errorCode, e.message, e.retryAfterSeconds];
    }
  };
  t.strictSame(at(100), [429, 'over_email_send_rate_limit', 'For security purposes, you can only request this after 59 seconds.', 60]);
  t.strictSame(at(59_500), [429, 'over_email_send_rate_limit', 'For security purposes, you can only request this after 0 seconds.', 1]);
  t.strictSame(at(30_000)?.slice(2), ['For security purposes, you can only request this after 30 seconds.', 30]);
  t.equal(at(60_000), null, 'the interval over, nothing refused');
});

t.test('the global send limit (no remaining time known) still carries Retry-After', async (t) => {
  let res = await api.request('POST', '/otp', { body: { email: uniqueEmail('global') } });
  for (let i = 1; i < 5 && res.status !== 429; i++) {
    res = await api.request('POST', '/otp', { body: { email: uniqueEmail('global') } });
  }
  t.equal(res.status, 429);
  t.strictSame(res.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: 'email rate limit exceeded' });
  t.equal(res.headers.get('retry-after'), '60');
});

t.test('the renderer adds Retry-After to any 429 or 503, in both API versions, and to nothing else', async (t) => {
  const unavailable = new ApiError(503, 'unexpected_failure', 'busy');
  t.equal(renderError(unavailable, undefined, 'r1').headers['Retry-After'], '5');
  t.equal(renderError(unavailable, '2024-01-01', 'r1').headers['Retry-After'], '5');
  t.equal(renderError(new ApiError(503, 'unexpected_failure', 'busy').retryAfter(0.2), undefined, 'r1').headers['Retry-After'], '1');
  t.equal(renderError(new ApiError(400, 'validation_failed', 'no'), undefined, 'r1').headers['Retry-After'], undefined);
});

t.test('anonymous sign-ins take from their own hourly bucket, not the sign-up one', async (t) => {
  const anonymous = await startMailStack({
    AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_RATE_LIMIT_ANONYMOUS_USERS: '2',
    AUTH_MAILER_AUTOCONFIRM: 'true',
  });
  t.teardown(() => anonymous.stop());
  const headers = { 'X-Real-IP': '203.0.113.9' };
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await anonymous.api.request('POST', '/signup', { headers, body: {} })).status);
  t.strictSame(statuses, [200, 200, 429], 'the third anonymous sign-in in the hour is refused');
  const refused = await anonymous.api.request('POST', '/signup', { headers, body: {} });
  t.equal(refused.headers.get('retry-after'), '1800', 'one token per 30 minutes at 2 per hour');
  const withAddress = await anonymous.api.request('POST', '/signup', {
    headers,
    body: { email: uniqueEmail(), password: 'Passw0rd-123' },
  });
  t.equal(withAddress.status, 200, 'a sign-up with an address is counted in its own bucket');
});

t.test('with anonymous sign-ins off, the refusal comes before the bucket, however often it is asked', async (t) => {
  const off = await startMailStack({ AUTH_RATE_LIMIT_HEADER: 'X-Real-IP', AUTH_RATE_LIMIT_ANONYMOUS_USERS: '2' });
  t.teardown(() => off.stop());
  const headers = { 'X-Real-IP': '203.0.113.9' };
  const codes: string[] = [];
  for (let i = 0; i < 4; i++) codes.push((await off.api.request('POST', '/signup', { headers, body: {} })).body.error_code);
  t.strictSame(codes, Array(4).fill('anonymous_provider_disabled'), 'the original checks the switch before its limiter');
});

t.test('an unknown grant_type is refused before the token bucket, however often it is sent', async (t) => {
  const own = await startMailStack({ AUTH_RATE_LIMIT_HEADER: 'X-Real-IP', AUTH_RATE_LIMIT_TOKEN_REFRESH: '1' });
  t.teardown(() => own.stop());
  const headers = { 'X-Real-IP': '203.0.113.10' };
  const answers = new Set<string>();
  // The bucket's burst is 30: one more than that would be refused if the unknown grants were counted.
  for (let i = 0; i < 31; i++) {
    const res = await own.api.request('POST', '/token?grant_type=foo', { headers, body: {} });
    answers.add(`${res.status} ${res.body.error_code} ${res.body.msg}`);
  }
  t.strictSame([...answers], ['400 invalid_credentials unsupported_grant_type'], 'the original answers before its limiter');
  const real = await own.api.request('POST', '/token?grant_type=password', {
    headers,
    body: { email: 'nobody@example.com', password: 'wrong-one-1' },
  });
  t.equal(real.body.error_code, 'invalid_credentials', 'a real grant still reaches its handler');
});

t.test("SECURITY_SB_FORWARDED_FOR_ENABLED: Sb-Forwarded-For's address keys the per-client limits, as the original", async (t) => {
  const own = await startMailStack({ AUTH_RATE_LIMIT_TOKEN_REFRESH: '0', AUTH_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true' });
  t.teardown(() => own.stop());
  const grant = (headers: Record<string, string>) =>
    own.api.request('POST', '/token?grant_type=password', { headers, body: { email: 'nobody@example.com', password: 'wrong-one-1' } });
  // A token bucket of rate 0 refuses every keyed request: a 429 shows the request had a key.
  t.equal(
    (await grant({ 'Sb-Forwarded-For': '203.0.113.9, 10.0.0.1' })).body.error_code,
    'over_request_rate_limit',
    'keyed by the leftmost address',
  );
  t.equal((await grant({ 'Sb-Forwarded-For': '2001:db8::1' })).body.error_code, 'over_request_rate_limit', 'IPv6 too');
  t.equal((await grant({ 'Sb-Forwarded-For': 'not-an-address' })).body.error_code, 'invalid_credentials', 'not an address: no key');
  t.equal((await grant({})).body.error_code, 'invalid_credentials', 'no header: no key (RATE_LIMIT_HEADER unset)');
  // Off (the default), the header is nobody's key.
  const off = await startMailStack({ AUTH_RATE_LIMIT_TOKEN_REFRESH: '0' });
  t.teardown(() => off.stop());
  const res = await off.api.request('POST', '/token?grant_type=password', {
    headers: { 'Sb-Forwarded-For': '203.0.113.9' },
    body: { email: 'nobody@example.com', password: 'wrong-one-1' },
  });
  t.equal(res.body.error_code, 'invalid_credentials');
});

t.test('Sb-Forwarded-For keys the limits by the address as Go writes it: spellings of one address share a bucket', async (t) => {
  // Anonymous sign-ins at 1 an hour: a bucket of one token, so a second request with the same key is refused.
  // X-Real-IP differs on every request: a shared bucket can only come from Sb-Forwarded-For.
  const own = await startMailStack({
    AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
    AUTH_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_RATE_LIMIT_ANONYMOUS_USERS: '1',
  });
  t.teardown(() => own.stop());
  let n = 0;
  const signIn = async (forwarded: string) =>
    (await own.api.request('POST', '/signup', { headers: { 'Sb-Forwarded-For': forwarded, 'X-Real-IP': `10.9.0.${++n}` }, body: {} }))
      .status;
  t.equal(await signIn('2600:CAFE::1'), 200);
  t.equal(await signIn('2600:cafe:0:0::0001'), 429, 'case and zeros: the same IPv6 address, the same bucket');
  t.equal(await signIn('::ffff:198.51.100.7'), 200);
  t.equal(await signIn('198.51.100.7'), 429, 'an IPv4-mapped address is its IPv4 address');
  t.equal(await signIn('fe80::1%eth0'), 200);
  t.equal(await signIn('fe80::1%eth0'), 200, 'an address with a zone is none for Go: the key is X-Real-IP, which differs');
});

t.test("a user's limited routes check the token first, as the original: callers without one spend nothing", async (t) => {
  const own = await startMailStack({ AUTH_RATE_LIMIT_HEADER: 'X-Real-IP', AUTH_RATE_LIMIT_OTP: '1' });
  t.teardown(() => own.stop());
  const headers = { 'X-Real-IP': '198.51.100.77' };
  // Past the burst of 30 without a token: each is the guard's 401, never a 429.
  const statuses = new Set<number>();
  for (let i = 0; i < 35; i++) statuses.add((await own.api.request('PUT', '/user', { headers, body: { data: { n: i } } })).status);
  t.same([...statuses], [401]);
  // The same client, signed in, still has its whole allowance.
  const { access_token } = await confirmedUser(own.api);
  const res = await own.api.request('PUT', '/user', { headers, token: access_token, body: { data: { signed: 'in' } } });
  t.equal(res.status, 200);
  t.match(res.body.user_metadata, { signed: 'in' });
});
