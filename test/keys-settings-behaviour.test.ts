// The public metadata and the bearer check, against the original (internal/api/settings.go, jwks.go, auth.go,
// middleware.go, conf/jwk.go): what GET /settings derives from which setting, GET /health's body, the JWKS
// for JWT_SECRET alone and for asymmetric JWT_KEYS, and how a bearer token's key and algorithm are chosen:
// JWT_VALID_METHODS, else the algorithms of JWT_KEYS (HS256 with none), so JWT_SECRET verifies only while
// HS256 is accepted; an unknown kid under another algorithm is named; exp and nbf have no leeway, iat is
// not checked; the admin guard's role check and its answers.
import t from 'tap';
import { createPrivateKey, createSecretKey, type JsonWebKey } from 'node:crypto';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { adminToken, signedToken } from './helpers/admin.js';
import { jwtService, rejection } from './helpers/jwt.js';
import { signUp } from './helpers/accounts.js';
import { spPrivateKey } from './helpers/saml-idp.js';
import { PASSKEY_ENV } from './helpers/passkeys.js';
import { generateJwk } from '../dist/server/auth/keys.js';
import { loadConfig } from '../dist/server/config/load.js';
import { settingsBody } from '../dist/server/routes/settings.js';

const PREFIX = 'invalid JWT: unable to parse or verify signature, ';
const now = () => Math.floor(Date.now() / 1000);
type Jwk = JsonWebKey & { kid: string; alg: string };
const verifyOnly = (jwk: Jwk): Jwk => ({ ...jwk, key_ops: ['verify'] });
/** A JWK's public half alone: a retired key whose private part is gone. */
const publicHalf = ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: Jwk): Jwk => ({ ...rest, key_ops: ['verify'] });
const signWith = (
  jwk: Jwk,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = { alg: jwk.alg, kid: jwk.kid, typ: 'JWT' },
) =>
  new SignJWT(claims)
    .setProtectedHeader(header as { alg: string })
    .sign(jwk.kty === 'oct' ? Buffer.from(String(jwk.k), 'base64url') : createPrivateKey({ key: jwk, format: 'jwk' }));
const withSecret = (claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }) =>
  new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(createSecretKey(Buffer.from(JWT_SECRET)));
const serviceRole = () => ({ role: 'service_role', iat: now(), exp: now() + 600 });
const badJwt = (reason: string) => ({ code: 403, error_code: 'bad_jwt', msg: PREFIX + reason });

// Two services, both started before any test runs (tap ends the file once its queued tests are done):
// JWT_SECRET alone with a JWT_KEY_ID, and asymmetric JWT_KEYS (a retired RS256 key as its public half,
// the ES256 signer, a verify-only EdDSA key) beside the test JWT_SECRET.
const signer = generateJwk('ES256');
const retired = generateJwk('RS256');
const ed = verifyOnly(generateJwk('EdDSA'));
const [hs, keyed] = await Promise.all([
  startTestService({ AUTH_JWT_KEY_ID: 'legacy-kid', AUTH_MAILER_AUTOCONFIRM: 'true' }),
  startTestService({
    AUTH_JWT_KEYS: JSON.stringify([publicHalf(retired), signer, ed]),
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_JWT_ISSUER: 'https://auth.example.com/auth/v1/',
  }),
]);
t.teardown(() => Promise.all([hs.stop(), keyed.stop()]));

// ---------------------------------------------------------------- GET /settings: each field's setting

const settingsOf = (env: Record<string, string>) =>
  settingsBody(loadConfig({ envFile: null, env: { AUTH_SITE_URL: 'http://localhost:3000', ...env } }));

t.test('GET /settings: each field follows its setting as in the original', async (t) => {
  const plain = settingsOf({});
  t.strictSame(Object.keys(plain), [
    'external',
    'disable_signup',
    'autoconfirm',
    'mailer_autoconfirm',
    'phone_autoconfirm',
    'sms_provider',
    'saml_enabled',
    'saml_private_key_next_configured',
    'passkeys_enabled',
  ]);
  const external = plain.external as Record<string, boolean>;
  t.strictSame(
    Object.entries(external).filter(([, on]) => on),
    [['email', true]],
    'by default only email is on, as EXTERNAL_EMAIL_ENABLED defaults to true',
  );
  t.equal(Object.keys(external)[0], 'anonymous_users');
  t.strictSame(
    [plain.disable_signup, plain.autoconfirm, plain.mailer_autoconfirm, plain.phone_autoconfirm, plain.sms_provider],
    [false, false, false, false, ''],
  );
  t.strictSame([plain.saml_enabled, plain.saml_private_key_next_configured, plain.passkeys_enabled], [false, false, false]);

  const on = settingsOf({
    ...PASSKEY_ENV,
    AUTH_DISABLE_SIGNUP: 'true',
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_SMS_AUTOCONFIRM: 'true',
    AUTH_SMS_PROVIDER: 'twilio',
    AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC0',
    AUTH_SMS_TWILIO_AUTH_TOKEN: 'token',
    AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG0',
    AUTH_EXTERNAL_EMAIL_ENABLED: 'false',
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_EXTERNAL_GITLAB_ENABLED: 'true',
    AUTH_EXTERNAL_GITLAB_CLIENT_ID: 'id',
    AUTH_EXTERNAL_GITLAB_SECRET: 'secret',
    AUTH_EXTERNAL_GITLAB_REDIRECT_URI: 'http://localhost/callback',
    // Enabled without credentials: false here, the original lists it true (docs/differences.md).
    AUTH_EXTERNAL_DISCORD_ENABLED: 'true',
  });
  t.strictSame(
    [on.disable_signup, on.autoconfirm, on.mailer_autoconfirm, on.phone_autoconfirm, on.sms_provider, on.passkeys_enabled],
    [true, true, true, true, 'twilio', true],
  );
  const onExternal = on.external as Record<string, boolean>;
  t.strictSame(
    Object.entries(onExternal).filter(([, enabled]) => enabled),
    [
      ['anonymous_users', true],
      ['gitlab', true],
      ['phone', true],
    ],
  );
  t.equal(onExternal.discord, false);

  const samlOn = { AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey() };
  t.strictSame([settingsOf(samlOn).saml_enabled, settingsOf(samlOn).saml_private_key_next_configured], [true, false]);
  const next = settingsOf({ ...samlOn, AUTH_SAML_PRIVATE_KEY_NEXT: spPrivateKey() });
  t.strictSame([next.saml_enabled, next.saml_private_key_next_configured], [true, true]);
});

// ---------------------------------------------------------------- verification rules, on the JWT service itself

const service = (keys: JsonWebKey[], validMethods: string[] = [], extra: Record<string, unknown> = {}) =>
  jwtService(JWT_SECRET, keys, validMethods, extra);

t.test('the accepted algorithms: JWT_VALID_METHODS, else those of JWT_KEYS, else HS256', async (t) => {
  const es = generateJwk('ES256');
  const hs = verifyOnly(generateJwk('HS256'));
  const legacy = await withSecret(serviceRole());
  const refusedHs256 = PREFIX + 'token signature is invalid: signing method HS256 is invalid';
  t.equal((await service([]).verify(legacy)).role, 'service_role', 'JWT_SECRET alone: HS256');
  t.equal(await rejection(service([es]).verify(legacy)), refusedHs256, 'JWT_KEYS of ES256 alone: the secret is revoked');
  t.equal((await service([es, hs]).verify(legacy)).role, 'service_role', 'an HS256 key in JWT_KEYS keeps the secret');
  t.equal((await service([es], ['ES256', 'HS256']).verify(legacy)).role, 'service_role', 'or HS256 in JWT_VALID_METHODS');
  t.equal(await rejection(service([], ['ES256']).verify(legacy)), refusedHs256, 'JWT_VALID_METHODS decides for the secret too');
  // JWT_KEY_ID names the secret: a kid that is no key of JWT_KEYS is checked against it while HS256 is accepted.
  const keyed = await withSecret(serviceRole(), { alg: 'HS256', kid: 'legacy', typ: 'JWT' });
  t.equal((await service([es, hs], [], { keyId: 'legacy' }).verify(keyed)).role, 'service_role');
  t.equal(await rejection(service([es], [], { keyId: 'legacy' }).verify(keyed)), refusedHs256);
  // The service's own tokens, signed with JWT_KEYS' signer, verify whatever else is accepted.
  const own = service([es]);
  t.equal((await own.verify(await own.sign({ ...serviceRole() }))).role, 'service_role');
});

t.test('a token whose kid names no configured key', async (t) => {
  const es = generateJwk('ES256');
  const jwt = service([es, verifyOnly(generateJwk('HS256'))]);
  const stranger = generateJwk('ES256');
  t.equal(
    await rejection(jwt.verify(await signWith(stranger, serviceRole()))),
    `${PREFIX}token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${stranger.kid} for algorithm ES256`,
  );
  t.equal(
    await rejection(jwt.verify(await signWith(stranger, serviceRole(), { alg: 'ES256' }))),
    `${PREFIX}token is unverifiable: error while executing keyfunc: unrecognized JWT kid <nil> for algorithm ES256`,
    'no kid at all',
  );
  t.equal(
    await rejection(jwt.verify(await signWith(generateJwk('RS256'), serviceRole()))),
    `${PREFIX}token signature is invalid: signing method RS256 is invalid`,
    'an algorithm not accepted is refused before the key is looked for',
  );
  // HS256 under an unknown kid falls back to JWT_SECRET, whose signature it does not carry.
  t.equal(
    await rejection(jwt.verify(await signWith(generateJwk('HS256'), serviceRole()))),
    `${PREFIX}token signature is invalid: signature is invalid`,
  );
  // Under a configured kid, only that key verifies.
  const forged = { ...generateJwk('ES256'), kid: es.kid };
  t.equal(await rejection(jwt.verify(await signWith(forged, serviceRole()))), `${PREFIX}token signature is invalid: signature is invalid`);
});

t.test("the header's alg: unspecified, unknown, or none, in golang-jwt's words", async (t) => {
  const jwt = service([]);
  const b64 = (x: unknown) => Buffer.from(JSON.stringify(x)).toString('base64url');
  const body = b64(serviceRole());
  t.equal(
    await rejection(jwt.verify(`${b64({ typ: 'JWT' })}.${body}.x`)),
    `${PREFIX}token is unverifiable: signing method (alg) is unspecified`,
  );
  t.equal(
    await rejection(jwt.verify(`${b64({ alg: 'XS1' })}.${body}.x`)),
    `${PREFIX}token is unverifiable: signing method (alg) is unavailable`,
  );
  t.equal(
    await rejection(jwt.verify(`${b64({ alg: 'none' })}.${body}.`)),
    `${PREFIX}token signature is invalid: signing method none is invalid`,
  );
  t.equal(
    await rejection(jwt.verify(`${b64({ alg: 'RS256' })}.${body}`)),
    `${PREFIX}token is malformed: token contains an invalid number of segments`,
    'the segments are counted first',
  );
  // Under a configured kid the same words: the algorithm is checked before the key's signature.
  const es = generateJwk('ES256');
  const keyed = service([es]);
  t.equal(
    await rejection(keyed.verify(`${b64({ alg: 'XS1', kid: es.kid })}.${body}.x`)),
    `${PREFIX}token is unverifiable: signing method (alg) is unavailable`,
  );
  t.equal(
    await rejection(keyed.verify(`${b64({ kid: es.kid })}.${body}.x`)),
    `${PREFIX}token is unverifiable: signing method (alg) is unspecified`,
  );
});

t.test('exp and nbf without leeway, iat not checked, no claim required', async (t) => {
  const jwt = service([]);
  const at = now();
  t.equal(await rejection(jwt.verify(await withSecret({ exp: at }))), `${PREFIX}token has invalid claims: token is expired`, 'exp = now');
  t.ok(await jwt.verify(await withSecret({ exp: at + 2 })), 'exp just ahead');
  t.equal(
    await rejection(jwt.verify(await withSecret({ nbf: at + 5 }))),
    `${PREFIX}token has invalid claims: token is not valid yet`,
    'nbf a few seconds ahead',
  );
  t.ok(await jwt.verify(await withSecret({ nbf: at })), 'nbf = now');
  t.ok(await jwt.verify(await withSecret({ iat: at + 3600, exp: at + 7200 })), 'an iat in the future is not checked');
  t.ok(await jwt.verify(await withSecret({ role: 'anon' })), 'no exp, no iat, no sub');
});

// ---------------------------------------------------------------- the service with JWT_SECRET alone

t.test('GET /health: version, name and description, nothing else', async (t) => {
  const res = await hs.request('GET', '/health');
  t.equal(res.status, 200);
  t.strictSame(Object.keys(res.body), ['version', 'name', 'description']);
  t.match(res.body, { version: String, name: 'GoTrue', description: 'GoTrue is a user registration and authentication API' });
});

t.test('JWT_SECRET alone: an empty JWKS; tokens carry JWT_KEY_ID; any kid but HS256 only', async (t) => {
  const jwks = await hs.request('GET', '/.well-known/jwks.json');
  t.strictSame([jwks.status, jwks.body], [200, { keys: [] }]);
  t.equal(jwks.headers.get('cache-control'), 'public, max-age=600');
  const session = await signUp(hs);
  t.same(decodeProtectedHeader(session.access_token), { alg: 'HS256', kid: 'legacy-kid', typ: 'JWT' });
  t.equal((await hs.request('GET', '/user', { token: session.access_token })).status, 200);
  // kid-less and unknown-kid HS256 tokens under the secret are the secret's, as in the original.
  t.equal((await hs.request('GET', '/admin/users', { token: await adminToken() })).status, 200);
  const otherKid = await withSecret(serviceRole(), { alg: 'HS256', kid: 'someone-else', typ: 'JWT' });
  t.equal((await hs.request('GET', '/admin/users', { token: otherKid })).status, 200);
  const rs = await signWith(generateJwk('RS256'), serviceRole());
  const res = await hs.request('GET', '/admin/users', { token: rs });
  t.strictSame([res.status, res.body], [403, badJwt('token signature is invalid: signing method RS256 is invalid')]);
});

t.test('the bearer scheme: case-insensitive, required, one token', async (t) => {
  const token = await adminToken();
  const noAuth = { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' };
  t.equal((await hs.request('GET', '/admin/users', { headers: { authorization: `bearer ${token}` } })).status, 200);
  for (const authorization of [undefined, '', 'Bearer', `Basic ${token}`, `Bearer ${token} extra`, token]) {
    const res = await hs.request('GET', '/admin/users', { headers: authorization === undefined ? {} : { authorization } });
    t.strictSame([res.status, res.body], [401, noAuth], String(authorization).slice(0, 20));
  }
});

t.test('the admin guard: any verified token whose role is an admin role, whatever its aud', async (t) => {
  t.equal((await hs.request('GET', '/admin/users', { token: await adminToken('supabase_admin') })).status, 200, 'the default roles');
  t.equal((await hs.request('GET', '/admin/users', { token: await adminToken('service_role', { aud: 'elsewhere' }) })).status, 200);
  const notAdmin = { code: 403, error_code: 'not_admin', msg: 'User not allowed' };
  for (const role of ['authenticated', 'anon', 'SERVICE_ROLE', '']) {
    const res = await hs.request('GET', '/admin/users', { token: await adminToken(role) });
    t.strictSame([res.status, res.body], [403, notAdmin], role || 'empty role');
  }
  const noRole = await hs.request('GET', '/admin/users', { token: await signedToken({}) });
  t.strictSame([noRole.status, noRole.body], [403, notAdmin], 'no role claim');
  const expired = await hs.request('GET', '/admin/users', { token: await withSecret({ ...serviceRole(), exp: now() - 1 }) });
  t.strictSame([expired.status, expired.body], [403, badJwt('token has invalid claims: token is expired')]);
  const typed = await hs.request('GET', '/admin/users', { token: await signedToken({ role: ['service_role'] }) });
  t.strictSame(
    [typed.status, typed.body],
    [
      403,
      badJwt(
        'token is malformed: could not JSON decode claim: json: cannot unmarshal array into Go struct field AccessTokenClaims.role of type string',
      ),
    ],
  );
});

// ---------------------------------------------------------------- the service with asymmetric JWT_KEYS

t.test('asymmetric JWT_KEYS: the JWKS lists each public half with kid, alg, use and key_ops, in order', async (t) => {
  const res = await keyed.request('GET', '/.well-known/jwks.json');
  t.equal(res.status, 200);
  const meta = (jwk: Jwk) => ({ kid: jwk.kid, alg: jwk.alg, use: 'sig', key_ops: ['verify'] });
  t.strictSame(res.body, {
    keys: [
      { kty: 'RSA', n: retired.n, e: retired.e, ...meta(retired) },
      { kty: 'EC', crv: 'P-256', x: signer.x, y: signer.y, ...meta(signer) },
      { kty: 'OKP', crv: 'Ed25519', x: ed.x, ...meta(ed) },
    ],
  });
  for (const member of ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"k"']) t.notMatch(res.text, member);
});

t.test('asymmetric JWT_KEYS: each kid selects its key; the legacy secret is no longer accepted', async (t) => {
  for (const key of [retired, signer, ed]) {
    t.equal((await keyed.request('GET', '/admin/users', { token: await signWith(key, serviceRole()) })).status, 200, key.alg);
  }
  // JWT_KEYS holds no HS256 key and JWT_VALID_METHODS is unset: HS256 is not accepted, the secret is revoked.
  const legacy = await keyed.request('GET', '/admin/users', { token: await adminToken() });
  t.strictSame([legacy.status, legacy.body], [403, badJwt('token signature is invalid: signing method HS256 is invalid')]);
  const stranger = generateJwk('ES256');
  const foreign = await keyed.request('GET', '/admin/users', { token: await signWith(stranger, serviceRole()) });
  t.strictSame(
    [foreign.status, foreign.body],
    [403, badJwt(`token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${stranger.kid} for algorithm ES256`)],
  );
  // An accepted algorithm under another key's kid: each key pins its own.
  const crossed = await keyed.request('GET', '/admin/users', {
    token: await signWith(signer, serviceRole(), { alg: 'ES256', kid: retired.kid }),
  });
  t.strictSame([crossed.status, crossed.body], [403, badJwt('token signature is invalid: signing method ES256 is invalid')]);
  // The service's own access tokens verify.
  const signup = await keyed.request('POST', '/signup', { body: {} });
  t.equal((await keyed.request('GET', '/user', { token: signup.body.access_token })).status, 200);
});

t.test('GET /.well-known/openid-configuration names the issuer and its endpoints', async (t) => {
  const res = await keyed.request('GET', '/.well-known/openid-configuration');
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'public, max-age=600');
  const base = 'https://auth.example.com/auth/v1';
  t.match(res.body, {
    issuer: 'https://auth.example.com/auth/v1/',
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256', 'plain'],
  });
  t.equal(res.body.registration_endpoint, undefined, 'no registration endpoint while the OAuth server is off');
  t.strictSame(res.body.id_token_signing_alg_values_supported, ['ES256'], "the signing key's own (docs/differences.md)");
});
