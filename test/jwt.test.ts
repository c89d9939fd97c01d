// Access-token claims are an interface (REFERENCE §3); verification failures carry the original's
// 403 bad_jwt message text (REFERENCE §1.5).
import t from 'tap';
import { rejection } from './helpers/jwt.js';
import { createSecretKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { buildAccessTokenClaims, createJwtService, type AccessTokenClaims } from '../dist/server/auth/jwt.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const jwtConfig = {
  secret: SECRET,
  exp: 3600,
  aud: 'authenticated',
  issuer: '',
  keyId: '',
  keys: [],
  validMethods: [] as string[],
  adminGroupName: 'admin',
  defaultGroupName: 'authenticated',
  adminRoles: ['service_role', 'supabase_admin'],
  kms: { endpoint: '', accessKeyId: '', secretAccessKey: '', sessionToken: '', profile: '', timeoutSeconds: 3 },
};
const now = Math.floor(Date.now() / 1000);
const user = {
  id: '6b0c2d1e-0a43-4c5e-9a63-2f1b8e7d9c10',
  aud: 'authenticated',
  email: 'user@example.com',
  phone: null,
  role: 'authenticated',
  app_metadata: { provider: 'email', providers: ['email'] },
  user_metadata: {},
  is_anonymous: false,
};
const claims = (overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims => ({
  ...buildAccessTokenClaims({
    user,
    sessionId: '0e5d0b9c-7f3a-4d9e-8b1c-5a6f7e8d9c0b',
    aal: 'aal1',
    now,
    jwt: jwtConfig,
    amr: [
      { method: 'otp', timestamp: now - 100 },
      { method: 'password', timestamp: now - 10 },
    ],
  }),
  ...overrides,
});
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString());

t.test('claims are built in the original order, with iat/exp from JWT_EXP and AMR newest first', async (t) => {
  const built = claims();
  t.same(Object.keys(built), [
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
  t.equal(built.exp - built.iat, 3600);
  t.equal(built.phone, '');
  t.same(
    built.amr.map((x) => x.method),
    ['password', 'otp'],
  );
  const withIssuer = buildAccessTokenClaims({
    user,
    sessionId: 's',
    aal: 'aal1',
    amr: [],
    now,
    jwt: { exp: 60, issuer: 'https://auth.example.com' },
  });
  t.same(Object.keys(withIssuer).slice(0, 2), ['iss', 'sub']);
});

t.test('sign then verify round-trips the claims; header has typ and kid', async (t) => {
  const service = createJwtService({ ...jwtConfig, keyId: 'key-1' });
  const token = await service.sign(claims());
  const [header, payload] = token.split('.').map((part, i) => (i < 2 ? decode(part) : part));
  t.same(header, { alg: 'HS256', kid: 'key-1', typ: 'JWT' });
  t.same(Object.keys(payload), Object.keys(claims()), 'payload JSON keeps the claim order');
  t.same(await service.verify(token), claims());
  t.equal(service.algorithm, 'HS256');
});

t.test('no kid header without a key id', async (t) => {
  const token = await createJwtService(jwtConfig).sign(claims());
  t.same(decode(token.split('.')[0]), { alg: 'HS256', typ: 'JWT' });
});

t.test('alg none is rejected', async (t) => {
  const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`;
  t.equal(
    await rejection(createJwtService(jwtConfig).verify(token)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method none is invalid',
  );
});

t.test('a token signed with another secret is rejected', async (t) => {
  const token = await createJwtService({ ...jwtConfig, secret: 'another-secret-of-enough-length!!' }).sign(claims());
  t.equal(
    await rejection(createJwtService(jwtConfig).verify(token)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid',
  );
});

t.test('an expired token is rejected', async (t) => {
  const service = createJwtService(jwtConfig);
  const token = await service.sign(claims({ iat: now - 7200, exp: now - 3600 }));
  t.equal(
    await rejection(service.verify(token)),
    'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired',
  );
});

// golang-jwt v5, which the original parses bearers with, checks exp only when a token has one (it is
// never asked to require it): operators' keys minted without exp keep working after the swap.
t.test('a token without exp is accepted, and a string exp holding a number; another string is not', async (t) => {
  const { exp: _exp, ...rest } = claims();
  const key = createSecretKey(Buffer.from(SECRET));
  const token = await new SignJWT(rest).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
  t.same(await createJwtService(jwtConfig).verify(token), rest);
  // A header member the fast path does not know sends the token to jose (hs256.ts).
  const viaJose = await new SignJWT(rest).setProtectedHeader({ alg: 'HS256', typ: 'JWT', x5u: 'unused' }).sign(key);
  t.same(await createJwtService(jwtConfig).verify(viaJose), rest, 'the same through jose, past the fast path');
  // golang-jwt's NumericDate reads exp through a json.Number, which takes a string holding a JSON number.
  const withExp = (exp: string) => new SignJWT({ ...rest, exp } as never).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
  t.same(await createJwtService(jwtConfig).verify(await withExp(String(now + 60))), { ...rest, exp: now + 60 });
  t.equal(
    await rejection(createJwtService(jwtConfig).verify(await withExp('soon'))),
    'invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: could not parse NumericData: json: invalid number literal, trying to unmarshal "\\"soon\\"" into Number',
  );
});

t.test('HS384 with the same secret is rejected: the algorithm is pinned', async (t) => {
  const token = await new SignJWT({ ...claims() })
    .setProtectedHeader({ alg: 'HS384', typ: 'JWT' })
    .sign(createSecretKey(Buffer.from(SECRET)));
  t.equal(
    await rejection(createJwtService(jwtConfig).verify(token)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS384 is invalid',
  );
});

t.test('the audience is not checked at verify time', async (t) => {
  const service = createJwtService(jwtConfig);
  const token = await service.sign(claims({ aud: 'some-other-audience' }));
  t.equal((await service.verify(token)).aud, 'some-other-audience');
});

t.test('garbage is malformed', async (t) => {
  t.equal(
    await rejection(createJwtService(jwtConfig).verify('not-a-jwt')),
    'invalid JWT: unable to parse or verify signature, token is malformed: token contains an invalid number of segments',
  );
});

t.test('an empty secret is a programmer error at startup', async (t) => {
  t.throws(() => createJwtService({ ...jwtConfig, secret: '' }), TypeError);
});
