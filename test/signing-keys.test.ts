// JWT_KEYS (issue 14): each key type signs and verifies with the algorithm the key pins, a header claiming
// another algorithm or a key not configured is refused, rotation keeps old tokens valid, and bad key
// material stops start-up with a config error naming the key.
import t from 'tap';
import { jwtService, rejection } from './helpers/jwt.js';
import { createPrivateKey, createSecretKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { generateJwk } from '../dist/server/auth/keys.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const service = (keys: JsonWebKey[], validMethods: string[] = []) => jwtService(SECRET, keys, validMethods);
const now = Math.floor(Date.now() / 1000);
const claims = {
  sub: '6b0c2d1e-0a43-4c5e-9a63-2f1b8e7d9c10',
  aud: 'authenticated',
  exp: now + 600,
  iat: now,
  email: 'a@example.com',
  phone: '',
  app_metadata: {},
  user_metadata: {},
  role: 'authenticated',
  aal: 'aal1' as const,
  amr: [],
  session_id: '0e5d0b9c-7f3a-4d9e-8b1c-5a6f7e8d9c0b',
  is_anonymous: false,
};
const verifyOnly = (jwk: JsonWebKey): JsonWebKey => ({ ...jwk, key_ops: ['verify'] });

for (const alg of ['RS256', 'ES256', 'EdDSA', 'HS256']) {
  t.test(`${alg}: the signing key signs with its kid and alg, and verifies`, async (t) => {
    const jwk = generateJwk(alg);
    const jwt = service([jwk]);
    t.equal(jwt.algorithm, alg);
    const token = await jwt.sign(claims);
    t.same(decodeProtectedHeader(token), { alg, kid: jwk.kid, typ: 'JWT' });
    t.equal((await jwt.verify(token)).sub, claims.sub);
    // The same token, re-signed by an attacker with the secret under HS256 but the key's kid: the key pins its alg.
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', kid: jwk.kid })
      .sign(createSecretKey(Buffer.from(SECRET)));
    if (alg !== 'HS256')
      t.equal(
        await rejection(jwt.verify(forged)),
        'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS256 is invalid',
      );
  });
}

t.test('a header claiming another algorithm than the key pins is refused', async (t) => {
  const rsa = generateJwk('RS256');
  const jwt = service([rsa]);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // RS512 over the configured key's own material: a valid signature, but not with the pinned algorithm.
  const signer = createPrivateKey({ key: rsa, format: 'jwk' });
  const rs512 = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS512', kid: rsa.kid }).sign(signer);
  t.equal(
    await rejection(jwt.verify(rs512)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method RS512 is invalid',
  );
  const other = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(privateKey);
  t.equal(
    await rejection(jwt.verify(other)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid',
  );
});

t.test('a token signed by a key not configured is refused', async (t) => {
  const jwt = service([generateJwk('ES256')]);
  const stranger = service([generateJwk('ES256')]);
  const token = await stranger.sign(claims);
  // Unknown kid with an accepted algorithm other than HS256: no key, named as the original names it.
  t.equal(
    await rejection(jwt.verify(token)),
    `invalid JWT: unable to parse or verify signature, token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${String(decodeProtectedHeader(token).kid)} for algorithm ES256`,
  );
  // HS256 is not among JWT_KEYS' algorithms, so it is not accepted at all (test/keys-settings-behaviour.test.ts).
  const strangerHs = service([generateJwk('HS256')]);
  t.equal(
    await rejection(jwt.verify(await strangerHs.sign(claims))),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS256 is invalid',
  );
  // With an HS256 key among them, an unknown kid under HS256 is checked against JWT_SECRET.
  t.equal(
    await rejection(service([generateJwk('ES256'), verifyOnly(generateJwk('HS256'))]).verify(await strangerHs.sign(claims))),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid',
  );
});

t.test('a token without kid is checked against JWT_SECRET with HS256 while HS256 is accepted', async (t) => {
  const legacy = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(createSecretKey(Buffer.from(SECRET)));
  t.equal(
    (await service([generateJwk('ES256'), verifyOnly(generateJwk('HS256'))]).verify(legacy)).sub,
    claims.sub,
    'an HS256 key in JWT_KEYS',
  );
  t.equal((await service([generateJwk('ES256')], ['ES256', 'HS256']).verify(legacy)).sub, claims.sub, 'HS256 in JWT_VALID_METHODS');
  for (const [jwt, why] of [
    [service([generateJwk('ES256')]), 'JWT_KEYS without an HS256 key refuse the secret, as in the original'],
    [service([generateJwk('ES256')], ['ES256']), 'JWT_VALID_METHODS without HS256 refuses the secret'],
  ] as const)
    t.equal(
      await rejection(jwt.verify(legacy)),
      'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS256 is invalid',
      why,
    );
});

t.test('rotation: [new signer, old verify-only] accepts what the old key signed and signs with the new one', async (t) => {
  const old = generateJwk('RS256');
  const next = generateJwk('ES256');
  const before = service([old]);
  const oldToken = await before.sign(claims);
  const after = service([next, verifyOnly(old)]);
  t.equal((await after.verify(oldToken)).sub, claims.sub);
  const newToken = await after.sign(claims);
  t.equal(decodeProtectedHeader(newToken).kid, next.kid);
  t.equal((await after.verify(newToken)).sub, claims.sub);
  // Once the old key is removed, its tokens are refused.
  t.match(await rejection(service([next]).verify(oldToken)), /signing method RS256 is invalid/);
});

t.test("rotation with a retired key's public half alone, without key_ops, as the original accepts it", async (t) => {
  const old = generateJwk('ES256');
  const oldToken = await service([old]).sign(claims);
  const { d: _d, key_ops: _ops, ...publicHalf } = old;
  const next = generateJwk('RS256');
  const after = service([next, publicHalf]);
  t.equal((await after.verify(oldToken)).sub, claims.sub, 'what the retired key signed still verifies');
  t.same(
    after.publicKeys.map((k) => [k.kid, k.key_ops]),
    [
      [next.kid, ['verify']],
      [old.kid, ['verify']],
    ],
    'and its public half is published',
  );
  t.equal(decodeProtectedHeader(await after.sign(claims)).kid, next.kid);
});

t.test('JWT_VALID_METHODS refuses a configured key whose algorithm it leaves out', async (t) => {
  const old = generateJwk('RS256');
  const oldToken = await service([old]).sign(claims);
  const next = generateJwk('ES256');
  t.equal((await service([next, verifyOnly(old)], ['ES256', 'RS256']).verify(oldToken)).sub, claims.sub);
  t.equal(
    await rejection(service([next, verifyOnly(old)], ['ES256']).verify(oldToken)),
    'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method RS256 is invalid',
  );
});

t.test('the public keys are the public members only, never oct', async (t) => {
  const ec = generateJwk('ES256');
  const jwt = service([ec, verifyOnly(generateJwk('HS256'))]);
  t.same(jwt.publicKeys, [{ kty: 'EC', crv: 'P-256', x: ec.x, y: ec.y, kid: ec.kid, alg: 'ES256', use: 'sig', key_ops: ['verify'] }]);
});

const PROD = {
  DATABASE_URL: 'postgres://u@db/x',
  AUTH_DB_DRIVER: 'postgres',
  AUTH_JWT_SECRET: 'a-secret-of-sufficient-length',
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_API_EXTERNAL_URL: 'https://auth.example.com',
};
const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig({ env: { ...PROD, ...env }, envFile: null });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

t.test('JWT_KEYS is read with each prefix and parsed once at load', async (t) => {
  const keys = [generateJwk('ES256')];
  for (const name of ['AUTH_JWT_KEYS', 'GOTRUE_JWT_KEYS']) {
    t.same(loadConfig({ env: { ...PROD, [name]: JSON.stringify(keys) }, envFile: null }).jwt.keys, keys, name);
  }
  t.same(loadConfig({ env: PROD, envFile: null }).jwt.keys, []);
  t.same(loadConfig({ env: { ...PROD, GOTRUE_JWT_VALID_METHODS: 'HS256,ES256' }, envFile: null }).jwt.validMethods, ['HS256', 'ES256']);
});

t.test('bad key material stops start-up with a config error naming the key', async (t) => {
  const ec = generateJwk('ES256');
  const set = (keys: unknown) => ({ AUTH_JWT_KEYS: JSON.stringify(keys) });
  t.match(problemsOf(set([{ ...ec, d: 'AAAA' }]))[0], new RegExp(`^AUTH_JWT_KEYS: key "${ec.kid}": invalid key material`));
  const { d: _d, ...publicOnly } = ec;
  t.match(
    problemsOf(set([publicOnly]))[0],
    new RegExp(`^AUTH_JWT_KEYS: key "${ec.kid}": invalid key material`),
    'a public key cannot sign',
  );
  t.same(problemsOf(set([{ ...ec, alg: 'RS256' }])), [`AUTH_JWT_KEYS: key "${ec.kid}": alg RS256 does not fit a EC:P-256 key (ES256)`]);
  t.same(problemsOf(set([{ ...ec, kid: undefined }])), ['AUTH_JWT_KEYS: key #1: has no kid']);
  t.same(
    problemsOf(set([{ ...ec, key_ops: undefined }])),
    ['AUTH_JWT_KEYS: exactly one key must have "sign" in key_ops (found 0)'],
    'a key without key_ops only verifies',
  );
  t.same(problemsOf(set([{ ...ec, key_ops: 'sign' }])), [
    `AUTH_JWT_KEYS: key "${ec.kid}": key_ops is not an array (["sign","verify"] or ["verify"])`,
  ]);
  t.same(problemsOf(set([verifyOnly(ec)])), ['AUTH_JWT_KEYS: exactly one key must have "sign" in key_ops (found 0)']);
  const second = generateJwk('EdDSA');
  t.same(problemsOf(set([ec, second])), [`AUTH_JWT_KEYS: exactly one key must have "sign" in key_ops (found 2: ${ec.kid}, ${second.kid})`]);
  const short = loadConfig({
    env: { ...PROD, ...set([{ kty: 'oct', k: 'c2hvcnQ', kid: 'short', key_ops: ['sign', 'verify'] }]) },
    envFile: null,
  });
  t.strictSame(
    short.warnings,
    ['AUTH_JWT_KEYS: key "short": an HMAC key of 5 bytes can be guessed; use at least 32'],
    'a short HMAC key starts, as there',
  );
  t.same(problemsOf({ GOTRUE_JWT_KEYS: 'not json' }), ['GOTRUE_JWT_KEYS: is not JSON (a JSON array of private JWKs)']);
  t.same(problemsOf({ AUTH_JWT_VALID_METHODS: 'HS256', ...set([ec]) }), [
    'AUTH_JWT_VALID_METHODS: must include ES256, the algorithm new tokens are signed with',
  ]);
  t.equal(problemsOf({ AUTH_JWT_VALID_METHODS: 'none' }).length, 0, 'an unknown algorithm starts, as there (and matches no token)');
});
