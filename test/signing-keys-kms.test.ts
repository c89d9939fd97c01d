// An AWS KMS signing key in JWT_KEYS (docs/tokens-and-sessions.md#aws-kms-signing-keys): a fake KMS speaking
// KMS's wire format signs for real, reached through AWS_ENDPOINT_URL_KMS with the configured access key. Sign-in
// and refresh tokens verify against /.well-known/jwks.json with auth-js and jose; the digest KMS is sent is the
// SHA-256 of the signing input; KMS refusing, stalling or gone is a clear 500/503, leaves no session behind, and
// the service answers as before once KMS is back; malformed entries stop the configuration.
import t, { type Test } from 'tap';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { uniqueEmail } from './helpers/accounts.js';
import { startFakeKms } from './helpers/kms-fake.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const ACCESS_KEY_ID = 'AKIAPORTCULLISTEST01';
const kms = await startFakeKms('eu-west-1');
const api = await startTestService({
  AUTH_JWT_KEYS: JSON.stringify([kms.jwk]),
  AWS_ENDPOINT_URL_KMS: kms.url,
  AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
  AWS_SECRET_ACCESS_KEY: 'fake-secret-access-key-for-the-test',
  AUTH_JWT_KMS_TIMEOUT: '1s',
  AUTH_MAILER_AUTOCONFIRM: 'true',
});
t.teardown(async () => {
  await api.stop();
  await kms.stop();
});

const PASSWORD = 'Kms-signed-password-1';
const jwks = createRemoteJWKSet(new URL(`${api.url}/.well-known/jwks.json`));
const header = { alg: 'RS256', kid: kms.jwk.kid, typ: 'JWT' };

async function newUser(t: Test): Promise<{ email: string; id: string }> {
  const email = uniqueEmail('kms');
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.equal(res.status, 200, 'sign-up');
  return { email, id: res.body.user.id };
}

const sessionsOf = async (userId: string) =>
  (await api.db.query('select count(*)::int as n from sessions where user_id = $1', [userId])).rows[0].n as number;
const passwordGrant = (email: string) => api.request('POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });
const refreshGrant = (refreshToken: string) =>
  api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: refreshToken } });

t.test('the JWKS publishes the public key with key_ops ["verify"] and use "sig", never the ARN', async (t) => {
  const res = await api.request('GET', '/.well-known/jwks.json');
  t.equal(res.status, 200);
  t.strictSame(res.body, {
    keys: [{ kty: 'RSA', n: kms.jwk.n, e: kms.jwk.e, kid: kms.jwk.kid, alg: 'RS256', use: 'sig', key_ops: ['verify'] }],
  });
  t.notMatch(res.text, 'aws:kms:arn');
  t.notMatch(res.text, kms.arn);
});

t.test('sign-in and refresh through auth-js: RS256 tokens signed by KMS verify through the JWKS (auth-js and jose)', async (t) => {
  const { email, id } = await newUser(t);
  const client = authClient(api.url);
  const signedIn = await client.signInWithPassword({ email, password: PASSWORD });
  t.equal(signedIn.error, null);
  const first = signedIn.data.session!.access_token;
  t.strictSame(decodeProtectedHeader(first), header);
  const claims = await client.getClaims(first);
  t.equal(claims.error, null);
  t.equal(claims.data?.claims.sub, id);
  t.strictSame(claims.data?.header, header);
  t.equal((await jwtVerify(first, jwks, { algorithms: ['RS256'] })).payload.sub, id);

  const refreshed = await client.refreshSession();
  t.equal(refreshed.error, null);
  const second = refreshed.data.session!.access_token;
  t.not(refreshed.data.session!.refresh_token, signedIn.data.session!.refresh_token, 'a refresh, not the same session answer');
  t.equal((await client.getClaims(second)).data?.claims.sub, id, 'the refreshed token verifies through the JWKS too');
  t.equal((await jwtVerify(second, jwks, { algorithms: ['RS256'] })).payload.sub, id);
  t.equal((await client.getUser()).data.user?.id, id, 'the service verifies its own KMS-signed token');
});

t.test('KMS is sent the SHA-256 of the signing input, with DIGEST, PKCS #1 v1.5 and a SigV4 signature of the access key', async (t) => {
  const { email } = await newUser(t);
  kms.requests.length = 0;
  const res = await passwordGrant(email);
  t.equal(res.status, 200);
  const [head, payload] = (res.body.access_token as string).split('.');
  t.equal(kms.requests.length, 1, 'one KMS round trip per token');
  const [sent] = kms.requests;
  t.equal(sent.target, 'TrentService.Sign');
  t.equal(sent.contentType, 'application/x-amz-json-1.1');
  t.strictSame(sent.body, {
    KeyId: kms.arn,
    Message: createHash('sha256').update(`${head}.${payload}`).digest('base64'),
    MessageType: 'DIGEST',
    SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
  });
  t.match(
    sent.authorization,
    new RegExp(
      `^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/eu-west-1/kms/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$`,
    ),
  );
});

t.test('verification pins RS256 for the KMS key: an HS256 token under its kid is refused', async (t) => {
  const forged = await new SignJWT({ role: 'service_role' })
    .setProtectedHeader({ alg: 'HS256', kid: String(kms.jwk.kid), typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(Buffer.from(String(kms.jwk.n), 'base64url'));
  const res = await api.request('GET', '/admin/users', { token: forged });
  t.same([res.status, res.body.error_code], [403, 'bad_jwt']);
});

t.test('KMS refusing (AccessDeniedException): 500 unexpected_failure, no session left, and sign-in works once allowed', async (t) => {
  const { email, id } = await newUser(t);
  const before = await sessionsOf(id); // the sign-up's own
  kms.mode = 'deny';
  t.teardown(() => void (kms.mode = 'sign'));
  const refused = await passwordGrant(email);
  t.equal(refused.status, 500);
  t.strictSame(refused.body, {
    code: 500,
    error_code: 'unexpected_failure',
    msg: 'error generating jwt token',
    error_id: refused.body.error_id,
  });
  t.type(refused.body.error_id, 'string');
  t.equal(refused.headers.get('retry-after'), null, 'a refusal is not an outage');
  t.equal(await sessionsOf(id), before, 'the sign-in rolled back with the failed signature');
  kms.mode = 'sign';
  const allowed = await passwordGrant(email);
  t.equal(allowed.status, 200);
  t.equal(await sessionsOf(id), before + 1);
});

const UNAVAILABLE = {
  code: 503,
  error_code: 'unexpected_failure',
  msg: 'error generating jwt token: the signing service is unavailable, please retry after a moment.',
};

t.test('KMS stalling past JWT_KMS_TIMEOUT: 503 with Retry-After, no session left; answered again once KMS answers', async (t) => {
  const { email, id } = await newUser(t);
  const before = await sessionsOf(id);
  kms.mode = 'stall';
  t.teardown(() => {
    kms.mode = 'sign';
    kms.release();
  });
  const stalled = await passwordGrant(email);
  t.strictSame(stalled.body, { ...UNAVAILABLE, error_id: stalled.body.error_id });
  t.equal(stalled.status, 503);
  t.equal(stalled.headers.get('retry-after'), '5');
  t.equal(await sessionsOf(id), before, 'the sign-in rolled back');
  t.equal((await api.request('GET', '/health')).status, 200, 'the service is up meanwhile');
  kms.release();
  kms.mode = 'sign';
  const again = await passwordGrant(email);
  t.equal(again.status, 200);
  t.equal((await jwtVerify(again.body.access_token, jwks, { algorithms: ['RS256'] })).payload.sub, id);
});

t.test('KMS killed: the refresh grant answers 503; once KMS is back the same refresh token works', async (t) => {
  const { email, id } = await newUser(t);
  const signedIn = await passwordGrant(email);
  t.equal(signedIn.status, 200);
  await kms.kill();
  let revived = false;
  t.teardown(async () => {
    if (!revived) await kms.revive();
  });
  const down = await refreshGrant(signedIn.body.refresh_token);
  t.equal(down.status, 503);
  t.strictSame(down.body, { ...UNAVAILABLE, error_id: down.body.error_id });
  t.equal(down.headers.get('retry-after'), '5');
  t.equal((await api.request('GET', '/settings')).status, 200, 'the service is up meanwhile');
  // The sign-up's session and the sign-in's, one token each: no child was made, nothing was revoked.
  const tokens = await api.db.query('select revoked from refresh_tokens where user_id = $1', [id]);
  t.strictSame(
    tokens.rows,
    [{ revoked: false }, { revoked: false }],
    'the rotation rolled back with the signature: the token is still the active one',
  );
  await kms.revive();
  revived = true;
  const back = await refreshGrant(signedIn.body.refresh_token);
  t.equal(back.status, 200, 'the refresh token the client still holds is answered');
  t.equal((await jwtVerify(back.body.access_token, jwks, { algorithms: ['RS256'] })).payload.sub, id);
  t.equal((await refreshGrant(back.body.refresh_token)).status, 200, 'and the chain goes on');
});

t.test('`portcullis token` signs an API key through KMS, exits, and the admin API takes the key', async (t) => {
  const bin = fileURLToPath(new URL('../bin/portcullis.js', import.meta.url));
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'portcullis-kms-cli-'));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(AUTH_|GOTRUE_|AWS_)/.test(name) && name !== 'DATABASE_URL'),
  );
  kms.requests.length = 0;
  // Asynchronous on purpose: the fake KMS answers from this process's event loop.
  const { stdout } = await execFileAsync(process.execPath, [bin, 'token', '--role', 'service_role'], {
    cwd,
    env: {
      ...env,
      AUTH_JWT_SECRET: JWT_SECRET,
      AUTH_JWT_KEYS: JSON.stringify([kms.jwk]),
      AWS_ENDPOINT_URL_KMS: kms.url,
      AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: 'fake-secret-access-key-for-the-test',
    },
  });
  const key = stdout.trim();
  t.strictSame(decodeProtectedHeader(key), header);
  t.equal(kms.requests.length, 1, 'signed by KMS');
  t.equal((await api.request('GET', '/admin/users', { token: key })).status, 200);
});

t.test('a KMS key that does not match its public JWK: 500, and no token signed by a key nobody can verify', async (t) => {
  const other = await startFakeKms('us-east-1');
  t.teardown(() => other.stop());
  // KMS key `other` signs, but the JWK published for it is `kms`'s public key.
  const mismatched = { ...other.jwk, n: kms.jwk.n, e: kms.jwk.e };
  const service = await startTestService({
    AUTH_JWT_KEYS: JSON.stringify([mismatched]),
    AWS_ENDPOINT_URL_KMS: other.url,
    AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: 'fake-secret-access-key-for-the-test',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  });
  t.teardown(() => service.stop());
  const res = await service.request('POST', '/signup', { body: {} });
  t.strictSame(res.body, { code: 500, error_code: 'unexpected_failure', msg: 'error generating jwt token', error_id: res.body.error_id });
  t.equal(other.requests.length, 1, 'KMS was asked');
  t.equal((await service.db.query('select count(*)::int as n from users')).rows[0].n, 0, 'the anonymous sign-up rolled back');
});

t.test('malformed KMS entries and settings stop the configuration, naming the key', async (t) => {
  const problemsOf = (keys: unknown[], extra: Record<string, string> = {}) => {
    try {
      loadConfig({ envFile: null, env: { AUTH_JWT_SECRET: JWT_SECRET, AUTH_JWT_KEYS: JSON.stringify(keys), ...extra } });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };
  const good = { ...kms.jwk, kid: 'k1' };
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  t.strictSame(problemsOf([good]), [], 'a well-formed entry loads');
  t.strictSame(problemsOf([{ ...good, 'aws:kms:arn': 42 }]), ['AUTH_JWT_KEYS: key "k1": "aws:kms:arn" is not a string']);
  for (const arn of [
    'arn:aws:kms::111122223333:key/abc',
    'arn:aws:s3:eu-west-1:111122223333:key/abc',
    'not-an-arn',
    'arn:aws:kms:eu-west-1:1111:key/abc',
  ]) {
    t.strictSame(
      problemsOf([{ ...good, 'aws:kms:arn': arn }]),
      [`AUTH_JWT_KEYS: key "k1": "aws:kms:arn" is not a KMS key ARN with a region (arn:aws:kms:<region>:<account>:key/<id>): "${arn}"`],
      arn,
    );
  }
  t.strictSame(problemsOf([{ ...ec, kid: 'k1', key_ops: ['sign'], 'aws:kms:arn': kms.arn }]), [
    'AUTH_JWT_KEYS: key "k1": an AWS KMS key must be an RSA public JWK (kty "RSA"), not EC',
  ]);
  t.strictSame(problemsOf([{ ...good, n: undefined }]), ['AUTH_JWT_KEYS: key "k1": an AWS KMS key needs the RSA public member "n"']);
  t.strictSame(problemsOf([{ ...good, alg: 'RS512' }]), ['AUTH_JWT_KEYS: key "k1": an AWS KMS key signs RS256 only, not "RS512"']);
  t.strictSame(problemsOf([{ ...good, key_ops: ['encrypt'] }]), ['AUTH_JWT_KEYS: exactly one key must have "sign" in key_ops (found 0)']);
  t.strictSame(
    problemsOf([good], {
      AUTH_JWT_SECRET: '',
      DATABASE_URL: 'postgres://u@db/x',
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
      AUTH_DB_DRIVER: 'postgres',
    }),
    ['AUTH_JWT_SECRET: is required when JWT_KEYS holds no private key (the AWS KMS key signs, refresh tokens are derived from it)'],
  );
  t.strictSame(problemsOf([good], { AUTH_JWT_KMS_TIMEOUT: '10s', AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '0' }), [
    'AUTH_JWT_KMS_TIMEOUT: must be shorter than API_MAX_REQUEST_DURATION',
  ]);
  t.strictSame(problemsOf([good], { AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '2s' }), [
    'AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: must be longer than JWT_KMS_TIMEOUT (or 0)',
  ]);
  t.strictSame(problemsOf([good], { AWS_ENDPOINT_URL: 'localhost:4566' }), [
    'AWS_ENDPOINT_URL: "localhost:4566" is not in the expected format',
  ]);
  const loaded = loadConfig({
    envFile: null,
    env: { AUTH_JWT_KEYS: JSON.stringify([good]), AWS_ENDPOINT_URL: 'http://localhost:4566', AUTH_JWT_SECRET: JWT_SECRET },
  });
  t.equal(loaded.jwt.kms.endpoint, 'http://localhost:4566', 'AWS_ENDPOINT_URL applies when AWS_ENDPOINT_URL_KMS is not set');
});

// Last: the log is complete only once the service has stopped (helpers/server.ts).
t.test('the log names the cause of each failure, which the answers do not', async (t) => {
  await api.stop();
  const failures = api
    .logs()
    .filter((l) => l.msg === 'request failed')
    .map((l) => JSON.stringify(l.err));
  t.ok(
    failures.some((f) => f.includes('AccessDeniedException') && f.includes('not authorized to perform: kms:Sign')),
    'the refusal',
  );
  t.ok(
    failures.some((f) => f.includes('AWS KMS did not answer within 1 s')),
    'the stall',
  );
});
