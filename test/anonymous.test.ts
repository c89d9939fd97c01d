// Anonymous sign-in (REFERENCE §14.2): POST /signup with neither email nor phone.
import t from 'tap';
import { startTestService } from './helpers/server.js';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

t.test('enabled: a session whose user and JWT say is_anonymous, with data as user_metadata', async (t) => {
  const api = await startTestService({ AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/signup', { body: { data: { theme: 'dark' } } });
  t.equal(res.status, 200);
  t.strictSame(Object.keys(res.body).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'user']);
  const user = res.body.user;
  t.match(user, {
    email: '',
    phone: '',
    role: 'authenticated',
    aud: 'authenticated',
    is_anonymous: true,
    app_metadata: {},
    user_metadata: { theme: 'dark' },
    identities: [],
  });
  t.strictSame(user.app_metadata, {}, 'no provider keys');
  const claims = claimsOf(res.body.access_token);
  t.equal(claims.is_anonymous, true);
  t.equal(claims.sub, user.id);
  t.equal(claims.role, 'authenticated');
  t.strictSame(
    claims.amr.map((a: { method: string }) => a.method),
    ['anonymous'],
  );
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.is_anonymous, true);
  const {
    rows: [row],
  } = await api.db.query('select is_anonymous, email, phone, encrypted_password from users where id = $1', [user.id]);
  t.strictSame(row, { is_anonymous: true, email: null, phone: null, encrypted_password: null });
  const { rows: audit } = await api.db.query("select payload from audit_log_entries where payload->>'actor_id' = $1", [user.id]);
  t.same(audit, [], 'an anonymous sign-in writes no audit entry, as in the original');
  const second = await api.request('POST', '/signup', { body: {} });
  t.not(second.body.user.id, user.id, 'each call is a new anonymous user');
});

t.test('disabled (the default): 422 anonymous_provider_disabled', async (t) => {
  const api = await startTestService();
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/signup', { body: {} });
  t.equal(res.status, 422);
  t.strictSame(res.body, { code: 422, error_code: 'anonymous_provider_disabled', msg: 'Anonymous sign-ins are disabled' });
  t.equal((await api.db.query('select 1 from users')).rowCount, 0);
});

t.test('DISABLE_SIGNUP: 422 signup_disabled even with anonymous sign-ins enabled', async (t) => {
  const api = await startTestService({ AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTH_DISABLE_SIGNUP: 'true' });
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/signup', { body: {} });
  t.strictSame(res.body, { code: 422, error_code: 'signup_disabled', msg: 'Signups not allowed for this instance' });
});

t.test('DISABLE_SIGNUP with anonymous sign-ins off: the anonymous refusal comes first, as the original checks it first', async (t) => {
  const api = await startTestService({ AUTH_DISABLE_SIGNUP: 'true' });
  t.teardown(() => api.stop());
  const anonymous = await api.request('POST', '/signup', { body: {} });
  t.strictSame(anonymous.body, { code: 422, error_code: 'anonymous_provider_disabled', msg: 'Anonymous sign-ins are disabled' });
  const withAddress = await api.request('POST', '/signup', { body: { email: 'someone@example.com', password: 'Secret-password-1' } });
  t.strictSame(withAddress.body, { code: 422, error_code: 'signup_disabled', msg: 'Signups not allowed for this instance' });
});

// The original decodes the sign-up body before it picks and takes a limiter, so a body it cannot decode is
// 400 and costs nothing: a client's malformed requests must not spend the hourly anonymous allowance.
t.test('a body that does not decode is 400 before the anonymous bucket is taken, as the original', async (t) => {
  const api = await startTestService({
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
    AUTH_RATE_LIMIT_ANONYMOUS_USERS: '2',
  });
  t.teardown(() => api.stop());
  const headers = { 'X-Real-IP': '203.0.113.7' };
  const bad: number[] = [];
  for (let i = 0; i < 3; i++) bad.push((await api.request('POST', '/signup', { headers, body: { data: 'not an object' } })).status);
  t.strictSame(bad, [400, 400, 400], 'each malformed body is refused for itself, never 429');
  const good: number[] = [];
  for (let i = 0; i < 3; i++) good.push((await api.request('POST', '/signup', { headers, body: {} })).status);
  t.strictSame(good, [200, 200, 429], 'the whole allowance is left for real sign-ins');
});
