// Secrets never reach the log (issue 18 item 6): a full flow — sign-up, confirmation link, password
// grant with the password also in the query, refresh, magic link, email OTP, reauthentication nonce,
// admin calls with an admin bearer, and every secret parameter name in a query string — then the whole
// log file, at debug level, is scanned for every secret the test created or received.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startMailStack, codeOf, linkOf, fragmentOf } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { codeIn } from './helpers/users.js';

const stack = await startMailStack({
  AUTH_LOG_LEVEL: 'debug',
  AUTH_SMTP_MAX_FREQUENCY: '1ms',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
});
const { api, smtp } = stack;
t.teardown(() => stack.stop());

const secrets = new Set<string>();
const secret = <T extends string>(value: T): T => {
  if (value) secrets.add(value);
  return value;
};
const ok = (t: { ok(v: unknown, m: string): void }, res: { status: number; text: string }, what: string) =>
  t.ok(res.status < 300, `${what}: ${res.status}`);

t.test('a full flow, then a scan of the whole log', async (t) => {
  const email = uniqueEmail('secrets');
  const password = secret('Sign-up-password-9f3k2');
  ok(t, await api.request('POST', '/signup', { body: { email, password } }), 'sign-up');
  const confirm = linkOf(await smtp.waitForMail(email));
  secret(confirm.token);
  const verified = await api.request('GET', confirm.path);
  const fragment = fragmentOf(verified.headers.get('location'));
  secret(fragment.access_token);
  secret(fragment.refresh_token);

  const grant = await api.request('POST', `/token?grant_type=password&password=${encodeURIComponent(password)}`, {
    body: { email, password },
  });
  ok(t, grant, 'password grant');
  const access = secret(grant.body.access_token as string);
  const refreshToken = secret(grant.body.refresh_token as string);
  const refreshed = await api.request('POST', `/token?grant_type=refresh_token&refresh_token=${refreshToken}`, {
    body: { refresh_token: refreshToken },
  });
  ok(t, refreshed, 'refresh');
  secret(refreshed.body.access_token);
  secret(refreshed.body.refresh_token);

  ok(t, await api.request('POST', '/magiclink', { body: { email } }), 'magic link');
  const magic = linkOf(await smtp.waitForMail(email));
  secret(magic.token);
  ok(
    t,
    await api.request('POST', `/verify?token_hash=${magic.token}`, { body: { type: 'magiclink', token_hash: magic.token } }),
    'magic link verified',
  );

  // A second address: the first is inside the magic link's minimum mail interval.
  const other = uniqueEmail('secrets-otp');
  ok(t, await api.request('POST', '/otp', { body: { email: other } }), 'otp');
  const code = secret(codeOf(await smtp.waitForMail(other)));
  const byCode = await api.request('POST', `/verify?token=${code}&otp=${code}`, { body: { type: 'email', email: other, token: code } });
  ok(t, byCode, 'otp verified');
  const session = secret(byCode.body.access_token as string);
  secret(byCode.body.refresh_token);

  ok(t, await api.request('GET', '/reauthenticate', { token: session }), 'reauthenticate');
  const nonce = secret(codeIn((await smtp.waitForMail(other)).text));
  const newPassword = secret('Changed-password-7x2q');
  ok(
    t,
    await api.request('PUT', `/user?nonce=${nonce}&password=${newPassword}`, { token: session, body: { password: newPassword, nonce } }),
    'password change',
  );

  const admin = secret(await adminToken());
  const adminPassword = secret('Admin-set-password-4k8');
  ok(
    t,
    await api.request('POST', '/admin/users', { token: admin, body: { email: uniqueEmail('made'), password: adminPassword } }),
    'admin create',
  );
  ok(
    t,
    await api.request('GET', `/admin/users?apikey=${admin}`, { token: admin, headers: { apikey: admin, cookie: `sb=${access}` } }),
    'admin list',
  );

  // Every secret parameter name the rule knows, in one query string (the request itself may fail).
  const named = [
    'apikey',
    'code_verifier',
    'auth_code',
    'token',
    'refresh_token',
    'nonce',
    'token_hash',
    'access_token',
    'id_token',
    'captcha_token',
    'otp',
    'secret',
    'password',
    'Password',
    'client_secret',
    'recovery_token',
  ];
  const query = named.map((name, i) => `${name}=${secret(`q-secret-${i}-zz91`)}`).join('&');
  await api.request('POST', `/token?grant_type=pkce&${query}`, {
    body: { auth_code: secret('body-auth-code-1'), code_verifier: secret('body-verifier-1') },
  });
  await api.request('GET', `/settings?${query}&pass%77ord=${secret('encoded-key-secret-1')}`);

  // A browser's Referer names the page that asked, here the app's PKCE callback with its code in the query
  // (and a fragment, as a page could carry one): the log's referer field is that page, masked.
  const page = `http://localhost:3000/callback?code=${secret('referer-code-5h2')}&step=1#access_token=${secret('referer-fragment-7m3')}`;
  await api.request('POST', '/token?grant_type=pkce', {
    headers: { referer: page },
    body: { auth_code: secret('referer-auth-code-2'), code_verifier: secret('referer-verifier-2') },
  });

  await api.stop();
  const text = readFileSync(api.logFile, 'utf8');
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  t.ok(
    lines.some((l) => l.path === '/token' && /password=\[redacted\]/.test(l.query)),
    'the password grant is logged, its password masked',
  );
  t.ok(
    lines.some((l) => l.path === '/settings' && /apikey=\[redacted\]/.test(l.query)),
    'the settings request is logged',
  );
  t.ok(
    lines.some((l) => l.referer === 'http://localhost:3000/callback?code=[redacted]&step=1#access_token=[redacted]'),
    'the referer is logged, its secret parameters masked and the rest kept',
  );
  t.ok(secrets.size >= 30, `${secrets.size} secrets collected`);
  const leaked = [...secrets].filter((s) => text.includes(s) || text.includes(encodeURIComponent(s)));
  t.strictSame(leaked, [], 'no secret appears anywhere in the log');
});
