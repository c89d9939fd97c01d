// auth-js end to end with asymmetric keys and no JWT_SECRET (issue 14): an ES256 signing key and an
// RS256 verify-only key. The client's getClaims() verifies access tokens through /.well-known/jwks.json,
// refreshing keeps working (refresh-token children no longer depend on JWT_SECRET), the admin API is
// driven by auth-js's GoTrueAdminApi with an RS256-signed service_role key, and a kid-less HS256 token is refused.
import t from 'tap';
import { createPrivateKey } from 'node:crypto';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { startTestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { generateJwk } from '../dist/server/auth/keys.js';
import { Secret, TOTP } from 'otpauth';

const signer = generateJwk('ES256');
const rsa = { ...generateJwk('RS256'), key_ops: ['verify'] };
const api = await startTestService({ AUTH_JWT_SECRET: '', AUTH_JWT_KEYS: JSON.stringify([signer, rsa]), AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const serviceRole = await new SignJWT({ role: 'service_role' })
  .setProtectedHeader({ alg: 'RS256', kid: rsa.kid, typ: 'JWT' })
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(createPrivateKey({ key: rsa, format: 'jwk' }));
const admin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${serviceRole}` } });

t.test('GoTrueAdminApi with an RS256 service_role key creates and lists users', async (t) => {
  const created = await admin.createUser({ email: 'keys-e2e@example.com', password: 'Secret-password-1', email_confirm: true });
  t.equal(created.error, null);
  const listed = await admin.listUsers();
  t.equal(listed.error, null);
  t.ok(listed.data.users.some((u) => u.id === created.data.user!.id));
});

t.test('sign-in, getClaims() through the JWKS, and a refresh, all with ES256 and no JWT_SECRET', async (t) => {
  const client = authClient(api.url);
  const signedIn = await client.signInWithPassword({ email: 'keys-e2e@example.com', password: 'Secret-password-1' });
  t.equal(signedIn.error, null);
  const token = signedIn.data.session!.access_token;
  t.same(decodeProtectedHeader(token), { alg: 'ES256', kid: signer.kid, typ: 'JWT' });
  const claims = await client.getClaims(token);
  t.equal(claims.error, null);
  t.equal(claims.data?.claims.sub, signedIn.data.user!.id);
  const refreshed = await client.refreshSession();
  t.equal(refreshed.error, null);
  t.not(refreshed.data.session!.refresh_token, signedIn.data.session!.refresh_token);
  t.equal((await client.getUser()).data.user?.id, signedIn.data.user!.id);
});

t.test('a kid-less HS256 token verifies against nothing when JWT_SECRET is unset', async (t) => {
  const forged = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new Uint8Array(32));
  const res = await api.request('GET', '/admin/users', { token: forged });
  t.same([res.status, res.body.error_code], [403, 'bad_jwt']);
});

t.test('with no key to seal secrets with, a TOTP factor is enrolled and verified, its secret kept in clear', async (t) => {
  const client = authClient(api.url);
  const signedIn = await client.signInWithPassword({ email: 'keys-e2e@example.com', password: 'Secret-password-1' });
  t.equal(signedIn.error, null);
  const enrolled = await client.mfa.enroll({ factorType: 'totp', friendlyName: 'no keys' });
  t.equal(enrolled.error, null, 'enrolled');
  const factorId = enrolled.data!.id;
  const { rows } = await api.db.query('select secret from mfa_factors where id = $1', [factorId]);
  t.equal(rows[0].secret, (enrolled.data as { totp: { secret: string } }).totp.secret, 'stored as the original stores it without keys');
  const code = new TOTP({ secret: Secret.fromBase32((enrolled.data as { totp: { secret: string } }).totp.secret) }).generate();
  const verified = await client.mfa.challengeAndVerify({ factorId, code });
  t.equal(verified.error, null, 'verified');
  t.equal(verified.data?.user.factors?.[0]?.status, 'verified');
});
