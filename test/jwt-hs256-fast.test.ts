// The HS256 fast path (src/server/auth/hs256.ts) accepts only what jose accepts, with the same claims,
// and leaves every other token to jose, so each refusal keeps jose's golang-jwt message: each token
// below is verified by the fast path, by jose directly, and by the service's verify.
import t from 'tap';
import { createHmac, createSecretKey } from 'node:crypto';
import { jwtVerify } from 'jose';
import { parseHeader, verifyHs256 } from '../dist/server/auth/hs256.js';
import { createJwtService } from '../dist/server/auth/jwt.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const key = createSecretKey(Buffer.from(SECRET, 'utf8'));
const b64 = (x: unknown) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');
const signed = (header: unknown, payload: unknown, secret = SECRET) => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
};
const now = Math.floor(Date.now() / 1000);
const claims = { sub: '6f1c0d4e-2b0a-4c1e-9d55-1a2b3c4d5e6f', exp: now + 3600, iat: now, role: 'authenticated' };
const jwt = createJwtService({ secret: SECRET, keys: [], validMethods: [], keyId: '', exp: 3600, aud: 'authenticated' } as never);

const fast = (token: string) => {
  const header = parseHeader(token.split('.')[0]);
  return header && verifyHs256(token, header, key);
};
const viaJose = (token: string) =>
  jwtVerify(token, key, { algorithms: ['HS256'] }).then(
    (r) => r.payload,
    () => null,
  );

const valid = signed({ alg: 'HS256', typ: 'JWT' }, claims);
/** Refused by jose for its claim alone; the service reads it as the original does (test/access-token-claim-names.test.ts). */
const stringExp = signed({ alg: 'HS256' }, { ...claims, exp: String(now + 60) });
const cases: Record<string, string> = {
  'valid, with a kid': signed({ alg: 'HS256', kid: 'k1', typ: 'JWT' }, claims),
  expired: signed({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: now - 1 }),
  'exp missing': signed({ alg: 'HS256' }, { sub: claims.sub }),
  'nbf in the future': signed({ alg: 'HS256' }, { ...claims, nbf: now + 600 }),
  'nbf in the past': signed({ alg: 'HS256' }, { ...claims, nbf: now - 600 }),
  'iat a string': signed({ alg: 'HS256' }, { ...claims, iat: 'yesterday' }),
  'another secret': signed({ alg: 'HS256' }, claims, 'another-secret-another-secret-another'),
  'alg none': `${b64({ alg: 'none' })}.${b64(claims)}.`,
  'alg HS512': signed({ alg: 'HS512' }, claims),
  'crit b64 header': signed({ alg: 'HS256', crit: ['b64'], b64: false }, claims),
  'an array payload': signed({ alg: 'HS256' }, [claims]),
  'two segments': valid.split('.').slice(0, 2).join('.'),
  'four segments': `${valid}.x`,
  'a non-JSON payload': signed({ alg: 'HS256' }, 'not json'),
};

t.test('a valid token: the fast path returns what jose returns', async (t) => {
  t.same(fast(valid), await viaJose(valid));
  t.same(await jwt.verify(valid), await viaJose(valid));
});

for (const [name, token] of Object.entries(cases)) {
  t.test(`${name}: never accepted where jose refuses; the service answers as jose does`, async (t) => {
    const byJose = await viaJose(token);
    const byFast = fast(token);
    if (byFast) t.same(byFast, byJose, 'accepted by both, same claims');
    else t.pass('left to jose');
    if (byJose) t.same(await jwt.verify(token), byJose);
    else await t.rejects(jwt.verify(token), { name: 'JwtError' });
  });
}

// jose's base64url decoder skips padding, so it accepts a valid token with `=` after its signature; the
// original's (Go's unpadded base64url) refuses it, and a lone last character too, naming the byte. The
// service refuses both as the original's parser does.
t.test('an undecodable signature segment: left to jose by the fast path, refused by the service in Go words', async (t) => {
  const signatureLength = valid.split('.')[2].length;
  const padded = `${valid}=`;
  t.equal(fast(padded), null, 'left to jose');
  t.ok(await viaJose(padded), 'jose alone accepts the padded one');
  for (const [token, at] of [
    [padded, signatureLength],
    [`${valid}AA`, signatureLength + 1],
  ] as const) {
    await t.rejects(jwt.verify(token), {
      name: 'JwtError',
      message: `token is malformed: could not base64 decode signature: illegal base64 data at input byte ${at}`,
    });
  }
});

t.test('the fast path is taken for the usual token and refuses the rest', async (t) => {
  t.ok(fast(valid));
  t.same(fast(cases['exp missing']), { sub: claims.sub }, 'a token without exp, as jose (and golang-jwt) accept it');
  for (const name of ['expired', 'another secret', 'alg none', 'crit b64 header', 'nbf in the future']) {
    t.equal(fast(cases[name]), null, name);
  }
  t.equal(fast(stringExp), null, 'exp a string: left to jose');
  t.equal(await viaJose(stringExp), null, 'which refuses it');
  t.same(await jwt.verify(stringExp), { ...claims, exp: now + 60 }, 'the service reads it as golang-jwt does');
});

t.test('signing with JWT_SECRET makes the bytes jose makes', async (t) => {
  const { SignJWT } = await import('jose');
  const full = {
    ...claims,
    email: 'ünïcode@example.com',
    app_metadata: { provider: 'email' },
    amr: [{ method: 'password', timestamp: now }],
  };
  for (const header of [
    { alg: 'HS256', typ: 'JWT' },
    { alg: 'HS256', kid: 'key-1', typ: 'JWT' },
  ]) {
    const ours = (await import('../dist/server/auth/hs256.js')).signHs256(header, full, key);
    t.equal(ours, await new SignJWT({ ...full }).setProtectedHeader(header).sign(key));
  }
  t.same(await jwt.verify(await jwt.sign(full)), full, 'the service signs what it verifies');
});
