// Captcha (issue 18 item 8, REFERENCE §11): the endpoints the original protects refuse a request without
// a token the provider accepts, with the original's captcha_failed answers; the token is read from the
// body's captcha_token or gotrue_meta_security.captcha_token and sent to siteverify in its wire format;
// an admin bearer and the refresh/PKCE grants are exempt; a stalled provider gives a prompt 503 with Retry-After.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMailStack } from './helpers/passwordless.js';
import { startTestService } from './helpers/server.js';
import { startSiteverifyFake } from './helpers/captcha.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { authClient } from './helpers/auth-client.js';
import { verifyUrlOf } from '../dist/server/auth/captcha.js';

const SECRET = '0x0000000000000000000000000000000000000000';
const fake = await startSiteverifyFake(SECRET);
const stack = await startMailStack({
  AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
  GOTRUE_SECURITY_CAPTCHA_SECRET: SECRET,
  SECURITY_CAPTCHA_PROVIDER: 'turnstile',
  AUTH_SECURITY_CAPTCHA_TIMEOUT: '1s',
  AUTH_SECURITY_CAPTCHA_VERIFY_URL: fake.url,
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
  AUTH_SMTP_MAX_FREQUENCY: '1ms',
});
const { api } = stack;
t.teardown(async () => {
  await stack.stop();
  await fake.close();
});
fake.accept('good-token');
const admin = await adminToken();

const NO_TOKEN = { code: 400, error_code: 'captcha_failed', msg: 'captcha protection: request disallowed (no captcha_token found)' };
const REJECTED = { code: 400, error_code: 'captcha_failed', msg: 'captcha protection: request disallowed (invalid-input-response)' };
const meta = (token: string) => ({ gotrue_meta_security: { captcha_token: token } });

const password = 'Passw0rd-123';
const known = uniqueEmail('known');
await api.request('POST', '/signup', { body: { email: known, password, ...meta('good-token') } });

/** Each protected endpoint with a body that succeeds once the captcha passes. */
const PROTECTED: Array<[string, string, () => Record<string, unknown>]> = [
  ['/signup', 'sign-up', () => ({ email: uniqueEmail('su'), password })],
  ['/signup', 'anonymous sign-in', () => ({})],
  ['/token?grant_type=password', 'password grant', () => ({ email: known, password })],
  ['/otp', 'otp', () => ({ email: uniqueEmail('otp') })],
  ['/magiclink', 'magic link', () => ({ email: uniqueEmail('ml') })],
  ['/recover', 'recover', () => ({ email: known })],
  ['/resend', 'resend', () => ({ type: 'signup', email: uniqueEmail('rs') })],
];

t.test('every protected endpoint: no token, a rejected token, then an accepted one', async (t) => {
  for (const [path, what, body] of PROTECTED) {
    const none = await api.request('POST', path, { body: body() });
    t.strictSame([none.status, none.body], [400, NO_TOKEN], `${what}: no token`);
    const blank = await api.request('POST', path, { body: { ...body(), ...meta('   ') } });
    t.strictSame([blank.status, blank.body], [400, NO_TOKEN], `${what}: a blank token`);
    const rejected = await api.request('POST', path, { body: { ...body(), ...meta('forged') } });
    t.strictSame([rejected.status, rejected.body], [400, REJECTED], `${what}: a rejected token`);
    const nested = await api.request('POST', path, { body: { ...body(), ...meta('good-token') } });
    t.equal(nested.status, 200, `${what}: gotrue_meta_security.captcha_token ${nested.text.slice(0, 120)}`);
    const topLevel = await api.request('POST', path, { body: { ...body(), captcha_token: 'good-token' } });
    t.not(topLevel.body?.error_code, 'captcha_failed', `${what}: top-level captcha_token`);
  }
});

t.test('siteverify receives the real wire format: form-encoded secret, response, remoteip', async (t) => {
  const before = fake.requests.length;
  await api.request('POST', '/otp', { body: { email: uniqueEmail('wire'), ...meta(' good-token ') } });
  t.strictSame(fake.requests.slice(before), [
    {
      path: '/siteverify',
      contentType: 'application/x-www-form-urlencoded',
      secret: SECRET,
      response: 'good-token',
      remoteip: '127.0.0.1',
    },
  ]);
});

t.test("the provider's error codes are passed on, joined", async (t) => {
  fake.reject('replayed', ['timeout-or-duplicate', 'invalid-input-response']);
  const res = await api.request('POST', '/magiclink', { body: { email: uniqueEmail('codes'), captcha_token: 'replayed' } });
  t.strictSame(
    [res.status, res.body],
    [
      400,
      {
        code: 400,
        error_code: 'captcha_failed',
        msg: 'captcha protection: request disallowed (timeout-or-duplicate, invalid-input-response)',
      },
    ],
  );
});

t.test('exempt: an admin bearer, the refresh and PKCE grants, unprotected endpoints', async (t) => {
  const before = fake.requests.length;
  const asAdmin = await api.request('POST', '/signup', { token: admin, body: { email: uniqueEmail('adm'), password } });
  t.equal(asAdmin.status, 200, 'an admin bearer skips the captcha');
  const session = asAdmin.body;
  const refreshed = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: session.refresh_token } });
  t.equal(refreshed.status, 200, 'refresh_token grant');
  const pkce = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: 'x', code_verifier: 'y'.repeat(43) } });
  t.not(pkce.body.error_code, 'captcha_failed', 'pkce grant');
  const user = await api.request('GET', '/user', { token: session.access_token });
  t.equal(user.status, 200);
  t.equal(fake.requests.length, before, 'the provider was never asked');
  const badAdmin = await api.request('POST', '/signup', { token: 'not-a-jwt', body: { email: uniqueEmail('bad'), password } });
  t.strictSame(badAdmin.body, NO_TOKEN, "a bearer that is not an admin's does not exempt");
});

t.test("a request the captcha refuses costs /signup's and /token's buckets nothing; elsewhere the limit comes first", async (t) => {
  const limitedApi = await startTestService({
    AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
    AUTH_SECURITY_CAPTCHA_SECRET: SECRET,
    AUTH_SECURITY_CAPTCHA_PROVIDER: 'turnstile',
    AUTH_SECURITY_CAPTCHA_VERIFY_URL: fake.url,
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
  });
  t.teardown(() => limitedApi.stop());
  const from = (ip: string) => ({ 'x-real-ip': ip });
  const email = uniqueEmail('bucket');
  const first = await limitedApi.request('POST', '/signup', {
    headers: from('198.51.100.7'),
    body: { email, password, ...meta('good-token') },
  });
  t.equal(first.status, 200);
  // Past each bucket's burst of 30, from the one address: a bot that solves no captcha.
  for (let i = 0; i < 35; i++) {
    const refused = [
      await limitedApi.request('POST', '/token?grant_type=password', { headers: from('198.51.100.7'), body: { email, password } }),
      await limitedApi.request('POST', '/signup', { headers: from('198.51.100.7'), body: { email: uniqueEmail('bot'), password } }),
    ];
    for (const r of refused) t.equal(r.body.error_code, 'captcha_failed', 'refused by the captcha, never by the limit');
  }
  const refreshed = await limitedApi.request('POST', '/token?grant_type=refresh_token', {
    headers: from('198.51.100.7'),
    body: { refresh_token: first.body.refresh_token },
  });
  t.equal(refreshed.status, 200, "the address's refresh grants still go through");
  const signedUp = await limitedApi.request('POST', '/signup', {
    headers: from('198.51.100.7'),
    body: { email: uniqueEmail('human'), password, ...meta('good-token') },
  });
  t.equal(signedUp.status, 200, 'and so do its sign-ups with a solved captcha');

  let otp = await limitedApi.request('POST', '/otp', { headers: from('198.51.100.8'), body: { email: uniqueEmail('otp') } });
  for (let i = 0; i < 35 && otp.status !== 429; i++) {
    t.equal(otp.body.error_code, 'captcha_failed');
    otp = await limitedApi.request('POST', '/otp', { headers: from('198.51.100.8'), body: { email: uniqueEmail('otp') } });
  }
  t.equal(otp.status, 429, "/otp takes its bucket first, as the original's limiter middleware does");
});

t.test('through auth-js: captchaToken in options is accepted, a missing one refused', async (t) => {
  const client = authClient(api.url);
  const refused = await client.signUp({ email: uniqueEmail('js'), password });
  t.match(refused.error, { status: 400, code: 'captcha_failed' });
  const ok = await client.signUp({ email: uniqueEmail('js'), password, options: { captchaToken: 'good-token' } });
  t.equal(ok.error, null);
  t.ok(ok.data.session, 'autoconfirmed: a session');
  const signedIn = await client.signInWithPassword({ email: known, password, options: { captchaToken: 'good-token' } });
  t.equal(signedIn.error, null);
});

t.test('a stalled provider: a prompt 503 that says what failed, and the service keeps answering', async (t) => {
  fake.stall(true);
  t.teardown(() => fake.stall(false));
  const res = await api.request('POST', '/otp', { body: { email: uniqueEmail('stall'), ...meta('good-token') } });
  t.equal(res.status, 503);
  t.match(res.body, { code: 503, error_code: 'captcha_failed', msg: 'captcha verification process failed' });
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  t.equal((await api.request('GET', '/health')).status, 200);
});

t.test('an unreachable provider is the same clear 503', async (t) => {
  const gone = await startSiteverifyFake(SECRET);
  await gone.close();
  const other = await startMailStack({
    AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
    AUTH_SECURITY_CAPTCHA_SECRET: SECRET,
    AUTH_SECURITY_CAPTCHA_VERIFY_URL: gone.url,
  });
  t.teardown(() => other.stop());
  const res = await other.api.request('POST', '/magiclink', { body: { email: uniqueEmail('gone'), ...meta('good-token') } });
  t.match([res.status, res.body], [503, { error_code: 'captcha_failed', msg: 'captcha verification process failed' }]);
});

t.test('a redirect from the siteverify address is not followed: the form, secret and all, goes nowhere else', async (t) => {
  for (const status of [307, 308]) {
    const redirector = http.createServer((req, res) => {
      req.resume();
      res.writeHead(status, { location: fake.url }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const other = await startMailStack({
      AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
      AUTH_SECURITY_CAPTCHA_SECRET: SECRET,
      AUTH_SECURITY_CAPTCHA_VERIFY_URL: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/siteverify`,
    });
    const before = fake.requests.length;
    const res = await other.api.request('POST', '/magiclink', { body: { email: uniqueEmail('moved'), ...meta('good-token') } });
    await other.stop();
    redirector.close();
    t.match([res.status, res.body], [503, { error_code: 'captcha_failed', msg: 'captcha verification process failed' }], `${status}`);
    t.equal(fake.requests.length, before, `${status}: the redirect's target received nothing`);
  }
});

t.test("provider defaults: each provider's real siteverify URL unless overridden", async (t) => {
  const base = { enabled: true, secret: 's', timeoutSeconds: 10, verifyUrl: '' };
  t.equal(verifyUrlOf({ ...base, provider: 'hcaptcha' }), 'https://hcaptcha.com/siteverify');
  t.equal(verifyUrlOf({ ...base, provider: 'turnstile' }), 'https://challenges.cloudflare.com/turnstile/v0/siteverify');
  t.equal(verifyUrlOf({ ...base, provider: 'turnstile', verifyUrl: 'http://127.0.0.1:1/x' }), 'http://127.0.0.1:1/x');
});

t.test('the token is read under member names in another case, as the original decodes them', async (t) => {
  const res = await api.request('POST', '/signup', {
    body: { email: uniqueEmail('cased'), password, GoTrue_Meta_Security: { Captcha_Token: 'good-token' } },
  });
  t.equal(res.status, 200, res.text);
});

t.test("the captcha check's own decoding refuses a mistyped gotrue_meta_security in Go's words, before any handler", async (t) => {
  const asked = fake.requests.length;
  const refused = (words: string) => [
    400,
    { code: 400, error_code: 'bad_json', msg: `Could not parse request body as JSON: json: cannot unmarshal ${words}` },
  ];
  for (const [meta, words] of [
    ['x', 'string into Go struct field captchaRequest.gotrue_meta_security of type api.captchaSecurity'],
    [{ Captcha_Token: 5 }, 'number into Go struct field captchaSecurity.gotrue_meta_security.captcha_token of type string'],
  ] as const) {
    const res = await api.request('POST', '/signup', { body: { email: uniqueEmail('typed'), password, gotrue_meta_security: meta } });
    t.strictSame([res.status, res.body], refused(words), words);
  }
  t.equal(fake.requests.length, asked, 'the provider is never asked');
});
