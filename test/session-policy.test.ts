// Session limits (docs/tokens-and-sessions.md#session-limits): SESSIONS_TIMEBOX, SESSIONS_INACTIVITY_TIMEOUT,
// SESSIONS_SINGLE_PER_USER and SESSIONS_TAGS end a session as the original does at the refresh grant
// (400 session_expired, one message per reason), and every bearer check refuses it (403 session_expired).
// Time passes by moving the session's and token's timestamps back in the database, never by waiting.
import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService, type TestService } from './helpers/server.js';
import { refresh, signIn, signUp, type Session } from './helpers/accounts.js';
import { adminToken } from './helpers/admin.js';

const limited = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SESSIONS_TIMEBOX: '1h',
  AUTH_SESSIONS_INACTIVITY_TIMEOUT: '30m',
  AUTH_SESSIONS_SINGLE_PER_USER: 'true',
  AUTH_SESSIONS_TAGS: 'web,mobile',
});
const unlimited = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(async () => {
  await limited.stop();
  await unlimited.stop();
});

const EXPIRED = { code: 400, error_code: 'session_expired', msg: 'Invalid Refresh Token: Session Expired' };
const INACTIVE = { code: 400, error_code: 'session_expired', msg: 'Invalid Refresh Token: Session Expired (Inactivity)' };
const NEWER_LOGIN = { code: 400, error_code: 'session_expired', msg: 'Invalid Refresh Token: Session Expired (Revoked by Newer Login)' };
const BEARER_ENDED = { code: 403, error_code: 'session_expired', msg: 'Session is no longer valid' };

const sessionOf = (s: Session) => decodeJwt(s.access_token).session_id as string;
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Moves a session's clock: created `createdAgo` and last refreshed `refreshedAgo` (null: never) before now. */
async function age(api: TestService, s: Session, createdAgo: string, refreshedAgo: string | null) {
  const id = sessionOf(s);
  await api.db.query(
    `update sessions set created_at = now() - $2::interval,
                         refreshed_at = case when $3::interval is null then null else now() - $3::interval end
     where id = $1`,
    [id, createdAgo, refreshedAgo],
  );
  // A token is never older than its session: the first one was issued with it.
  await api.db.query(
    `update refresh_tokens set created_at = now() - $2::interval, updated_at = now() - $2::interval where session_id = $1`,
    [id, createdAgo],
  );
}

const getUser = (api: TestService, s: Session) => api.request('GET', '/user', { token: s.access_token });
const sessionRow = async (api: TestService, s: Session) =>
  (await api.db.query('select * from sessions where id = $1', [sessionOf(s)])).rows[0];

t.test('time box: a session older than SESSIONS_TIMEBOX cannot refresh and its access token is refused', async (t) => {
  const s = await signUp(limited);
  await age(limited, s, '59 minutes', '1 minute');
  const renewed = await refresh(limited, s.refresh_token);
  t.equal(renewed.status, 200, 'inside the time box the session refreshes');

  await age(limited, s, '61 minutes', '1 minute');
  const res = await refresh(limited, renewed.body.refresh_token);
  t.equal(res.status, 400);
  t.strictSame(res.body, EXPIRED);
  const user = await getUser(limited, renewed.body);
  t.equal(user.status, 403);
  t.strictSame(user.body, BEARER_ENDED);
  // Nothing is written: the session and its active token stay as they were until the cleanup removes them.
  t.ok(await sessionRow(limited, s), 'the session row stays');
  const token = (await limited.db.query('select revoked from refresh_tokens where token_hash = $1', [hash(renewed.body.refresh_token)]))
    .rows[0];
  t.same(token, { revoked: false }, 'the presented token is not revoked');
});

t.test('inactivity: measured from the last refresh, or from sign-in when never refreshed', async (t) => {
  const s = await signUp(limited);
  await age(limited, s, '40 minutes', null);
  t.strictSame((await refresh(limited, s.refresh_token)).body, INACTIVE, 'never refreshed: counted from the first token');
  t.strictSame((await getUser(limited, s)).body, BEARER_ENDED);

  const other = await signUp(limited);
  await age(limited, other, '50 minutes', '29 minutes');
  const renewed = await refresh(limited, other.refresh_token);
  t.equal(renewed.status, 200, 'refreshed 29 minutes ago: still active');
  t.equal((await getUser(limited, renewed.body)).status, 200);
  await age(limited, other, '50 minutes', '31 minutes');
  const res = await refresh(limited, renewed.body.refresh_token);
  t.equal(res.status, 400);
  t.strictSame(res.body, INACTIVE);
});

t.test('time box before inactivity: a session past both is reported as expired, the original order', async (t) => {
  const s = await signUp(limited);
  await age(limited, s, '2 hours', '45 minutes');
  t.strictSame((await refresh(limited, s.refresh_token)).body, EXPIRED);
});

t.test('single session per user: a newer sign-in ends the older session at its next refresh and bearer check', async (t) => {
  const first = await signUp(limited);
  const second = await signIn(limited, first.user.email);
  const res = await refresh(limited, first.refresh_token);
  t.equal(res.status, 400);
  t.strictSame(res.body, NEWER_LOGIN);
  t.strictSame((await getUser(limited, first)).body, BEARER_ENDED);
  t.ok(await sessionRow(limited, first), 'the older session is not deleted, only refused');

  const renewed = await refresh(limited, second.refresh_token);
  t.equal(renewed.status, 200, 'the newest session refreshes');
  t.equal((await getUser(limited, renewed.body)).status, 200);

  // A newer session that has ended itself does not count: the older one is the user's live session again.
  await age(limited, renewed.body, '2 hours', '1 minute');
  await limited.db.query(`update sessions set created_at = now() - interval '3 minutes' where id = $1`, [sessionOf(first)]);
  t.equal((await refresh(limited, first.refresh_token)).status, 200, 'the older session refreshes once the newer one has expired');
});

t.test('SESSIONS_TAGS: one live session per tag; an untagged session counts under the first tag', async (t) => {
  const mobile = await signUp(limited);
  await limited.db.query(`update sessions set tag = 'mobile' where id = $1`, [sessionOf(mobile)]);
  const web = await signIn(limited, mobile.user.email); // untagged: counts as 'web'
  t.equal((await refresh(limited, mobile.refresh_token)).status, 200, 'a newer session under another tag does not end it');

  const unknownTag = await signIn(limited, mobile.user.email);
  await limited.db.query(`update sessions set tag = 'tv' where id = $1`, [sessionOf(unknownTag)]);
  t.strictSame((await refresh(limited, web.refresh_token)).body, NEWER_LOGIN, "a tag that is not listed counts as the first ('web')");
});

t.test('an admin bearer whose session has ended is refused', async (t) => {
  const s = await signUp(limited);
  // A user's token with an admin role: it names its user and session.
  const admin = await adminToken('service_role', { sub: s.user.id, session_id: sessionOf(s) });
  t.equal((await limited.request('GET', '/admin/users', { token: admin })).status, 200, 'a live session: admin rights');
  await age(limited, s, '2 hours', '1 minute');
  const res = await limited.request('GET', '/admin/users', { token: admin });
  t.equal(res.status, 403);
  t.strictSame(res.body, BEARER_ENDED);
  t.equal((await limited.request('GET', '/admin/users', { token: await adminToken() })).status, 200, 'a sessionless key is not affected');
});

t.test('with no limits set nothing ends: an old, idle session and an older one beside a newer sign-in still refresh', async (t) => {
  const s = await signUp(unlimited);
  const newer = await signIn(unlimited, s.user.email);
  await age(unlimited, s, '400 days', null);
  t.equal((await getUser(unlimited, s)).status, 200);
  t.equal((await refresh(unlimited, s.refresh_token)).status, 200);
  t.equal((await refresh(unlimited, newer.refresh_token)).status, 200);
});

t.test('not_after ends a session whatever the limits, as the original: refresh, user and admin bearers refused', async (t) => {
  // not_after is what a SAML assertion's SessionNotOnOrAfter sets (or a session adopted from GoTrue keeps).
  const setNotAfter = (api: TestService, s: Session, offset: string) =>
    api.db.query(`update sessions set not_after = now() + $2::interval where id = $1`, [sessionOf(s), offset]);
  for (const [name, api] of [
    ['no limit set', unlimited],
    ['limits set', limited],
  ] as const) {
    const s = await signUp(api);
    const admin = await adminToken('service_role', { sub: s.user.id, session_id: sessionOf(s) });
    await setNotAfter(api, s, '1 hour');
    const renewed = await refresh(api, s.refresh_token);
    t.equal(renewed.status, 200, `${name}: a not_after still ahead refreshes`);
    t.equal((await getUser(api, renewed.body)).status, 200, `${name}: and its access token works`);
    t.equal((await api.request('GET', '/admin/users', { token: admin })).status, 200, `${name}: and so does an admin bearer naming it`);

    await setNotAfter(api, s, '-1 second');
    const res = await refresh(api, renewed.body.refresh_token);
    t.equal(res.status, 400, `${name}: past not_after the refresh is refused`);
    t.strictSame(res.body, EXPIRED);
    const user = await getUser(api, renewed.body);
    t.equal(user.status, 403, `${name}: and its access token`);
    t.strictSame(user.body, BEARER_ENDED);
    const asAdmin = await api.request('GET', '/admin/users', { token: admin });
    t.equal(asAdmin.status, 403, `${name}: and an admin bearer naming it`);
    t.strictSame(asAdmin.body, BEARER_ENDED);
  }
});

t.test('a negative or malformed limit stops start-up with the setting named', async (t) => {
  const { loadConfig } = await import('../dist/server/config/load.js');
  const base = {
    DATABASE_URL: 'postgres://127.0.0.1:1/none',
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: 'x'.repeat(32),
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
  };
  for (const [name, value] of [
    ['AUTH_SESSIONS_TIMEBOX', '-1h'],
    ['AUTH_SESSIONS_INACTIVITY_TIMEOUT', 'soon'],
    ['AUTH_SESSIONS_SINGLE_PER_USER', 'maybe'],
    ['AUTH_SESSIONS_ALLOW_LOW_AAL', '-5m'],
  ]) {
    t.match(
      problemsOf(() => loadConfig({ envFile: null, env: { ...base, [name]: value } })),
      [new RegExp(`^${name}: `)],
      `${name}=${value}`,
    );
  }
  const config = loadConfig({ envFile: null, env: { ...base, AUTH_SESSIONS_TAGS: ' web , mobile ', AUTH_SESSIONS_TIMEBOX: '90' } });
  t.strictSame(config.sessions, {
    timeboxSeconds: 90,
    inactivityTimeoutSeconds: 0,
    singlePerUser: false,
    tags: ['web', 'mobile'],
    allowLowAalSeconds: 0,
  });
});

/** The configuration problems a call throws (ConfigError.problems), [] when it does not throw. */
function problemsOf(load: () => unknown): string[] {
  try {
    load();
    return [];
  } catch (err) {
    return (err as { problems?: string[] }).problems ?? [String(err)];
  }
}
