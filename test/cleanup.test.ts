// The background cleanup (docs/tokens-and-sessions.md#cleanup): it removes exactly the rows that can no
// longer be used, past their grace, and nothing live; two instances running it at once against one
// database share the work without removing anything twice; turned off, it does not run at all.
// Ages are set in the database (now() - interval), never waited for.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { loadConfig } from '../dist/server/config/load.js';
import { startCleanup } from '../dist/server/cleanup/loop.js';
import { migrate } from '../dist/db/migrate.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { refresh, signUp } from './helpers/accounts.js';
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
  const pool = new pg.Pool({ connectionString: db.url, max: 3, options: '-c search_path=auth' });
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
    stale: { sessions: stale.sessions, tokens: staleTokens, flows: staleFlows, oneTime: staleOneTime, web3: staleWeb3, audit: staleAudit },
    live: { sessions: live.sessions, tokens: liveTokens, flows: liveFlows, oneTime: liveOneTime, web3: liveWeb3, audit: liveAudit },
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
    { refresh_tokens: 60, sessions: 1, flow_state: 4, one_time_tokens: 1, web3_message_uses: 1 },
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
