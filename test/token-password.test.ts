// POST /token?grant_type=password (REFERENCE §2.2), the access token's claims (§3.1), and GET /user's
// authentication checks (§1.5).
import t from 'tap';
import bcrypt from 'bcryptjs';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { JWT_SECRET, startTestService } from './helpers/server.js';
import { behindDeletion } from './helpers/row-lock.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_EXTERNAL_PHONE_ENABLED: 'true', AUTH_SMS_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const key = new TextEncoder().encode(JWT_SECRET);
const login = (body: unknown) => api.request('POST', '/token?grant_type=password', { body });

const alice = (
  await api.request('POST', '/signup', { body: { email: 'alice@example.com', password: 'correct-horse', data: { name: 'Alice' } } })
).body;

t.test('error rows', async (t) => {
  const cases: Array<[unknown, number, string, string]> = [
    [
      { email: 'alice@example.com', phone: '15550001111', password: 'x' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on login.',
    ],
    [{ password: 'x' }, 400, 'validation_failed', 'missing email or phone'],
    // White space alone is an email sent, as in the original: it names no one, and is one beside a phone.
    [{ email: '  ', password: 'x' }, 400, 'invalid_credentials', 'Invalid login credentials'],
    [
      { email: '  ', phone: '15550001111', password: 'x' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on login.',
    ],
    [{ email: 'alice@example.com', password: 'wrong-password' }, 400, 'invalid_credentials', 'Invalid login credentials'],
    [{ email: 'nobody@example.com', password: 'correct-horse' }, 400, 'invalid_credentials', 'Invalid login credentials'],
    [{ phone: '+15550009999', password: 'correct-horse' }, 400, 'invalid_credentials', 'Invalid login credentials'],
    [
      { email: 'alice@example.com', password: 12 },
      400,
      'bad_json',
      'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field PasswordGrantParams.password of type string',
    ],
    // null is an empty string, as the original decodes it, not a wrong type.
    [{ email: null, phone: null, password: 'x' }, 400, 'validation_failed', 'missing email or phone'],
    [{ email: 'alice@example.com', password: null }, 400, 'invalid_credentials', 'Invalid login credentials'],
  ];
  for (const [body, status, code, msg] of cases) {
    const res = await login(body);
    t.strictSame({ status: res.status, body: res.body }, { status, body: { code: status, error_code: code, msg } }, msg);
  }
  const unsupported = await api.request('POST', '/token?grant_type=magic', { body: {} });
  t.strictSame(unsupported.body, { code: 400, error_code: 'invalid_credentials', msg: 'unsupported_grant_type' });
  const missing = await api.request('POST', '/token', { body: {} });
  t.equal(missing.status, 400);
});

t.test('an unknown user and a wrong password get the same answer after the same work', async (t) => {
  const unknown = await login({ email: 'ghost@example.com', password: 'correct-horse' });
  const wrong = await login({ email: 'alice@example.com', password: 'not-it' });
  t.strictSame(unknown.body, wrong.body);
  t.equal(unknown.status, wrong.status);
});

t.test("success: the token response and the access token's claims", async (t) => {
  const res = await login({ email: 'alice@example.com', password: 'correct-horse' });
  t.equal(res.status, 200);
  t.strictSame(Object.keys(res.body), ['access_token', 'token_type', 'expires_in', 'expires_at', 'refresh_token', 'user', 'weak_password']);
  t.equal(res.body.weak_password, null, "the original's answer carries it, null for a strong password");
  t.equal(res.body.token_type, 'bearer');
  t.equal(res.body.expires_in, 3600);
  t.match(res.body.refresh_token, /^[a-z2-7]{12}$/);
  t.equal(res.body.user.id, alice.user.id);
  t.same(decodeProtectedHeader(res.body.access_token), { alg: 'HS256', typ: 'JWT' });
  const { payload } = await jwtVerify(res.body.access_token, key, { algorithms: ['HS256'] });
  const session = await api.db.query('select id from sessions where user_id = $1 order by created_at desc limit 1', [alice.user.id]);
  t.strictSame(Object.keys(payload), [
    'sub',
    'aud',
    'exp',
    'iat',
    'email',
    'phone',
    'app_metadata',
    'user_metadata',
    'role',
    'aal',
    'amr',
    'session_id',
    'is_anonymous',
  ]);
  t.match(payload, {
    sub: alice.user.id,
    aud: 'authenticated',
    email: 'alice@example.com',
    phone: '',
    role: 'authenticated',
    aal: 'aal1',
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: { name: 'Alice', email_verified: true },
    session_id: session.rows[0].id,
    is_anonymous: false,
  });
  t.equal(payload.exp! - payload.iat!, 3600);
  t.equal(res.body.expires_at, payload.exp);
  t.equal((payload.amr as any[])[0].method, 'password');
  const stored = await api.db.query('select token_hash from refresh_tokens where session_id = $1', [session.rows[0].id]);
  t.not(stored.rows[0].token_hash, res.body.refresh_token, 'refresh tokens are stored hashed');
});

t.test('phone login, normalised', async (t) => {
  await api.request('POST', '/signup', { body: { phone: '+44 7700 900123', password: 'correct-horse' } });
  const res = await login({ phone: '447700900123', password: 'correct-horse' });
  t.equal(res.status, 200);
  t.equal(res.body.user.phone, '447700900123');
});

t.test("an SSO user's phone and password sign in nobody: its sign-ins are the IdP's, as the original looks it up", async (t) => {
  const made = await api.request('POST', '/signup', { body: { phone: '+15550007711', password: 'correct-horse' } });
  t.equal(made.status, 200);
  t.equal((await login({ phone: '15550007711', password: 'correct-horse' })).status, 200, 'a plain user signs in');
  await api.db.query(`update users set is_sso_user = true where phone = '15550007711'`);
  const res = await login({ phone: '15550007711', password: 'correct-horse' });
  t.same([res.status, res.body.error_code], [400, 'invalid_credentials']);
});

t.test('a banned user is told so only after a correct password; a wrong one reveals nothing', async (t) => {
  await api.request('POST', '/signup', { body: { email: 'banned@example.com', password: 'correct-horse' } });
  await api.db.query("update users set banned_until = now() + interval '1 hour' where email = 'banned@example.com'");
  const res = await login({ email: 'banned@example.com', password: 'correct-horse' });
  t.strictSame(res.body, { code: 400, error_code: 'user_banned', msg: 'User is banned' });
  const wrong = await login({ email: 'banned@example.com', password: 'wrong-horse' });
  t.strictSame(wrong.body, { code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' });
});

t.test('unconfirmed email and phone are refused after a correct password', async (t) => {
  await api.db.query(
    `insert into users (aud, role, email, encrypted_password) values ('authenticated', 'authenticated', 'unconfirmed@example.com', $1)`,
    [bcrypt.hashSync('correct-horse', 4)],
  );
  t.strictSame((await login({ email: 'unconfirmed@example.com', password: 'correct-horse' })).body, {
    code: 400,
    error_code: 'email_not_confirmed',
    msg: 'Email not confirmed',
  });
  t.strictSame(
    (await login({ email: 'unconfirmed@example.com', password: 'wrong' })).body,
    { code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' },
    'a wrong password reveals nothing',
  );
  await api.db.query(
    `insert into users (aud, role, phone, encrypted_password) values ('authenticated', 'authenticated', '15550002222', $1)`,
    [bcrypt.hashSync('correct-horse', 4)],
  );
  t.strictSame((await login({ phone: '15550002222', password: 'correct-horse' })).body, {
    code: 400,
    error_code: 'phone_not_confirmed',
    msg: 'Phone not confirmed',
  });
});

t.test('an imported bcrypt hash verifies and is upgraded to argon2id', async (t) => {
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', 'imported@example.com', now(), $1)`,
    [bcrypt.hashSync('legacy-pass', 10)],
  );
  const res = await login({ email: 'imported@example.com', password: 'legacy-pass' });
  t.equal(res.status, 200);
  const { rows } = await api.db.query("select encrypted_password from users where email = 'imported@example.com'");
  t.match(rows[0].encrypted_password, /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/, 'rehashed with the current parameters');
  t.equal((await login({ email: 'imported@example.com', password: 'legacy-pass' })).status, 200, 'the new hash verifies');
});

t.test('a stored bcrypt hash of a cost no check could finish in time is refused without running it', async (t) => {
  // Cost 31 takes days: run, it held a crypto thread for good and every later sign-in there timed out.
  const email = 'bcrypt-31@example.com';
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', $1, now(), $2)`,
    [email, bcrypt.hashSync('legacy-pass', 4).replace('$04$', '$31$')],
  );
  const refused = await login({ email, password: 'legacy-pass' });
  t.equal(refused.status, 400, refused.text);
  t.equal(refused.body.error_code, 'invalid_credentials');
  const admin = await api.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { email: 'bcrypt-17@example.com', password_hash: bcrypt.hashSync('x', 4).replace('$04$', '$17$') },
  });
  t.equal(admin.status, 400, 'an admin may not store one either');
  t.equal(admin.body.error_code, 'validation_failed');
});

t.test('GET /user and its authentication errors', async (t) => {
  const session = (await login({ email: 'alice@example.com', password: 'correct-horse' })).body;
  const ok = await api.request('GET', '/user', { token: session.access_token });
  t.equal(ok.status, 200);
  t.equal(ok.body.id, alice.user.id);
  t.equal(ok.body.identities.length, 1);
  t.notOk('encrypted_password' in ok.body);

  const sign = (claims: Record<string, unknown>, secret = key, alg = 'HS256') =>
    new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).setIssuedAt().setExpirationTime('1h').sign(secret);
  const claims = decodeJwt(session.access_token);
  const cases: Array<[Record<string, string>, number, string, string | RegExp]> = [
    [{}, 401, 'no_authorization', 'This endpoint requires a valid Bearer token'],
    [{ authorization: 'Basic abc' }, 401, 'no_authorization', 'This endpoint requires a valid Bearer token'],
    [{ authorization: 'Bearer not.a.jwt' }, 403, 'bad_jwt', /^invalid JWT: unable to parse or verify signature, /],
    [
      { authorization: `Bearer ${await sign(claims, new TextEncoder().encode('another-secret-of-enough-length'))}` },
      403,
      'bad_jwt',
      'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid',
    ],
    [
      { authorization: `Bearer ${await sign(claims, key, 'HS384')}` },
      403,
      'bad_jwt',
      'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS384 is invalid',
    ],
    [
      {
        authorization: `Bearer ${await new SignJWT({ ...claims })
          .setProtectedHeader({ alg: 'HS256' })
          .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
          .sign(key)}`,
      },
      403,
      'bad_jwt',
      'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired',
    ],
    [{ authorization: `Bearer ${unsignedToken(claims)}` }, 403, 'bad_jwt', /^invalid JWT: unable to parse or verify signature, /],
    [{ authorization: `Bearer ${await sign({ role: 'anon' })}` }, 403, 'bad_jwt', 'invalid claim: missing sub claim'],
    [
      { authorization: `Bearer ${await sign({ ...claims, sub: 'not-a-uuid' })}` },
      403,
      'bad_jwt',
      'invalid claim: sub claim must be a UUID',
    ],
    [
      { authorization: `Bearer ${await sign({ ...claims, sub: '00000000-0000-4000-8000-000000000000' })}` },
      403,
      'user_not_found',
      'User from sub claim in JWT does not exist',
    ],
    [
      { authorization: `Bearer ${await sign({ ...claims, session_id: 'nope' })}` },
      403,
      'bad_jwt',
      'invalid claim: session_id claim must be a UUID',
    ],
    [
      { authorization: `Bearer ${await sign({ ...claims, session_id: '00000000-0000-4000-8000-000000000000' })}` },
      403,
      'session_not_found',
      'Session from session_id claim in JWT does not exist',
    ],
  ];
  for (const [headers, status, code, msg] of cases) {
    const res = await api.request('GET', '/user', { headers });
    t.equal(res.status, status, String(msg));
    t.equal(res.body.error_code, code);
    t.match(res.body.msg, msg);
  }
  const mismatch = await api.request('GET', '/user', { token: session.access_token, headers: { 'x-jwt-aud': 'other' } });
  t.strictSame(mismatch.body, { code: 400, error_code: 'validation_failed', msg: "Token audience doesn't match request audience" });

  await api.db.query("update users set banned_until = now() + interval '1 hour' where id = $1", [alice.user.id]);
  const banned = await api.request('GET', '/user', { token: session.access_token });
  t.strictSame(banned.body, { code: 403, error_code: 'user_banned', msg: 'User is banned' });
  await api.db.query('update users set banned_until = null where id = $1', [alice.user.id]);
});

t.test('a user deleted while its sign-in waits for its row: 400 invalid_credentials and no session, not a 500', async (t) => {
  for (const soft of [false, true]) {
    const email = `deleted-at-login-${soft ? 'soft' : 'hard'}@example.com`;
    const { id } = (await api.request('POST', '/signup', { body: { email, password: 'correct-horse' } })).body.user;
    // The deletion waits for the row first; the sign-in, past its lookup and password check, behind it.
    const res = await behindDeletion(api, id, soft, () => login({ email, password: 'correct-horse' }));
    const label = soft ? 'soft-deleted' : 'deleted';
    t.strictSame([res.status, res.body], [400, { code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' }], label);
    const sessions = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [id]);
    t.equal(sessions.rows[0].n, 0, `${label}: no session outlives the deletion`);
  }
});

t.test('the 2024-01-01 error shape for auth-js', async (t) => {
  const res = await api.request('POST', '/token?grant_type=password', {
    body: { email: 'alice@example.com', password: 'nope' },
    headers: { 'X-Supabase-Api-Version': '2024-01-01' },
  });
  t.strictSame(res.body, { code: 'invalid_credentials', message: 'Invalid login credentials' });
  t.equal(res.headers.get('x-supabase-api-version'), '2024-01-01');
});

t.test('without JWT_AUD, as the original: a user with aud "" signs in and its token carries aud ""', async (t) => {
  // The test services set both to `authenticated`; an empty value is the original's default.
  const plain = await startTestService({ AUTH_JWT_AUD: '', AUTH_JWT_DEFAULT_GROUP_NAME: '' });
  t.teardown(() => plain.stop());
  t.equal(plain.service.config.jwt.aud, '');
  await plain.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('', '', 'before-the-swap@example.com', now(), $1)`,
    [bcrypt.hashSync('legacy-pass', 10)],
  );
  const res = await plain.request('POST', '/token?grant_type=password', {
    body: { email: 'before-the-swap@example.com', password: 'legacy-pass' },
  });
  t.equal(res.status, 200, res.text);
  const claims = decodeJwt(res.body.access_token);
  t.equal(claims.aud, '');
  t.equal(claims.role, '');
  t.equal(res.body.user.aud, '');
  const user = await plain.request('GET', '/user', { token: res.body.access_token });
  t.equal(user.status, 200, 'the token is for the audience requests work in');
});

function unsignedToken(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`;
}
