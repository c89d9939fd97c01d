// The database going away under the service, on a PostgreSQL this test starts and kills itself: readiness
// around a stop and a start, `kill -9` of the postmaster while a sign-up's transaction is open, and the
// same under a steady stream of sign-ups. Every failure is a JSON 503 with Retry-After, no HTTP thread
// dies, and the service answers normally as soon as the database is back (README "Faults and readiness").
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../dist/db/embedded/server.js';
import { pgConnection } from '../dist/db/database-url.js';
import { databaseFault } from '../dist/db/faults.js';
import { startTestService, type Reply } from './helpers/server.js';

// Under the OS temp dir (not t.testdir()): as root the server runs as the postgres user, who must reach it.
const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-faults-'));
const serverLog: string[] = [];
let database: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir, log: (m) => serverLog.push(m) });
const port = Number(new URL(database.url).port);
const api = await startTestService({ DATABASE_URL: database.url, AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_HTTP_WORKERS: '2' });
// The test's own pool loses its connections too; that is expected here, not a failure of the test.
api.db.on('error', () => {});
t.teardown(async () => {
  await api.stop();
  await database.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const UNAVAILABLE = { code: 503, error_code: 'database_unavailable', msg: 'The database is unavailable, please retry after a moment.' };
const withoutId = (body: Record<string, unknown>) => {
  const { error_id: _, ...rest } = body;
  return rest;
};
let emails = 0;
const newEmail = () => `fault-${++emails}@example.com`;
const signup = (email: string) => api.request('POST', '/signup', { body: { email, password: 'Secret-password-1' } });

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function killPostmaster(): void {
  const pid = Number.parseInt(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0], 10);
  process.kill(pid, 'SIGKILL');
}

/** Starts the server again on the same port. Right after a kill -9 the orphaned backends may still hold
 *  the shared memory for a moment ("pre-existing shared memory block is still in use"): retried, bounded. */
async function restartDatabase(): Promise<void> {
  database = await until(
    'the database to start again',
    () =>
      startEmbeddedPostgres({ dataDir, port, log: (m) => serverLog.push(m) }).then(
        (started) => started,
        () => undefined,
      ),
    100,
  );
}

/** The service's shape after a fault: no thread crashed or was replaced, nothing fatal or uncaught logged. */
function assertNoCrash(t: Test): void {
  t.equal(api.service.restarts, 0, 'no HTTP thread was replaced');
  const bad = api.logs().filter((l) => l.level === 'fatal' || /crashed|uncaught|ended unexpectedly/i.test(String(l.msg)));
  t.strictSame(bad, [], 'no crash, fatal or uncaught error in the log');
}

function assertUnavailable(t: Test, reply: Reply): void {
  t.equal(reply.status, 503);
  t.strictSame(withoutId(reply.body), UNAVAILABLE);
  t.equal(reply.headers.get('retry-after'), '5');
  t.equal(reply.headers.get('content-type'), 'application/json');
}

t.test('/ready follows the database through a stop and a start; /health does not need it', async (t) => {
  const before = await api.request('GET', '/ready');
  t.strictSame(
    { status: before.status, body: before.body },
    { status: 200, body: { status: 'ready', checks: { database: 'ok', crypto: 'ok' } } },
  );
  await database.stop();
  const during = await api.request('GET', '/ready');
  t.equal(during.status, 503);
  t.strictSame(withoutId(during.body), {
    code: 503,
    error_code: 'not_ready',
    msg: 'Not ready: database unavailable',
    checks: { database: 'failed', crypto: 'ok' },
  });
  t.equal(during.headers.get('retry-after'), '5');
  t.equal((await api.request('GET', '/health')).status, 200, 'liveness stays cheap and independent of the database');
  await restartDatabase();
  const after = await until('/ready to answer 200 again', async () => {
    const reply = await api.request('GET', '/ready');
    return reply.status === 200 ? reply : undefined;
  });
  t.strictSame(after.body, { status: 'ready', checks: { database: 'ok', crypto: 'ok' } });
  assertNoCrash(t);
});

t.test('kill -9 of the postmaster while a sign-up holds its transaction open: a 503 for that request', async (t) => {
  // A second connection keeps inserts into users waiting (reads pass), so the sign-up's transaction is
  // open and its insert in flight when the server dies.
  const locker = new pg.Client({ connectionString: database.url, options: '-c search_path=auth' });
  locker.on('error', () => {});
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table users in exclusive mode');
  const email = newEmail();
  const pending = signup(email);
  await until('the sign-up waiting inside its transaction', async () => {
    const { rows } = await api.db.query(`select 1 from pg_stat_activity where application_name = 'portcullis'
      and wait_event_type = 'Lock' and xact_start is not null`);
    return rows.length === 1 ? true : undefined;
  });
  killPostmaster();
  assertUnavailable(t, await pending);
  await locker.end().catch(() => {});
  assertUnavailable(t, await signup(newEmail()));

  await restartDatabase();
  const again = await until('a sign-up to succeed again', async () => {
    const reply = await signup(newEmail());
    return reply.status === 200 ? reply : undefined;
  });
  t.ok(again.body.access_token, 'normal answers once the database is back');
  const retried = await signup(email);
  t.equal(retried.status, 200, 'the failed sign-up left nothing behind: the address is still free');
  assertNoCrash(t);
});

t.test('kill -9 under a steady stream of sign-ups: 503s while it is down, every 2xx sign-up kept', async (t) => {
  // Each reply is labelled with the phase its request started in.
  const replies: Array<{ email: string; reply: Reply; phase: string }> = [];
  let phase = 'before';
  let running = true;
  const client = async () => {
    while (running) {
      const email = newEmail();
      const startedIn = phase;
      replies.push({ email, reply: await signup(email), phase: startedIn });
    }
  };
  const clients = Array.from({ length: 6 }, client);
  const count = (p: string, status: number) => replies.filter((r) => r.phase === p && r.reply.status === status).length;
  await until('sign-ups succeeding', () => (count('before', 200) >= 20 ? true : undefined));
  phase = 'down';
  killPostmaster();
  await until('requests refused while the database is down', () => (count('down', 503) >= 20 ? true : undefined));
  phase = 'restarting';
  await restartDatabase();
  phase = 'back';
  await until('sign-ups succeeding again', () => (count('back', 200) >= 20 ? true : undefined));
  running = false;
  await Promise.all(clients);

  const failures = replies.filter((r) => r.reply.status !== 200);
  t.ok(failures.length >= 20);
  // On a failure, the service's own error lines say which database error was not recognised as one.
  const unexpected = api.logs().filter((l) => /^500: /.test(String(l.error ?? '')));
  t.strictSame([...new Set(failures.map((r) => r.reply.status))], [503], 'every failure is a 503', { unexpected });
  const bodies = new Set(failures.map((r) => JSON.stringify(withoutId(r.reply.body))));
  t.strictSame([...bodies], [JSON.stringify(UNAVAILABLE)], 'with the JSON error body');
  t.ok(
    failures.every((r) => r.reply.headers.get('retry-after') === '5'),
    'and Retry-After',
  );
  t.equal(replies.filter((r) => r.phase === 'back' && r.reply.status !== 200).length, 0, 'nothing fails once it is back');

  const succeeded = replies.filter((r) => r.reply.status === 200).map((r) => r.email);
  const { rows } = await api.db.query(
    `select u.email from users u join identities i on i.user_id = u.id and i.provider = 'email'
    where u.email = any($1)`,
    [succeeded],
  );
  t.equal(rows.length, succeeded.length, 'every sign-up answered 200 exists, with its identity');
  assertNoCrash(t);
});

/** Bytes received and not yet read on this thread's TCP socket from `localPort` (Linux /proc/net/tcp). */
function unread(localPort: number): number {
  const local = `0100007F:${localPort.toString(16).toUpperCase().padStart(4, '0')}`;
  const line = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .find((l) => l.trim().split(/\s+/)[1] === local);
  return line ? Number.parseInt(line.trim().split(/\s+/)[4].split(':')[1], 16) : 0;
}

/** The postmaster's child processes (its backends and helpers). */
function childrenOfPostmaster(): Set<string> {
  const pid = readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')
    .split('\n')[0]
    .trim();
  return new Set(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
}

/** Keeps this thread busy, as a loaded HTTP thread is, until `done` (bounded: a stuck server fails the test, not hangs it). */
function busyUntil(what: string, done: () => boolean): void {
  for (const end = Date.now() + 20_000; !done();) if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
}

t.test(
  'the postmaster killed while a connection asks for TLS (sslmode prefer, the default): a database fault, also when the thread read the answer late',
  async (t) => {
    // A thread too busy to read the server's answer to its request for TLS at once reads it together with
    // what the server sent next: its FATAL when the postmaster died meanwhile. Before the startup message
    // that came out as pg's "There was an error establishing an SSL connection", answered 500.
    const attempt = async (kill: (client: pg.Client) => void, sslmode = 'prefer') => {
      const { config, Client } = pgConnection(`${database.url}?sslmode=${sslmode}`);
      t.ok(config.ssl, 'TLS is asked for');
      const client = new Client(config);
      client.on('error', () => {});
      const outcome = client.connect().then(
        () => null,
        (err: unknown) => err,
      );
      kill(client);
      const err = await outcome;
      await restartDatabase();
      return err;
    };
    const stream = (client: pg.Client) => (client as unknown as { connection: { stream: import('node:net').Socket } }).connection.stream;
    const killWhenAnswered = (client: pg.Client) => {
      // pg's listener has just sent the request for TLS: the server answers N and waits for the startup message.
      stream(client).once('connect', () => {
        const port = stream(client).localPort!;
        busyUntil('the answer N', () => unread(port) >= 1);
        killPostmaster();
        busyUntil("the server's error after it", () => unread(port) > 1);
      });
    };
    const answeredLate = await attempt(killWhenAnswered);
    t.match(answeredLate, { code: '57P01', message: 'terminating connection due to unexpected postmaster exit' }, "the server's reason");
    t.equal(databaseFault(answeredLate), 'unavailable');

    const killBeforeAsking = (client: pg.Client) => {
      const before = childrenOfPostmaster();
      // Right after the connect call is made, before this thread has even written its request for TLS: the
      // server forks a backend for the connection, which waits for the request and dies with the postmaster.
      process.nextTick(() =>
        process.nextTick(() => {
          busyUntil('a backend for the connection', () => [...childrenOfPostmaster()].some((pid) => !before.has(pid)));
          const port = stream(client).localPort!;
          killPostmaster();
          busyUntil("the server's error", () => unread(port) >= 1);
        }),
      );
    };
    const errorForAnswer = await attempt(killBeforeAsking);
    t.match(errorForAnswer, { code: '57P01' }, "the server's error in place of an answer");
    t.equal(databaseFault(errorForAnswer), 'unavailable');

    // With TLS required there is no plain text to read the error in: pg's own message, a fault all the same.
    const required = await attempt(killBeforeAsking, 'require');
    t.match(required, { message: 'There was an error establishing an SSL connection' });
    t.equal(databaseFault(required), 'unavailable');
  },
);
