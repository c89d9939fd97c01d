// Access-token checks safer than the original (issue 18 item 7): a token's aud must be the audience the
// request works in (X-JWT-AUD, else JWT_AUD), never compared with itself; a sub that is not a UUID is
// the same 403 bad_jwt as any other bad token. Checked on every endpoint that takes a user's bearer.
// A token without exp is accepted, as the original accepts it; one whose exp no float64 holds is not.
import t from 'tap';
import { createHmac } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { signedToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const key = new TextEncoder().encode(JWT_SECRET);

const MISMATCH = { code: 400, error_code: 'validation_failed', msg: "Token audience doesn't match request audience" };
const USER_ENDPOINTS: Array<[string, string, unknown?]> = [
  ['GET', '/user'],
  ['PUT', '/user', { data: { a: 1 } }],
  ['GET', '/reauthenticate'],
  ['POST', '/logout?scope=local'],
];

const session = await signUp(api);
const claims = decodeJwt(session.access_token);
const { aud: _aud, ...withoutAud } = claims;

t.test('a token for another audience is refused on every user endpoint', async (t) => {
  const foreign = await signedToken({ ...claims, aud: 'some-other-audience' });
  for (const [method, path, body] of USER_ENDPOINTS) {
    const res = await api.request(method, path, { token: foreign, body });
    t.strictSame([res.status, res.body], [400, MISMATCH], `${method} ${path}`);
  }
});

t.test('a token without aud is refused', async (t) => {
  const res = await api.request('GET', '/user', { token: await signedToken(withoutAud) });
  t.strictSame([res.status, res.body], [400, MISMATCH]);
});

t.test('X-JWT-AUD chooses the audience: the token must match it, not JWT_AUD', async (t) => {
  const foreign = await signedToken({ ...claims, aud: 'some-other-audience' });
  const res = await api.request('GET', '/user', { token: foreign, headers: { 'X-JWT-AUD': 'some-other-audience' } });
  t.equal(res.status, 200);
  t.equal(res.body.id, session.user.id);
  const own = await api.request('GET', '/user', { token: session.access_token, headers: { 'X-JWT-AUD': 'some-other-audience' } });
  t.strictSame([own.status, own.body], [400, MISMATCH], 'an authenticated-audience token in another audience');
});

t.test("the configured audience in an aud list is accepted; the service's own tokens work", async (t) => {
  const listed = await api.request('GET', '/user', { token: await signedToken({ ...claims, aud: ['x', 'authenticated'] }) });
  t.equal(listed.status, 200);
  t.equal((await api.request('GET', '/user', { token: session.access_token })).status, 200);
});

t.test('a sub that is not a UUID is 403 bad_jwt on every user endpoint', async (t) => {
  const token = await signedToken({ ...claims, sub: 'not-a-uuid' });
  for (const [method, path, body] of USER_ENDPOINTS) {
    const res = await api.request(method, path, { token, body });
    t.strictSame(
      [res.status, res.body],
      [403, { code: 403, error_code: 'bad_jwt', msg: 'invalid claim: sub claim must be a UUID' }],
      `${method} ${path}`,
    );
  }
});

// The original parses bearers with golang-jwt v5 and never asks it to require exp, so a key an operator
// minted without one (the Supabase CLI's admin token is such a key) works there; it must keep working here.
t.test('a token without exp is accepted on user and admin endpoints; an expired one is not', async (t) => {
  const { exp: _exp, ...withoutExp } = claims;
  const signedAsIs = (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
  const user = await api.request('GET', '/user', { token: await signedAsIs(withoutExp) });
  t.strictSame([user.status, user.body.id], [200, session.user.id], 'GET /user with the session token minus exp');
  const admin = await api.request('GET', '/admin/users', { token: await signedAsIs({ role: 'service_role' }) });
  t.equal(admin.status, 200, 'a service-role key with no exp, iat or sub');
  t.ok(Array.isArray(admin.body.users));
  const expired = await api.request('GET', '/user', {
    token: await signedAsIs({ ...withoutExp, exp: Math.floor(Date.now() / 1000) - 60 }),
  });
  t.strictSame(
    [expired.status, expired.body.error_code, expired.body.msg],
    [403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired'],
  );
});

// The original decodes every bearer into its claims struct, so a claim of another JSON type is a malformed
// token there. Here a one-element array as sub read as text, passed the UUID check and reached the
// database as an array literal: a 500 on every user endpoint, and on admin ones for a token with a session.
t.test('a claim of another JSON type is 403 bad_jwt, before anything reads it', async (t) => {
  const malformed = (reason: string) => ({
    code: 403,
    error_code: 'bad_jwt',
    msg: `invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: ${reason}`,
  });
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...claims, sub: [claims.sub] }, 'json: cannot unmarshal array into Go struct field AccessTokenClaims.sub of type string'],
    [{ ...claims, session_id: 7 }, 'json: cannot unmarshal number into Go struct field AccessTokenClaims.session_id of type string'],
    [
      { ...claims, is_anonymous: 'false' },
      'json: cannot unmarshal string into Go struct field AccessTokenClaims.is_anonymous of type bool',
    ],
    [
      { ...claims, user_metadata: [] },
      'json: cannot unmarshal array into Go struct field AccessTokenClaims.user_metadata of type map[string]interface {}',
    ],
    [{ ...claims, aud: ['authenticated', 1] }, 'invalid type for claim'],
    [{ ...claims, amr: 'password' }, 'json: cannot unmarshal string into Go struct field AccessTokenClaims.amr of type []json.RawMessage'],
    [{ ...claims, amr: ['otp', 7] }, 'json: cannot unmarshal number into Go struct field AccessTokenClaims.amr of type models.AMREntry'],
    [
      { ...claims, amr: [{ Method: ['password'], timestamp: 1 }] },
      'json: cannot unmarshal array into Go struct field AccessTokenClaims.amr.method of type string',
    ],
    [
      { ...claims, amr: [{ method: 'password', timestamp: 1.5 }] },
      'json: cannot unmarshal number 1.5 into Go struct field AccessTokenClaims.amr.timestamp of type int64',
    ],
    // A decoder's own error stops Go's decoding at once; a plain field's mismatch before it is only remembered.
    [{ ...claims, role: 1, amr: {} }, 'json: cannot unmarshal object into Go struct field AccessTokenClaims.amr of type []json.RawMessage'],
  ];
  for (const [payload, reason] of cases) {
    for (const [method, path, body] of USER_ENDPOINTS) {
      const res = await api.request(method, path, { token: await signedToken(payload), body });
      t.strictSame([res.status, res.body], [403, malformed(reason)], `${method} ${path}: ${reason}`);
    }
  }
  const admin = await api.request('GET', '/admin/users', {
    token: await signedToken({ role: ['service_role'], sub: claims.sub, session_id: claims.session_id }),
  });
  t.strictSame(
    [admin.status, admin.body],
    [403, malformed('json: cannot unmarshal array into Go struct field AccessTokenClaims.role of type string')],
    'an admin key whose role is a list',
  );
  const nulls = await api.request('GET', '/user', { token: await signedToken({ ...claims, email: null, app_metadata: null }) });
  t.equal(nulls.status, 200, 'null is an absent claim, as Go leaves the field empty');
  const amrForms = await api.request('GET', '/user', {
    token: await signedToken({ ...claims, amr: ['password', null, { METHOD: 'otp', timestamp: 1, provider: null }] }),
  });
  t.equal(amrForms.status, 200, 'amr entries may be method names or objects, as the original reads them');
});

// JSON.parse reads 1e400 as Infinity, so an exp past a float64's range made a token that never expires;
// the original cannot hold such a number and refuses the token as malformed.
t.test('an exp or iat past the range of a float64 is 403 bad_jwt, not a token that never expires', async (t) => {
  /** An HS256 token whose payload is this text exactly, so that a number can be written as JSON.stringify never would. */
  const rawToken = (payload: string) => {
    const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
    return `${input}.${createHmac('sha256', JWT_SECRET).update(input).digest('base64url')}`;
  };
  const malformed = (literal: string) => ({
    code: 403,
    error_code: 'bad_jwt',
    msg: `invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: could not convert json number value to float: strconv.ParseFloat: parsing "${literal}": value out of range`,
  });
  const { exp: _exp, ...withoutExp } = claims;
  const user = JSON.stringify(withoutExp).replace(/}$/, ',"exp":1e400}');
  const res = await api.request('GET', '/user', { token: rawToken(user) });
  t.strictSame([res.status, res.body], [403, malformed('1e400')], 'a user token');
  const key = rawToken(`{"role":"service_role","iat":1E+999,"exp":${Math.floor(Date.now() / 1000) + 600}}`);
  const admin = await api.request('GET', '/admin/users', { token: key });
  t.strictSame([admin.status, admin.body], [403, malformed('1E+999')], 'a service_role key');
});
