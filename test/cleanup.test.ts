// The background cleanup (docs/tokens-and-sessions.md#cleanup): it removes exactly the rows that can no
// longer be used, past their grace, and nothing live; two instances running it at once against one
// database share the work without removing anything twice; turned off, it does not run at all. Anonymous
// users go 30 days after sign-up, never one a request is holding, and as an admin's deletion removes them.
// Ages are set in the database (now() - interval), never waited for.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { loadConfig } from '../dist/server/config/load.js';
import { startCleanup } from '../dist/server/cleanup/loop.js';
import { migrate } from '../dist/db/migrate.js';
import { createPool } from '../dist/db/pool.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { refresh, signUp } from './helpers/accounts.js';
import { authClient } from './helpers/auth-client.js';
import { deleteOldAnonymousUsers } from '../dist/db/cleanup.js';
import { scrapeMetrics, total } from './helpers/exposition.js';

const quiet = pino({ level: 'silent' });

/** The settings every cleanup below runs with: grace 1 h, reuse interval 10 min, batches of 7 rows. */
const SETTINGS = {
  AUTH_DB_CLEANUP_GRACE: '1h',
  AUTH_DB_CLEANUP_BATCH_SIZE: '7',
  AUTH_DB_CLEANUP_INTERVAL: '1h', // the passes below are asked for; the timer never fires during a test
  AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10m',
  AUTH_SESSIONS_TIMEBOX: '24h',
  AUTH_SESSIONS_INACTIVITY_TIMEOUT: '2h',
  AUTH_DB_CLEANUP_AUDIT_LOG_RETENTION: '168h',
  AUTH_MAILER_OTP_EXP: '3600',
  AUTH_SMS_OTP_EXP: '60',
};

function cleanupOn(url: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    envFile: null,
    env: {
      DATABASE_URL: url,
      AUTH_DB_DRIVER: 'postgres',
      AUTH_JWT_SECRET: JWT_SECRET,
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
      ...SETTINGS,
      ...env,
    },
  });
  return startCleanup(config, url, quiet);
}

async function migratedDatabase(t: { teardown(fn: () => Promise<void>): void }): Promise<{ db: TestDatabase; pool: pg.Pool }> {
  const db = await createTestDatabase();
  await migrate(db.url, 'auth');
  // The service's pool reports an idle connection's error instead of throwing it: pool.end() resolves before
  // its connections have closed, and the drop WITH (FORCE) right after may end one of them first.
  const pool = createPool({ url: db.url, max: 3, namespace: 'auth' });
  t.teardown(async () => {
    await pool.end();
    await db.drop();
  });
  return { db, pool };
}

const hex = () => randomBytes(16).toString('hex');

/**
 * Rows on both sides of every line the cleanup draws, labelled `stale` (must go) or `live` (must stay).
 * Sessions that go hold one active token each, so every refresh token counted as removed is a revoked one.
 */
async function seed(q: pg.Pool) {
  const user = (await q.query(`insert into users (email) values ($1) returning id`, [`${hex()}@example.com`])).rows[0].id as string;
  const session = async (created: string, refreshed: string | null, notAfter: string | null = null) => {
    const id = (
      await q.query(
        `insert into sessions (user_id, created_at, refreshed_at, not_after)
         values ($1, now() - $2::interval, now() - $3::interval, now() - $4::interval) returning id`,
        [user, created, refreshed, notAfter],
      )
    ).rows[0].id as string;
    await q.query(`insert into refresh_tokens (token_hash, user_id, session_id, created_at) values ($1, $2, $3, now() - $4::interval)`, [
      hex(),
      user,
      id,
      created,
    ]);
    return id;
  };
  const live = {
    sessions: [
      await session('1 hour', '1 minute'),
      await session('10 minutes', null, '30 minutes'), // past not_after, inside the grace
      await session('1 day 30 minutes', '1 minute'), // past the time box, inside the grace
      await session('3 hours', '2 hours 30 minutes'), // inactive, inside the grace
    ],
  };
  const stale = {
    sessions: [
      await session('10 minutes', null, '2 hours'), // past not_after + grace
      await session('1 day 2 hours', '5 minutes'), // past the time box + grace
      await session('4 hours', '3 hours 10 minutes'), // inactive + grace
      await session('3 hours 30 minutes', null), // never refreshed, inactive + grace
    ],
  };
  const home = live.sessions[0];
  const revoked = async (age: string) =>
    (
      await q.query(
        `insert into refresh_tokens (token_hash, user_id, session_id, revoked, updated_at) values ($1, $2, $3, true, now() - $4::interval) returning id`,
        [hex(), user, home, age],
      )
    ).rows[0].id as string;
  const staleTokens: string[] = [];
  for (let i = 0; i < 60; i++) staleTokens.push(await revoked('1 hour 15 minutes'));
  const liveTokens = [await revoked('1 hour 5 minutes'), await revoked('30 minutes')];

  const flow = async (created: string, issued: string | null, method = 'email/signup') =>
    (
      await q.query(
        `insert into flow_state (user_id, auth_code, authentication_method, created_at, auth_code_issued_at)
         values ($1, $2, $3, now() - $4::interval, now() - $5::interval) returning id`,
        [user, hex(), method, created, issued],
      )
    ).rows[0].id as string;
  // An OAuth flow between /authorize and /callback has no user and no auth code yet (sql/00002); one whose
  // callback finished a PKCE flow has both, from auth_code_issued_at on.
  const oauthFlow = async (created: string, issued: string | null) =>
    (
      await q.query(
        `insert into flow_state (user_id, auth_code, provider_type, authentication_method, created_at, auth_code_issued_at)
         values ($1, $2, 'github', 'oauth', now() - $3::interval, now() - $4::interval) returning id`,
        [issued ? user : null, issued ? hex() : null, created, issued],
      )
    ).rows[0].id as string;
  const staleFlows = [
    await flow('1 hour 6 minutes', null),
    await flow('2 hours', '1 hour 10 minutes', 'magiclink'),
    await oauthFlow('1 hour 6 minutes', null),
    await oauthFlow('2 hours', '1 hour 10 minutes'),
  ];
  const liveFlows = [
    await flow('1 hour 4 minutes', null),
    await flow('2 hours', '10 minutes', 'magiclink'),
    await oauthFlow('1 hour 4 minutes', null),
    await oauthFlow('2 hours', '10 minutes'),
  ];

  const oneTime = async (type: string, created: string) =>
    (
      await q.query(
        `insert into one_time_tokens (user_id, token_type, token_hash, relates_to, created_at) values ($1, $2, $3, 'a@example.com', now() - $4::interval) returning id`,
        [user, type, hex(), created],
      )
    ).rows[0].id as string;
  const staleOneTime = [await oneTime('recovery_token', '2 hours 2 minutes')];
  const liveOneTime = [await oneTime('confirmation_token', '1 hour 59 minutes')];

  // A used Web3 message is kept until its validity ends (usable_until), then for the grace.
  const web3Message = async (endedAgo: string) =>
    (
      await q.query(
        `insert into web3_message_uses (message_hash, usable_until) values ($1, now() - $2::interval) returning encode(message_hash, 'hex') as id`,
        [randomBytes(32), endedAgo],
      )
    ).rows[0].id as string;
  const staleWeb3 = [await web3Message('1 hour 1 minute')];
  const liveWeb3 = [await web3Message('59 minutes'), await web3Message('-5 minutes')];

  // An accepted SAML assertion is kept until its IssueInstant window ends (usable_until), then for the grace.
  const provider = (await q.query(`insert into sso_providers default values returning id`)).rows[0].id as string;
  const samlAssertion = async (endedAgo: string) =>
    (
      await q.query(
        `insert into saml_assertion_uses (sso_provider_id, assertion_id, usable_until) values ($1, $2, now() - $3::interval) returning assertion_id as id`,
        [provider, `_a${hex()}`, endedAgo],
      )
    ).rows[0].id as string;
  const staleSaml = [await samlAssertion('1 hour 1 minute')];
  const liveSaml = [await samlAssertion('59 minutes'), await samlAssertion('-90 seconds')];

  // A send pretended to an unknown address refuses repeats for the longer send interval (SMTP_MAX_FREQUENCY,
  // 15 min by default), then for the grace; the shared counters in the same table are never removed. A
  // client's bucket goes once it has refilled (burst 30 at RATE_LIMIT_OTP 30 per 5 min: 5 min; the anonymous
  // bucket, 30 at 30 an hour: 1 h), as a row is left for every client address a proxy ever reported.
  const rateRow = async (key: string, age: string) =>
    (await q.query(`insert into rate_limits (key, updated_at) values ($1, now() - $2::interval) returning key as id`, [key, age])).rows[0]
      .id as string;
  const stalePretended = [
    await rateRow(`pretended_send:recovery:${hex()}`, '1 hour 16 minutes'),
    await rateRow('recover:203.0.113.9', '2 days'),
    await rateRow('anonymous:203.0.113.9', '1 hour 1 minute'),
  ];
  const livePretended = [
    await rateRow(`pretended_send:confirmation:${hex()}`, '1 hour 14 minutes'),
    await rateRow('email_sent', '2 days'),
    await rateRow('recover:203.0.113.10', '4 minutes'),
    await rateRow('anonymous:203.0.113.10', '59 minutes'),
  ];

  const audit = async (age: string, n: number) =>
    (
      await q.query(`insert into audit_log_entries (created_at) select now() - $1::interval from generate_series(1, $2) returning id`, [
        age,
        n,
      ])
    ).rows.map((r) => r.id as string);
  const staleAudit = await audit('7 days 1 minute', 30);
  const liveAudit = await audit('6 days 23 hours', 3);

  return {
    stale: {
      sessions: stale.sessions,
      tokens: staleTokens,
      flows: staleFlows,
      oneTime: staleOneTime,
      web3: staleWeb3,
      saml: staleSaml,
      pretended: stalePretended,
      audit: staleAudit,
    },
    live: {
      sessions: live.sessions,
      tokens: liveTokens,
      flows: liveFlows,
      oneTime: liveOneTime,
      web3: liveWeb3,
      saml: liveSaml,
      pretended: livePretended,
      audit: liveAudit,
    },
  };
}

const ids = async (q: pg.Pool, table: string) => new Set((await q.query(`select id::text from ${table}`)).rows.map((r) => r.id as string));

t.test('two instances at once remove exactly the stale rows, each once, and nothing live', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const rows = await seed(pool);
  const [a, b] = [cleanupOn(db.url), cleanupOn(db.url)];
  t.teardown(async () => {
    await a.stop();
    await b.stop();
  });
  const [first, second] = await Promise.all([a.runOnce(), b.runOnce()]);
  const removed = (table: string) => ((first as any)[table] ?? 0) + ((second as any)[table] ?? 0);
  t.equal(removed('refresh_tokens'), 60, 'every stale revoked token removed once (60 rows, in batches of 7)');
  t.equal(removed('sessions'), 4);
  t.equal(removed('flow_state'), 4, 'PKCE and OAuth flows alike, with or without an auth code');
  t.equal(removed('one_time_tokens'), 1);
  t.equal(removed('web3_message_uses'), 1, 'the used Web3 message whose validity ended longer ago than the grace');
  t.equal(removed('saml_assertion_uses'), 1, 'the accepted SAML assertion whose window ended longer ago than the grace');
  t.equal(removed('rate_limits'), 3, 'the stale pretended send and the two refilled buckets, and no counter');
  t.equal(removed('audit_log_entries'), 30);

  const sessions = await ids(pool, 'sessions');
  t.strictSame([...sessions].sort(), [...rows.live.sessions].sort(), 'the live sessions, and only they, remain');
  const tokens = await ids(pool, 'refresh_tokens');
  for (const id of rows.live.tokens) t.ok(tokens.has(id), `revoked token ${id} inside the reuse interval + grace stays`);
  t.equal(
    tokens.size,
    rows.live.tokens.length + rows.live.sessions.length,
    'left: the live revoked tokens and each live session’s active token',
  );
  t.strictSame([...(await ids(pool, 'flow_state'))].sort(), [...rows.live.flows].sort());
  t.strictSame([...(await ids(pool, 'one_time_tokens'))].sort(), [...rows.live.oneTime].sort());
  const web3Left = (await pool.query(`select encode(message_hash, 'hex') as id from web3_message_uses`)).rows.map((r) => r.id as string);
  t.strictSame(web3Left.sort(), [...rows.live.web3].sort());
  const samlLeft = (await pool.query(`select assertion_id as id from saml_assertion_uses`)).rows.map((r) => r.id as string);
  t.strictSame(samlLeft.sort(), [...rows.live.saml].sort());
  const rateLeft = (await pool.query(`select key as id from rate_limits`)).rows.map((r) => r.id as string);
  t.strictSame(rateLeft.sort(), [...rows.live.pretended].sort());
  t.strictSame([...(await ids(pool, 'audit_log_entries'))].sort(), [...rows.live.audit].sort());

  t.strictSame(await a.runOnce(), {}, 'a second pass finds nothing left');
});

t.test('without an audit retention or session limits, audit entries and sessions ended by them are kept', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const rows = await seed(pool);
  const cleanup = cleanupOn(db.url, {
    AUTH_DB_CLEANUP_AUDIT_LOG_RETENTION: '0',
    AUTH_SESSIONS_TIMEBOX: '0',
    AUTH_SESSIONS_INACTIVITY_TIMEOUT: '0',
  });
  t.teardown(() => cleanup.stop());
  const removed = await cleanup.runOnce();
  t.strictSame(
    removed,
    { refresh_tokens: 60, sessions: 1, flow_state: 4, one_time_tokens: 1, web3_message_uses: 1, saml_assertion_uses: 1, rate_limits: 3 },
    'only the session past not_after goes',
  );
  t.equal((await ids(pool, 'audit_log_entries')).size, rows.stale.audit.length + rows.live.audit.length);
  t.equal((await ids(pool, 'sessions')).size, rows.live.sessions.length + rows.stale.sessions.length - 1);
});

t.test('a service runs the cleanup on its own timer, counts it in the metrics, and stops it with itself', async (t) => {
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_DB_CLEANUP_ENABLED: 'true',
    AUTH_DB_CLEANUP_INTERVAL: '0.1',
    AUTH_DB_CLEANUP_GRACE: '0',
    AUTH_METRICS_ENABLED: 'true',
    AUTH_METRICS_EXPORTER: 'prometheus',
    OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
    OTEL_EXPORTER_PROMETHEUS_PORT: '0',
  });
  t.teardown(() => api.stop());
  t.ok(api.service.cleanup, 'the cleanup runs');
  t.ok(await api.service.cleanup!.nextPass(), 'a pass ends without being asked');

  // Two refreshes leave two revoked tokens; aged past the grace (0) by a second, they go at the next pass.
  const session = await signUp(api);
  const second = await refresh(api, session.refresh_token);
  const third = await refresh(api, second.body.refresh_token);
  t.equal(third.status, 200);
  await api.db.query(`update refresh_tokens set updated_at = now() - interval '1 second' where revoked`);
  await api.service.cleanup!.runOnce();
  // The timer's own passes may have taken them first: count every pass.
  t.equal(api.service.cleanup!.totals().refresh_tokens, 2, 'both revoked tokens removed');
  t.strictSame((await api.db.query('select count(*)::int as n from refresh_tokens where revoked')).rows, [{ n: 0 }]);
  t.equal((await refresh(api, third.body.refresh_token)).status, 200, 'the live session refreshes on');

  const scrape = await scrapeMetrics(api.service.metricsPort);
  t.ok(total(scrape, 'gotrue_cleanup_affected_rows_total', { table: 'refresh_tokens' }) >= 2, 'the metric counts them');
  await api.stop();
  t.ok(
    api.logs().some((l) => l.msg === 'database cleanup removed rows' && l.removed.refresh_tokens >= 1),
    'the log says what was removed',
  );
});

t.test('DB_CLEANUP_ENABLED=false: no cleanup runs, so nothing is removed', async (t) => {
  const api = await startTestService({ AUTH_DB_CLEANUP_ENABLED: 'false' });
  t.teardown(() => api.stop());
  t.equal(api.service.cleanup, null);
  const { rows } = await api.db.query(
    `select count(*)::int as n from pg_stat_activity where application_name = 'portcullis_cleanup' and datname = current_database()`,
  );
  t.equal(rows[0].n, 0, 'no cleanup connection is open');
  t.notOk(
    api.logs().some((l) => l.msg === 'database cleanup started'),
    'no cleanup was started',
  );
});

/** The payload of the cleanup's audit entries, as the service writes it (src/server/cleanup/plan.ts). */
const CLEANUP_ACTOR = { actor_id: '00000000-0000-0000-0000-000000000000', actor_username: 'portcullis_cleanup' };

/**
 * Anonymous users and MFA rows on both sides of the cleanup's lines: anonymous users 30 days after
 * sign-up (each with a session, refresh token and AMR claim that must go with it), MFA challenges
 * MFA_CHALLENGE_EXPIRY_DURATION (300 s) + grace (1 h) after they were issued, unverified factors once
 * neither they nor their last challenge can be used, + grace.
 */
async function seedUsersAndChallenges(q: pg.Pool) {
  const user = async (anonymous: boolean, created: string, email: string | null = null) => {
    const id = (
      await q.query(`insert into users (is_anonymous, email, created_at) values ($1, $2, now() - $3::interval) returning id`, [
        anonymous,
        email,
        created,
      ])
    ).rows[0].id as string;
    const session = (await q.query(`insert into sessions (user_id) values ($1) returning id`, [id])).rows[0].id as string;
    await q.query(`insert into refresh_tokens (token_hash, user_id, session_id) values ($1, $2, $3)`, [hex(), id, session]);
    await q.query(`insert into mfa_amr_claims (session_id, authentication_method) values ($1, 'anonymous')`, [session]);
    return id;
  };
  const staleUsers: string[] = [];
  for (let i = 0; i < 12; i++) staleUsers.push(await user(true, '30 days 1 minute'));
  const liveUsers = [
    await user(true, '29 days 23 hours'), // anonymous, younger than 30 days
    await user(false, '400 days', `${hex()}@example.com`), // permanent, however old
  ];

  const owner = liveUsers[1];
  const factor = async (status: string, created: string, challenged: string | null) =>
    (
      await q.query(
        `insert into mfa_factors (user_id, factor_type, status, secret, created_at, last_challenged_at, friendly_name)
         values ($1, 'totp', $2, 'x', now() - $3::interval, now() - $4::interval, $5) returning id`,
        [owner, status, created, challenged, hex()],
      )
    ).rows[0].id as string;
  const mfaChallenge = async (factorId: string, created: string, verified: boolean) =>
    (
      await q.query(
        `insert into mfa_challenges (factor_id, ip_address, created_at, verified_at)
         values ($1, '127.0.0.1', now() - $2::interval, case when $3 then now() - $2::interval end) returning id`,
        [factorId, created, verified],
      )
    ).rows[0].id as string;
  const verified = await factor('verified', '400 days', '2 days');
  // Unverified factors: usable for MFA_FACTOR_EXPIRY_DURATION (300 s) after enrolment, and while a challenge of theirs is.
  const staleFactors = [await factor('unverified', '2 days', '1 hour 6 minutes'), await factor('unverified', '1 hour 6 minutes', null)];
  const liveFactors = [verified, await factor('unverified', '2 days', '1 minute'), await factor('unverified', '10 minutes', null)];
  const staleChallenges = [
    await mfaChallenge(verified, '1 hour 6 minutes', false),
    await mfaChallenge(verified, '2 days', true),
    await mfaChallenge(staleFactors[0], '1 hour 6 minutes', false),
  ];
  const liveChallenges = [
    await mfaChallenge(verified, '1 hour 4 minutes', false),
    await mfaChallenge(verified, '1 minute', true),
    await mfaChallenge(liveFactors[1], '1 minute', false),
  ];
  return {
    stale: { users: staleUsers, challenges: staleChallenges, factors: staleFactors },
    live: { users: liveUsers, challenges: liveChallenges, factors: liveFactors },
  };
}

t.test(
  'anonymous users 30 days after sign-up go with everything they had, audited once each; old MFA challenges and factors go',
  async (t) => {
    const { db, pool } = await migratedDatabase(t);
    const rows = await seedUsersAndChallenges(pool);
    const env = { AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' };
    const [a, b] = [cleanupOn(db.url, env), cleanupOn(db.url, env)];
    t.teardown(async () => {
      await a.stop();
      await b.stop();
    });
    const [first, second] = await Promise.all([a.runOnce(), b.runOnce()]);
    const removed = (table: string) => ((first as any)[table] ?? 0) + ((second as any)[table] ?? 0);
    t.equal(removed('users'), 12, 'each stale anonymous user removed once (one per statement: a user is a tenth of a batch of 7)');
    t.equal(removed('mfa_challenges'), 3, 'verified or not, a challenge past expiry + grace goes');
    t.equal(removed('mfa_factors'), 2, 'an unverified factor goes once neither it nor its last challenge is usable');

    t.strictSame(
      [...(await ids(pool, 'users'))].sort(),
      [...rows.live.users].sort(),
      'the young anonymous user and the permanent one stay',
    );
    t.strictSame([...(await ids(pool, 'mfa_challenges'))].sort(), [...rows.live.challenges].sort());
    t.strictSame(
      [...(await ids(pool, 'mfa_factors'))].sort(),
      [...rows.live.factors].sort(),
      'verified factors, and unverified ones still usable, stay',
    );
    const { rows: left } = await pool.query(
      `select (select count(*)::int from sessions where user_id = any($1::uuid[])) as sessions,
            (select count(*)::int from refresh_tokens where user_id = any($1::uuid[])) as tokens,
            (select count(*)::int from mfa_amr_claims) as claims`,
      [rows.stale.users],
    );
    t.strictSame(
      left,
      [{ sessions: 0, tokens: 0, claims: rows.live.users.length }],
      "the deleted users' sessions, tokens and AMR claims are gone",
    );

    const { rows: audit } = await pool.query(`select payload, ip_address from audit_log_entries order by payload->'traits'->>'user_id'`);
    t.strictSame(
      audit,
      [...rows.stale.users].sort().map((id) => ({
        payload: {
          ...CLEANUP_ACTOR,
          actor_via_sso: false,
          action: 'user_deleted',
          log_type: 'team',
          traits: { user_id: id, user_email: '', user_phone: '' },
        },
        ip_address: '',
      })),
      'one user_deleted entry per deleted user, as DELETE /admin/users writes, under the cleanup',
    );
    t.strictSame(await a.runOnce(), {}, 'a second pass finds nothing left');
  },
);

t.test('with anonymous sign-ins disabled (the default) anonymous users are kept, as in the original', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const rows = await seedUsersAndChallenges(pool);
  const cleanup = cleanupOn(db.url);
  t.teardown(() => cleanup.stop());
  t.strictSame(await cleanup.runOnce(), { mfa_challenges: 3, mfa_factors: 2 });
  t.equal((await ids(pool, 'users')).size, rows.stale.users.length + rows.live.users.length);
});

t.test('an anonymous user a request holds is skipped, and kept once the request made it permanent', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const rows = await seedUsersAndChallenges(pool);
  const [held, another] = rows.stale.users;
  const cleanup = cleanupOn(db.url, { AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
  t.teardown(() => cleanup.stop());

  // A request converting `held` (as PUT /user and /verify do: the user's row locked first) is under way.
  const request = await pool.connect();
  await request.query('begin');
  await request.query('select 1 from users where id = $1 for update', [held]);
  await request.query(`update users set is_anonymous = false, email = $2 where id = $1`, [held, `${hex()}@example.com`]);
  const during = await cleanup.runOnce();
  t.equal(during.users, 11, 'every other stale anonymous user goes; the held one is skipped, not waited for');
  await request.query('commit');
  request.release();

  t.strictSame(await cleanup.runOnce(), {}, 'made permanent meanwhile, it is not deleted at the next pass');
  t.ok((await ids(pool, 'users')).has(held));

  // A request that held the row and gave up (rolled back) leaves it anonymous: the next pass takes it.
  const other = await pool.connect();
  const late = (await pool.query(`insert into users (is_anonymous, created_at) values (true, now() - interval '31 days') returning id`))
    .rows[0].id as string;
  await other.query('begin');
  await other.query('select 1 from users where id = $1 for update', [late]);
  t.strictSame(await cleanup.runOnce(), {}, 'held: skipped');
  await other.query('rollback');
  other.release();
  t.strictSame(await cleanup.runOnce(), { users: 1 }, 'released unchanged: deleted');
  t.notOk((await ids(pool, 'users')).has(late));
  t.notOk((await ids(pool, 'users')).has(another), 'the other stale users went in the first pass');
});

t.test('through the service: an anonymous session past 30 days ends, and a request behind the deletion finds no user', async (t) => {
  const database = await createTestDatabase();
  const api = await startTestService({
    DATABASE_URL: database.url,
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_DB_CLEANUP_ENABLED: 'true',
    AUTH_DB_CLEANUP_INTERVAL: '1h',
  });
  const pool = createPool({ url: database.url, max: 4, namespace: 'auth' });
  t.teardown(async () => {
    await pool.end();
    await api.stop();
    await database.drop();
  });

  // The official client signs in anonymously; 31 days later the cleanup has removed the user.
  const client = authClient(api.url);
  const { data, error } = await client.signInAnonymously();
  t.equal(error, null);
  const userId = data.user!.id;
  const kept = (await authClient(api.url).signInAnonymously()).data.session!;
  await pool.query(`update users set created_at = now() - interval '31 days' where id = $1`, [userId]);
  const removed = await api.service.cleanup!.runOnce();
  t.equal(removed.users, 1, 'only the old anonymous user');
  const refreshed = await client.refreshSession();
  t.equal(refreshed.error?.message, 'Invalid Refresh Token: Refresh Token Not Found', 'its refresh token is gone with it');
  const user = await api.request('GET', '/user', { token: data.session!.access_token });
  t.equal(user.status, 403);
  t.equal(user.body.error_code, 'user_not_found');
  t.equal((await api.request('GET', '/user', { token: kept.access_token })).status, 200, 'a younger anonymous user is untouched');

  // A request that reaches the user's row while the cleanup deletes it (the deletion waits on a session a
  // refresh holds, then the request waits on the deleted row) answers as after an admin's deletion.
  const session = (await client.signInAnonymously()).data.session!;
  const victim = session.user.id;
  await pool.query(`update users set created_at = now() - interval '31 days' where id = $1`, [victim]);
  const refreshing = await pool.connect();
  await refreshing.query('begin');
  await refreshing.query('select 1 from sessions where user_id = $1 for update', [victim]);
  const lock = lockWaits(pool);
  const deletion = deleteOldAnonymousUsers(pool, 30 * 86400, 10, { action: 'user_deleted' });
  await lock.waiters(1);
  const update = api.request('PUT', '/user', { token: session.access_token, body: { data: { nickname: 'still here' } } });
  await lock.waiters(2);
  await refreshing.query('commit');
  refreshing.release();
  t.equal(await deletion, 1);
  const reply = await update;
  t.equal(reply.status, 403, reply.text);
  t.equal(reply.body.error_code, 'user_not_found');
  t.equal((await pool.query('select 1 from users where id = $1', [victim])).rowCount, 0, 'the update wrote nothing back');
});

/** Resolves once `n` sessions of the database wait on a lock (pg_stat_activity), as test/helpers/row-lock.ts does. */
function lockWaits(pool: pg.Pool) {
  return {
    async waiters(n: number) {
      for (let i = 0; i < 400; i++) {
        const { rows } = await pool.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`${n} statements never waited on a lock`);
    },
  };
}

t.test('cleanup settings out of range stop start-up with the setting named', async (t) => {
  for (const [name, value] of [
    ['AUTH_DB_CLEANUP_INTERVAL', '0'],
    ['AUTH_DB_CLEANUP_INTERVAL', '25h'],
    ['AUTH_DB_CLEANUP_BATCH_SIZE', '0'],
    ['AUTH_DB_CLEANUP_GRACE', '-1h'],
    ['AUTH_DB_CLEANUP_AUDIT_LOG_RETENTION', 'forever'],
  ]) {
    t.match(
      problemsOf(() => cleanupOn('postgres://127.0.0.1:1/none', { [name]: value })),
      [new RegExp(`^${name}: `)],
      `${name}=${value}`,
    );
  }
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

t.test('OAuth server authorization requests go once expired longer ago than the grace', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const [{ id: clientId }] = (
    await pool.query(`insert into oauth_clients (id, registration_type, redirect_uris, grant_types, token_endpoint_auth_method)
                      values (gen_random_uuid(), 'manual', 'https://app.example/cb', 'authorization_code', 'none') returning id`)
  ).rows;
  const request = async (expiredAgo: string, status: string) =>
    (
      await pool.query(
        `insert into oauth_authorizations (authorization_id, client_id, redirect_uri, scope, status, created_at, expires_at)
         values (gen_random_uuid()::text, $1, 'https://app.example/cb', 'email', $2, now() - $3::interval - interval '10 minutes', now() - $3::interval)
         returning id::text`,
        [clientId, status, expiredAgo],
      )
    ).rows[0].id as string;
  await request('1 hour 1 minute', 'pending');
  await request('2 hours', 'approved');
  const live = [await request('59 minutes', 'denied'), await request('-5 minutes', 'pending')];
  const cleanup = cleanupOn(db.url);
  t.teardown(() => cleanup.stop());
  t.strictSame(await cleanup.runOnce(), { oauth_authorizations: 2 });
  t.strictSame([...(await ids(pool, 'oauth_authorizations'))].sort(), live.sort());
});

t.test('SAML relay states of sign-ins that never reached the ACS go once older than their validity + the grace', async (t) => {
  const { db, pool } = await migratedDatabase(t);
  const [{ id: provider }] = (await pool.query(`insert into sso_providers default values returning id`)).rows;
  const relayState = async (age: string) =>
    (
      await pool.query(
        `insert into saml_relay_states (sso_provider_id, request_id, created_at) values ($1, $2, now() - $3::interval) returning id::text`,
        [provider, `id-${hex()}`, age],
      )
    ).rows[0].id as string;
  await relayState('2 days');
  await relayState('1 hour 3 minutes'); // the default validity (2 minutes) + the grace (1 h) has passed
  const live = [await relayState('1 hour 1 minute'), await relayState('1 minute')];
  const cleanup = cleanupOn(db.url);
  t.teardown(() => cleanup.stop());
  t.strictSame(await cleanup.runOnce(), { saml_relay_states: 2 });
  t.strictSame([...(await ids(pool, 'saml_relay_states'))].sort(), live.sort());
});
