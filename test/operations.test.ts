// Running it as an operator would (issue 17): deprecation notices once, `migrate` and `version` with the
// database settings only, the container's refusal of the development setup, the image's health check
// finding the port as the service does, pretty logs only on a terminal, and `npm start` not rebuilding
// a current dist/.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../dist/server/config/load.js';
import { DEPRECATIONS, noteDeprecatedEndpoint } from '../dist/server/deprecations.js';
import { prettyLogsWanted } from '../dist/server/observability/log.js';
import { knownSchemaVersion } from '../dist/db/schema-version.js';
import { startTestService, freePort } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { captureLog } from './helpers/log.js';
import { runPortcullis } from './helpers/cli.js';

const run = (args: string[], env: Record<string, string>) =>
  runPortcullis(args, { env: { PATH: process.env.PATH, ...env }, cwd: os.tmpdir() });

t.test('a deprecated setting in use is logged once at start, with the release that removes it', async (t) => {
  const api = await startTestService({ AUTH_HTTP_WORKERS: '2', GOTRUE_JWT_ADMIN_GROUP_NAME: 'admin', AUTH_OPERATOR_TOKEN: 'x' });
  await api.stop();
  const notices = api.logs().filter((l) => String(l.msg).startsWith('DEPRECATION NOTICE'));
  // JWT_DEFAULT_GROUP_NAME: every test service sets it, as the original's test environment does.
  t.strictSame(
    notices.map((l) => l.deprecated).sort(),
    ['JWT_ADMIN_GROUP_NAME', 'JWT_DEFAULT_GROUP_NAME', 'OPERATOR_TOKEN'],
    'each once, not once per thread',
  );
  for (const n of notices) {
    t.equal(n.level, 'warning');
    t.match(n, { removed_in: /^\d+\.\d+\.\d+$/, instead: /\S/ });
    t.match(n.msg, new RegExp(`${n.deprecated} is deprecated and will be removed in ${n.removed_in}`));
  }
});

t.test('settings not in use say nothing; every entry names its removal and replacement', async (t) => {
  const api = await startTestService({ AUTH_JWT_DEFAULT_GROUP_NAME: '' }); // set by every other test service
  await api.stop();
  t.equal(api.logs().filter((l) => String(l.msg).startsWith('DEPRECATION NOTICE')).length, 0);
  for (const d of DEPRECATIONS) t.match(d, { removedIn: /^\d+\.\d+\.\d+$/, instead: /\S/ }, d.name);
  t.ok(DEPRECATIONS.some((d) => d.kind === 'endpoint'));
});

t.test('a deprecated endpoint is logged at its first use only', async (t) => {
  const { log, lines } = captureLog();
  const endpoint = DEPRECATIONS.find((d) => d.kind === 'endpoint')!.name;
  noteDeprecatedEndpoint(endpoint, log);
  noteDeprecatedEndpoint(endpoint, log);
  t.equal(lines.length, 1);
  t.equal(lines[0].deprecated, endpoint);
  t.throws(() => noteDeprecatedEndpoint('GET /nowhere', log), /not in the deprecations table/);
});

t.test('migrate needs the database settings only; version tells the schema known and applied', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const known = knownSchemaVersion();
  t.ok(known.version >= 1);

  const before = run(['version'], { DATABASE_URL: database.url });
  t.equal(before.status, 0);
  const [version, schema, applied] = before.stdout.trim().split('\n');
  t.match(version, /^\d+\.\d+\.\d+$/, 'the bare version first, for scripts');
  t.equal(schema, `schema ${known.version} (sql/${known.file})`);
  t.equal(applied, 'database schema 0 (namespace auth)', 'nothing applied yet');

  const migrated = run(['migrate'], { DATABASE_URL: database.url, GOTRUE_LOG_LEVEL: 'error' });
  t.equal(migrated.status, 0, migrated.stderr);
  t.notMatch(migrated.stderr, /SITE_URL|JWT_SECRET|DB_DRIVER/);
  const after = run(['version'], { DATABASE_URL: database.url });
  t.equal(after.stdout.trim().split('\n')[2], `database schema ${known.version} (namespace auth)`);

  const unreachable = run(['version'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  t.equal(unreachable.status, 0);
  t.match(unreachable.stdout, /^database schema unknown: /m);
});

t.test('in a container, no DATABASE_URL refuses the development setup unless asked', async (t) => {
  t.throws(
    () => loadConfig({ env: { PORTCULLIS_CONTAINER: 'true' }, envFile: null }),
    /DATABASE_URL: is required in a container.*PORTCULLIS_DEVELOPMENT=true/s,
  );
  const asked = loadConfig({ env: { PORTCULLIS_CONTAINER: 'true', PORTCULLIS_DEVELOPMENT: 'true' }, envFile: null });
  t.equal(asked.development, true);
  t.equal(loadConfig({ env: {}, envFile: null }).development, true, 'outside a container the quick start still runs');
  const refused = run(['serve'], { PORTCULLIS_CONTAINER: 'true' });
  t.equal(refused.status, 1);
  t.match(refused.stderr, /DATABASE_URL: is required in a container/);
});

t.test("the image's health check finds the port as the service does", async (t) => {
  const api = await startTestService({});
  t.teardown(() => api.stop());
  const production = {
    DATABASE_URL: 'postgres://u@127.0.0.1/x',
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: 'a-secret-that-is-long-enough',
    AUTH_SITE_URL: 'http://localhost:3000',
    API_EXTERNAL_URL: 'http://localhost',
  };
  // Not spawnSync: the service's HTTP guard runs on this (the supervisor's) thread and must stay free to answer.
  const check = (env: Record<string, string>) =>
    new Promise<number | null>((resolve) =>
      spawn(process.execPath, [path.resolve('bin/healthcheck.js')], {
        env: { PATH: process.env.PATH, ...production, ...env },
        cwd: os.tmpdir(),
        stdio: 'ignore',
      }).on('exit', resolve),
    );
  const port = String(api.service.port);
  const elsewhere = String(await freePort());
  t.equal(await check({ GOTRUE_API_PORT: port }), 0, 'GOTRUE_API_PORT');
  t.equal(await check({ GOTRUE_API_PORT: port, PORT: elsewhere }), 0, 'GOTRUE_API_PORT before PORT, as in the original');
  t.equal(await check({ PORT: port }), 0, 'PORT alone');
  t.equal(await check({ AUTH_API_PORT: port, PORT: elsewhere }), 0, 'AUTH_API_PORT first');
  t.equal(await check({ GOTRUE_API_PORT: elsewhere }), 1, 'nothing listening there: unhealthy');
});

t.test("the image's health check timeout leaves room for the check's own start", async (t) => {
  // Docker kills a check still running at --timeout and counts it failed. The check is a whole node
  // process that loads the service's configuration (its schema compile) before its request, whose own
  // limit is in bin/healthcheck.js: that start took 1.7 to 3.6 s on a busy 2-core host, so a 3 s timeout
  // failed checks of a service that answered. Read from the files, not timed.
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const timeout = /^HEALTHCHECK\b.*--timeout=(\d+)s/m.exec(dockerfile);
  const request = /AbortSignal\.timeout\((\d+)\)/.exec(readFileSync('bin/healthcheck.js', 'utf8'));
  t.ok(timeout && request, 'both limits found');
  if (!timeout || !request) return;
  const startRoomMs = Number(timeout[1]) * 1000 - Number(request[1]);
  t.ok(startRoomMs >= 5000, `${startRoomMs} ms for node's start and the configuration load`);
});

t.test('pretty logs on a terminal in development only', async (t) => {
  const dev = loadConfig({ env: {}, envFile: null });
  const prod = loadConfig({
    env: {
      DATABASE_URL: 'postgres://u@h/x',
      AUTH_DB_DRIVER: 'postgres',
      AUTH_JWT_SECRET: 'a-secret-that-is-long-enough',
      AUTH_SITE_URL: 'http://localhost:3000',
      API_EXTERNAL_URL: 'http://localhost',
    },
    envFile: null,
  });
  t.equal(prettyLogsWanted(dev, true), true);
  t.equal(prettyLogsWanted(dev, false), false, 'not into a pipe');
  t.equal(prettyLogsWanted(prod, true), false, 'not in production');
  t.equal(prettyLogsWanted({ ...dev, log: { ...dev.log, file: '/tmp/x.log' } }, true), false, 'not into LOG_FILE');

  // What a pretty logger writes: a readable line, not JSON (run in a child, whose stdout is captured).
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { createLogger } = await import(${JSON.stringify(new URL('../dist/server/observability/log.js', import.meta.url).href)});
       createLogger({ level: 'info', file: '' }, {}, { pretty: true }).info({ port: 8081 }, 'listening');`,
    ],
    { encoding: 'utf8' },
  );
  const text = stripVTControlCharacters(child.stdout); // its colours
  t.match(text, /INFO: listening/);
  t.match(text, /^\s+port: 8081$/m);
  t.throws(() => JSON.parse(child.stdout.trim()), 'not a JSON line');
});

t.test('npm start builds only when dist/ is older than its sources', async (t) => {
  const script = path.resolve('bin/build-if-stale.mjs');
  const main = path.resolve('dist/server/main.js');
  t.equal(spawnSync(process.execPath, [script], { stdio: 'ignore' }).status, 0, 'current (built now if it was not)');
  const built = statSync(main).mtimeMs;
  t.equal(spawnSync(process.execPath, [script], { stdio: 'ignore' }).status, 0);
  t.equal(statSync(main).mtimeMs, built, 'dist/ current: not compiled again');
  const pkg = JSON.parse(readFileSync(path.resolve('package.json'), 'utf8'));
  t.match(pkg.scripts.start, /^node bin\/build-if-stale\.mjs && bin\/with-system-cas node bin\/portcullis\.js serve$/);
});
