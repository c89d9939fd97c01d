// The service's log lines in the original's shape (docs/observability.md#logs), so collectors set up for
// it read ours unchanged: Supabase's Vector → Logflare pipeline takes `time` as the event's timestamp and
// its Studio selects auth logs by `level`, `status`, `path`, `msg` and `error`.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startTestService } from './helpers/server.js';
import { captureLog } from './helpers/log.js';
import { adminToken } from './helpers/admin.js';
import { randomUUID } from 'node:crypto';

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

t.test(
  'request lines: level by status, RFC 3339 time, duration in nanoseconds, error and grant_type as the original writes them',
  async (t) => {
    const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
    t.equal((await api.request('GET', '/settings')).status, 200);
    const refused = await api.request('POST', '/token?grant_type=password', {
      body: { email: 'nobody@example.com', password: 'wrong-password' },
    });
    t.equal(refused.status, 400);
    t.equal((await api.request('GET', '/no/such/route')).status, 404);
    await api.stop();
    const lines = api.logs();
    const completed = lines.filter((l) => l.msg === 'request completed');

    const ok = completed.find((l) => l.path === '/settings')!;
    t.match(ok, { level: 'info', component: 'api', method: 'GET', status: 200 });
    t.equal(ok.error, undefined, 'no error on a success');
    t.equal(ok.grant_type, undefined, 'grant_type only on /token');
    t.equal(ok.referer, 'http://localhost:3000', 'referer: the redirect target, SITE_URL when the request names none');

    const token = completed.find((l) => l.path === '/token')!;
    t.match(token, {
      level: 'warning',
      status: 400,
      grant_type: 'password',
      error_code: 'invalid_credentials',
      error: '400: Invalid login credentials',
    });
    t.equal(completed.find((l) => l.path === '/no/such/route')?.level, 'warning');

    for (const line of completed) {
      t.ok(Number.isInteger(line.duration) && line.duration > 0, `${line.path}: duration is whole nanoseconds (${line.duration})`);
      t.ok(Math.abs(line.duration / 1e6 - line.duration_ms) < 0.01, `${line.path}: the same time as duration_ms`);
    }
    t.ok(
      lines.every((l) => typeof l.time === 'string' && RFC3339_UTC.test(l.time) && !Number.isNaN(Date.parse(l.time))),
      'every line, the supervisor and the HTTP threads alike, is timed in RFC 3339, UTC',
    );
    t.ok(
      lines.every((l) => ['trace', 'debug', 'info', 'warning', 'error', 'fatal'].includes(l.level)),
      'every level is named as the original names it',
    );
    t.notOk(
      lines.some((l) => l.component === 'sql'),
      'no statement is logged unless LOG_SQL asks',
    );
  },
);

t.test(
  'LOG_SQL: each statement an info line of component sql, in order with the request lines; with all, its values as args',
  async (t) => {
    for (const mode of ['statement', 'all'] as const) {
      const api = await startTestService({ AUTH_LOG_SQL: mode, AUTH_MAILER_AUTOCONFIRM: 'true' });
      const email = `sql-${mode}@example.com`;
      t.equal((await api.request('POST', '/signup', { body: { email, password: 'a-long-password-1' } })).status, 200);
      await api.stop();
      const raw = readFileSync(api.logFile, 'utf8').split('\n').filter(Boolean);
      const sqlRaw = raw.filter((l) => l.includes('"component":"sql"'));
      const lines = raw.map((l) => JSON.parse(l));
      const sql = lines.filter((l) => l.component === 'sql');
      const insert = sql.find((l) => /^insert into users\b/i.test(l.msg));
      t.ok(insert, `${mode}: the sign-up's insert into users is logged`);
      t.match(insert, { level: 'info', thread: 0 }, `${mode}: at info, with the thread's fields`);
      t.notMatch(insert.msg, /\n|\s{2}/, `${mode}: the statement on one line`);
      t.ok(
        sqlRaw.every((l) => l.split('"component"').length === 2),
        `${mode}: each line names its component once`,
      );
      const signupLine = lines.findIndex((l) => l.msg === 'request completed' && l.path === '/signup');
      t.ok(lines.indexOf(insert) < signupLine, `${mode}: the statement comes before its request's line`);
      if (mode === 'statement') {
        t.ok(
          sql.every((l) => l.args === undefined),
          'statement: no values',
        );
        t.notOk(
          sqlRaw.some((l) => l.includes(email)),
          'statement: the address is in no sql line',
        );
      } else {
        t.ok(Array.isArray(insert.args) && insert.args.includes(email), 'all: the values, the address among them, as args');
      }
    }
  },
);

t.test("a logged error's message is its line's `error`, as logrus' WithError writes it; the stack stays under err", async (t) => {
  const { log, lines } = captureLog();
  log.error({ err: new Error('connection refused') }, 'hook failed');
  log.warn({ err: new Error('slow'), error: 'named by the caller' }, 'kept');
  log.info({ status: 200 }, 'plain');
  t.match(lines[0], {
    level: 'error',
    msg: 'hook failed',
    error: 'connection refused',
    err: { message: 'connection refused', stack: /Error: connection refused/ },
  });
  t.equal(lines[1].error, 'named by the caller', "a caller's own error field is kept");
  t.equal(lines[2].error, undefined);
});

t.test('a line is timed at the millisecond it is written, however many lines share one', async (t) => {
  const { log, lines } = captureLog();
  const stamps: Array<{ before: number; after: number }> = [];
  for (let round = 0; round < 5; round++) {
    // Several lines within one millisecond, then a wait past it: each line's time must be its own.
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      log.info('tick');
      stamps.push({ before, after: Date.now() });
    }
    const last = Date.now();
    while (Date.now() <= last + 1) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const times = lines.map((l) => Date.parse(l.time as string));
  t.equal(times.length, stamps.length);
  t.ok(
    times.every((time, i) => time >= stamps[i].before && time <= stamps[i].after),
    'every time lies between the clock read just before and just after its line',
  );
  t.ok(new Set(times).size >= 5, 'lines of different milliseconds carry different times');
});

t.test(
  "the ids the original's handlers add to the request line: user_id, factor_id, sso_provider_id, identifier, oauth_client_id",
  async (t) => {
    const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
    const admin = await adminToken();
    const userId = randomUUID();
    const factorId = randomUUID();
    const idpId = randomUUID();
    const clientId = randomUUID();
    // Unknown ids all: the original names the id once it has read it, before looking it up.
    const asked = [
      ['GET', `/admin/users/${userId.toUpperCase()}`],
      ['DELETE', `/admin/users/${userId}/factors/${factorId}`],
      ['GET', `/admin/sso/providers/${idpId}`],
      ['GET', '/admin/custom-providers/custom:acme'],
      ['GET', `/admin/oauth/clients/${clientId}`],
      ['GET', '/admin/users/not-a-uuid'],
    ] as const;
    for (const [method, path] of asked) await api.request(method, path, { token: admin });
    await api.stop();
    const line = (path: string) => api.logs().find((l) => l.msg === 'request completed' && l.path === path)!;
    t.match(line(`/admin/users/${userId.toUpperCase()}`), { user_id: userId }, 'canonical, as the original writes a UUID');
    t.match(line(`/admin/users/${userId}/factors/${factorId}`), { user_id: userId, factor_id: factorId });
    t.match(line(`/admin/sso/providers/${idpId}`), { sso_provider_id: idpId });
    t.match(line('/admin/custom-providers/custom:acme'), { identifier: 'custom:acme' });
    t.match(line(`/admin/oauth/clients/${clientId}`), { oauth_client_id: clientId });
    t.equal(line('/admin/users/not-a-uuid').user_id, undefined, 'an id that is no UUID is refused before it names anything');
    t.equal(line('/admin/users/not-a-uuid').status, 404);
  },
);

t.test('a CORS preflight gets no request line, as the original answers it before its logger; the request after it does', async (t) => {
  const api = await startTestService({});
  const pre = await api.request('OPTIONS', '/settings', {
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
  });
  t.equal(pre.status, 204);
  t.equal((await api.request('GET', '/settings', { headers: { Origin: 'https://app.example' } })).status, 200);
  await api.stop();
  const completed = api.logs().filter((l) => l.msg === 'request completed' && l.path === '/settings');
  t.strictSame(
    completed.map((l) => l.method),
    ['GET'],
  );
});
