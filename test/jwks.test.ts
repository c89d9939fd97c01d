// The real service with JWT_KEYS (issue 14): /.well-known/jwks.json publishes the public halves only,
// access tokens are signed by the signing key and verified by auth-js through the JWKS, the admin API
// takes a service_role token signed by a verify-only key, and a forged or foreign token is 403 bad_jwt.
import t from 'tap';
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { startTestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { generateJwk } from '../dist/server/auth/keys.js';

const signer = generateJwk('ES256');
const rsa = { ...generateJwk('RS256'), key_ops: ['verify'] };
const ed = { ...generateJwk('EdDSA'), key_ops: ['verify'] };
const hmac = { ...generateJwk('HS256'), key_ops: ['verify'] };
const api = await startTestService({
  AUTH_JWT_KEYS: JSON.stringify([signer, rsa, ed, hmac]),
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
t.teardown(() => api.stop());

const serviceRole = (jwk: JsonWebKey & { kid: string; alg: string }, alg = jwk.alg) =>
  new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg, kid: jwk.kid, typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(jwk.kty === 'oct' ? Buffer.from(String(jwk.k), 'base64url') : createPrivateKey({ key: jwk, format: 'jwk' }));

t.test('the JWKS is the public halves of the asymmetric keys, cacheable, never a private member or an oct key', async (t) => {
  const res = await api.request('GET', '/.well-known/jwks.json');
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'public, max-age=600');
  const meta = (jwk: { kid: string; alg: string }) => ({ kid: jwk.kid, alg: jwk.alg, use: 'sig', key_ops: ['verify'] });
  t.same(res.body, {
    keys: [
      { kty: 'EC', crv: 'P-256', x: signer.x, y: signer.y, ...meta(signer) },
      { kty: 'RSA', n: rsa.n, e: rsa.e, ...meta(rsa) },
      { kty: 'OKP', crv: 'Ed25519', x: ed.x, ...meta(ed) },
    ],
  });
  for (const secret of ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"k"', String(hmac.k)]) t.notMatch(res.text, secret);
});

t.test('an access token is ES256 with the signing kid, and auth-js getClaims() verifies it through the JWKS', async (t) => {
  const signup = await api.request('POST', '/signup', { body: {} });
  t.equal(signup.status, 200);
  const token = signup.body.access_token as string;
  t.same(decodeProtectedHeader(token), { alg: 'ES256', kid: signer.kid, typ: 'JWT' });
  t.equal((await api.request('GET', '/user', { token })).status, 200);
  const client = authClient(api.url);
  const { data, error } = await client.getClaims(token);
  t.equal(error, null);
  t.equal(data?.claims.sub, signup.body.user.id);
  t.same(data?.header, { alg: 'ES256', kid: signer.kid, typ: 'JWT' });
});

t.test('the admin API accepts a service_role token signed by any configured key', async (t) => {
  for (const key of [rsa, ed, hmac, signer]) {
    const res = await api.request('GET', '/admin/users', { token: await serviceRole(key) });
    t.equal(res.status, 200, `${key.alg} (${key.kid})`);
  }
});

t.test('a token whose header claims another algorithm, or signed by a key not configured, is 403 bad_jwt', async (t) => {
  const rs512 = await serviceRole(rsa, 'RS512');
  const res = await api.request('GET', '/admin/users', { token: rs512 });
  t.same(
    [res.status, res.body.error_code, res.body.msg],
    [403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, token signature is invalid: signing method RS512 is invalid'],
  );
  const stranger = { ...generateJwk('RS256'), kid: rsa.kid };
  const foreign = await api.request('GET', '/admin/users', { token: await serviceRole(stranger) });
  t.same(
    [foreign.status, foreign.body.error_code, foreign.body.msg],
    [403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid'],
  );
});
