// v2 refresh tokens (docs/tokens-and-sessions.md#v2-refresh-tokens), the original's
// SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2: the format decoded here independently (helpers/refresh-v2.ts),
// the counter and its reuse rules checked in the database, the real auth-js client, the upgrade of
// 12-character sessions, and keys sealed with SECURITY_DB_ENCRYPTION.
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService, type TestService } from './helpers/server.js';
import { refresh, signUp, uniqueEmail } from './helpers/accounts.js';
import { authClient } from './helpers/auth-client.js';
import { decodeV2, mintV2 } from './helpers/refresh-v2.js';
import { startHookServer } from './helpers/hook-server.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';

const V2 = { AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION: '2' };
const api = await startTestService({ ...V2, AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
const ENCRYPTION = { id: 'ops-key-1', key: randomBytes(32).toString('base64url') };
const sealed = await startTestService({
  ...V2,
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: ENCRYPTION.id,
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: ENCRYPTION.key,
});
// 12-character sessions made by a default service, refreshed by two others on the same database.
const v1 = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
const sharedUrl = (v1.db as unknown as { options: { connectionString: string } }).options.connectionString;
const upgradeAll = await startTestService({ ...V2, DATABASE_URL: sharedUrl, AUTH_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '100' });
const upgradeNone = await startTestService({ ...V2, DATABASE_URL: sharedUrl, AUTH_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '0' });
const upgradeWithInterval = await startTestService({
  ...V2,
  DATABASE_URL: sharedUrl,
  AUTH_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '100',
  AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '1',
});
// A custom access token hook, which the refresh of a v2 token runs inside the counter's transaction.
const hooks = await startHookServer();
hooks.on('/custom-access-token', (p) => ({ body: { claims: p.claims } }));
const hooked = await startTestService({
  ...V2,
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: `${hooks.url}/custom-access-token`,
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS: hooks.secret,
});
t.teardown(async () => {
  await hooked.stop();
  await hooks.close();
  await upgradeAll.stop();
  await upgradeNone.stop();
  await upgradeWithInterval.stop();
  await v1.stop();
  await sealed.stop();
  await api.stop();
});

const sessionOf = (accessToken: string) => decodeJwt(accessToken).session_id as string;
const sessionRow = async (svc: TestService, id: string) =>
  (await svc.db.query('select refresh_token_hmac_key as key, refresh_token_counter::int as counter from sessions where id = $1', [id]))
    .rows[0];
const ALREADY_USED = { code: 400, error_code: 'refresh_token_already_used', msg: 'Invalid Refresh Token: Already Used' };
const NOT_FOUND = { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' };

/** A v2 session whose key the test knows: stored in clear, as the original stores it without encryption. */
async function knownKeySession(svc: TestService): Promise<{ sessionId: string; key: Buffer; userId: string }> {
  const s = await signUp(svc);
  const sessionId = sessionOf(s.access_token);
  const key = randomBytes(32);
  await svc.db.query('update sessions set refresh_token_hmac_key = $2 where id = $1', [sessionId, key.toString('base64url')]);
  return { sessionId, key, userId: s.user.id };
}

t.test('a sign-in under version 2 answers a v2 token of its session at counter 0, with no token row', async (t) => {
  const s = await signUp(api);
  const sessionId = sessionOf(s.access_token);
  const token = decodeV2(s.refresh_token);
  t.strictSame(
    { version: token.version, sessionId: token.sessionId, counter: token.counter, checksumOk: token.checksumOk },
    {
      version: 0,
      sessionId,
      counter: 0,
      checksumOk: true,
    },
  );
  t.match(s.refresh_token, /^[A-Za-z0-9_-]{51}$/, 'base64url without padding: 38 bytes');
  t.equal(Number((await api.db.query('select count(*) from refresh_tokens where session_id = $1', [sessionId])).rows[0].count), 0);
  const row = await sessionRow(api, sessionId);
  t.equal(row.counter, 0);
  t.match(JSON.parse(row.key), { key_id: 'portcullis-jwt-secret', alg: 'aes-gcm-hkdf' }, 'the key is sealed at rest');

  const res = await refresh(api, s.refresh_token);
  t.equal(res.status, 200);
  const next = decodeV2(res.body.refresh_token);
  t.equal(next.sessionId, sessionId);
  t.equal(next.counter, 1, 'the refresh advances the counter');
  t.equal((await sessionRow(api, sessionId)).counter, 1);
  t.equal(sessionOf(res.body.access_token), sessionId);
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.equal(me.status, 200);
  const audits = await api.db.query(
    `select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1 and payload->>'log_type' = 'token'`,
    [s.user.id],
  );
  t.strictSame(
    audits.rows.map((r) => r.action),
    ['token_refreshed'],
    'audited token_refreshed, as the original',
  );
});

t.test("auth-js's own client signs in and refreshes through v2 tokens", async (t) => {
  const email = uniqueEmail('authjs-v2');
  await signUp(api, email, 'Secret-password-1');
  const client = authClient(api.url);
  const signedIn = await client.signInWithPassword({ email, password: 'Secret-password-1' });
  t.error(signedIn.error);
  const first = signedIn.data.session!;
  t.equal(decodeV2(first.refresh_token).counter, 0);
  const refreshed = await client.refreshSession();
  t.error(refreshed.error);
  const second = refreshed.data.session!;
  t.equal(decodeV2(second.refresh_token).sessionId, sessionOf(first.access_token));
  t.equal(decodeV2(second.refresh_token).counter, 1);
  const user = await client.getUser();
  t.equal(user.data.user?.email, email);
});

t.test('the token before the current one (a client that failed to save) is answered with the current one', async (t) => {
  const s = await signUp(api);
  const sessionId = sessionOf(s.access_token);
  const first = await refresh(api, s.refresh_token);
  // Long after the refresh: only the difference of one allows it.
  await api.db.query(`update sessions set refreshed_at = now() - interval '1 hour' where id = $1`, [sessionId]);
  const again = await refresh(api, s.refresh_token);
  t.equal(again.status, 200);
  t.equal(again.body.refresh_token, first.body.refresh_token, 'the same token, counter 1');
  t.equal((await sessionRow(api, sessionId)).counter, 1, 'the counter did not move');
});

t.test('a refresh whose custom access token hook fails leaves the counter where it was; the token then refreshes', async (t) => {
  const s = await signUp(hooked);
  const sessionId = sessionOf(s.access_token);
  hooks.once('/custom-access-token', { body: { other: true } });
  const failed = await refresh(hooked, s.refresh_token);
  t.same([failed.status, failed.body.msg], [500, 'output claims field is missing']);
  t.equal((await sessionRow(hooked, sessionId)).counter, 0, 'not advanced: the token is still the current one');
  const retried = await refresh(hooked, s.refresh_token);
  t.equal(retried.status, 200, retried.text);
  t.equal(decodeV2(retried.body.refresh_token).counter, 1, 'the first advance');
  t.equal((await sessionRow(hooked, sessionId)).counter, 1);
});

t.test('an older token within the reuse interval is answered; outside it the whole session is logged out', async (t) => {
  const s = await signUp(api);
  const sessionId = sessionOf(s.access_token);
  const one = await refresh(api, s.refresh_token);
  const two = await refresh(api, one.body.refresh_token);
  t.equal(decodeV2(two.body.refresh_token).counter, 2);
  const concurrent = await refresh(api, s.refresh_token);
  t.equal(concurrent.status, 200, 'refreshed moments ago: a concurrent refresh');
  t.equal(concurrent.body.refresh_token, two.body.refresh_token);

  await api.db.query(`update sessions set refreshed_at = now() - interval '1 hour' where id = $1`, [sessionId]);
  const reuse = await refresh(api, s.refresh_token);
  t.equal(reuse.status, 400);
  t.strictSame(reuse.body, ALREADY_USED);
  t.equal((await api.db.query('select 1 from sessions where id = $1', [sessionId])).rowCount, 0, 'the session is gone');
  const me = await api.request('GET', '/user', { token: two.body.access_token });
  t.equal(me.status, 403);
  t.equal(me.body.error_code, 'session_not_found');
  t.strictSame((await refresh(api, two.body.refresh_token)).body, NOT_FOUND, "the session's current token is dead too");
});

t.test('a v2 session past its not_after cannot refresh, as the original (no session limit set)', async (t) => {
  const s = await signUp(api);
  await api.db.query(`update sessions set not_after = now() + interval '1 hour' where id = $1`, [sessionOf(s.access_token)]);
  const renewed = await refresh(api, s.refresh_token);
  t.equal(renewed.status, 200, 'a not_after still ahead refreshes');
  await api.db.query(`update sessions set not_after = now() - interval '1 second' where id = $1`, [sessionOf(s.access_token)]);
  const res = await refresh(api, renewed.body.refresh_token);
  t.equal(res.status, 400);
  t.strictSame(res.body, { code: 400, error_code: 'session_expired', msg: 'Invalid Refresh Token: Session Expired' });
});

t.test('forged, damaged, ahead and unknown tokens get the original answers', async (t) => {
  const { sessionId, key } = await knownKeySession(api);
  t.equal((await refresh(api, mintV2(sessionId, 0, key))).status, 200, 'a token minted with the key is good (a key in clear opens)');
  t.strictSame((await refresh(api, mintV2(sessionId, 1, key, { signature: true }))).body, NOT_FOUND, 'forged signature');
  t.strictSame((await refresh(api, mintV2(sessionId, 1, randomBytes(32)))).body, NOT_FOUND, 'signed with another key');
  const damaged = Buffer.from(mintV2(sessionId, 1, key), 'base64url');
  damaged[damaged.length - 1] ^= 1;
  t.strictSame((await refresh(api, damaged.toString('base64url'))).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Refresh token is not valid',
  });
  t.strictSame((await refresh(api, mintV2(sessionId, 7, key))).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Invalid Refresh Token: Not Issued By This Server',
  });
  t.strictSame((await refresh(api, mintV2(randomUUID(), 0, key))).body, NOT_FOUND, 'unknown session');
  const plain = await signUp(v1);
  const v1Session = sessionOf(plain.access_token);
  t.strictSame((await refresh(upgradeNone, mintV2(v1Session, 0, key))).body, NOT_FOUND, 'a session of the 12-character format');
  t.equal((await sessionRow(api, sessionId)).counter, 1, 'none of them moved the counter');
});

t.test('10 concurrent refreshes with one token all succeed with the same token; the counter moves once', async (t) => {
  const s = await signUp(api);
  const sessionId = sessionOf(s.access_token);
  const replies = await Promise.all(Array.from({ length: 10 }, () => refresh(api, s.refresh_token)));
  t.strictSame(
    replies.map((r) => r.status),
    Array(10).fill(200),
  );
  t.equal(new Set(replies.map((r) => r.body.refresh_token)).size, 1, 'one token for all');
  t.equal(decodeV2(replies[0].body.refresh_token).counter, 1);
  t.equal((await sessionRow(api, sessionId)).counter, 1);
});

t.test('upgrade percentage 100 turns a 12-character session into v2 at its next refresh; 0 keeps it', async (t) => {
  const s = await signUp(v1);
  const sessionId = sessionOf(s.access_token);
  const kept = await refresh(upgradeNone, s.refresh_token);
  t.equal(kept.status, 200);
  t.match(kept.body.refresh_token, /^[a-z2-7]{12}$/, 'percentage 0: still the 12-character format');
  t.strictSame(await sessionRow(v1, sessionId), { key: null, counter: null });

  const upgraded = await refresh(upgradeAll, kept.body.refresh_token);
  t.equal(upgraded.status, 200);
  const token = decodeV2(upgraded.body.refresh_token);
  t.strictSame({ sessionId: token.sessionId, counter: token.counter }, { sessionId, counter: 0 });
  t.equal((await sessionRow(v1, sessionId)).counter, 0);
  const active = await v1.db.query('select count(*)::int as n from refresh_tokens where session_id = $1 and not revoked', [sessionId]);
  t.equal(active.rows[0].n, 0, 'the 12-character token is revoked and has no child');
  const refreshedCount = async () =>
    (
      await v1.db.query(
        `select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'token_refreshed'`,
        [s.user.id],
      )
    ).rows[0].n;
  const refreshedBefore = await refreshedCount();
  const again = await refresh(upgradeAll, kept.body.refresh_token);
  t.equal(again.body.refresh_token, upgraded.body.refresh_token, 'the upgraded token presented again: the current v2 token');
  t.equal(await refreshedCount(), refreshedBefore + 1, 'that answer audited token_refreshed, as any refresh');
  const next = await refresh(upgradeAll, upgraded.body.refresh_token);
  t.equal(decodeV2(next.body.refresh_token).counter, 1);
  t.strictSame((await refresh(upgradeAll, s.refresh_token)).body, ALREADY_USED, 'an older 12-character token is a reuse');
});

t.test('the 12-character token a v2 upgrade revoked, reused after the reuse interval, logs the whole session out', async (t) => {
  // A thief refreshes a stolen token first: the session moves to v2 and the thief holds its v2 token.
  const s = await signUp(v1);
  const sessionId = sessionOf(s.access_token);
  const thief = await refresh(upgradeWithInterval, s.refresh_token);
  t.equal(thief.status, 200);
  t.equal(decodeV2(thief.body.refresh_token).sessionId, sessionId);
  // The owner presents it after the interval: the revocation moved back rather than waited for.
  await v1.db.query(`update refresh_tokens set updated_at = now() - interval '1 hour' where session_id = $1`, [sessionId]);
  t.strictSame((await refresh(upgradeWithInterval, s.refresh_token)).body, ALREADY_USED, 'a reuse');
  t.equal((await v1.db.query('select 1 from sessions where id = $1', [sessionId])).rowCount, 0, 'the session is gone, its key with it');
  t.strictSame((await refresh(upgradeWithInterval, thief.body.refresh_token)).body, NOT_FOUND, "the thief's v2 token is dead");
  const me = await upgradeWithInterval.request('GET', '/user', { token: thief.body.access_token });
  t.same([me.status, me.body.error_code], [403, 'session_not_found'], "and so are the thief's access tokens");
});

t.test('a service that no longer upgrades ends a v2 session whose 12-character token is reused, as a v2 reuse', async (t) => {
  const s = await signUp(v1);
  const sessionId = sessionOf(s.access_token);
  const upgraded = await refresh(upgradeAll, s.refresh_token);
  t.equal(upgraded.status, 200);
  // Percentage 0 reads the revoked 12-character token as ever: without an interval, a reuse at once.
  t.strictSame((await refresh(upgradeNone, s.refresh_token)).body, ALREADY_USED);
  t.equal((await v1.db.query('select 1 from sessions where id = $1', [sessionId])).rowCount, 0, 'the session is gone');
  t.strictSame((await refresh(upgradeNone, upgraded.body.refresh_token)).body, NOT_FOUND, 'its v2 token is dead');
});

t.test(
  'keys sealed with SECURITY_DB_ENCRYPTION: sealed with the configured key; a key in clear is sealed at its next refresh',
  async (t) => {
    const s = await signUp(sealed);
    const sessionId = sessionOf(s.access_token);
    t.match(JSON.parse((await sessionRow(sealed, sessionId)).key), { key_id: ENCRYPTION.id, alg: 'aes-gcm-hkdf' });
    const res = await refresh(sealed, s.refresh_token);
    t.equal(res.status, 200);
    t.equal(decodeV2(res.body.refresh_token).counter, 1);

    const { sessionId: clearSession, key } = await knownKeySession(sealed);
    const clear = await refresh(sealed, mintV2(clearSession, 0, key));
    t.equal(clear.status, 200);
    const stored = (await sessionRow(sealed, clearSession)).key;
    t.match(JSON.parse(stored), { key_id: ENCRYPTION.id }, 'sealed now');
    t.equal((await refresh(sealed, clear.body.refresh_token)).status, 200, 'and still the same key');
  },
);

t.test('the settings are checked as the original checks them', async (t) => {
  const base = {
    DATABASE_URL: 'postgres://u@db/x',
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: 'a-secret-of-sufficient-length',
    AUTH_SITE_URL: 'https://a.example',
    AUTH_API_EXTERNAL_URL: 'https://auth.example',
  };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ env: { ...base, ...env }, envFile: null });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };
  t.strictSame(
    problems({ GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION: '2', GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '50' }),
    [],
  );
  t.match(problems({ AUTH_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION: '3' }).join(), /SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION/);
  t.match(problems({ AUTH_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '101' }).join(), /SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE/);
  t.match(problems({ AUTH_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE: '-1' }).join(), /SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE/);
});
