// Several hosts in DATABASE_URL and `target_session_attrs`, as the original's driver (pgconn) reads and uses
// them (docs/settings.md#several-hosts): for each new connection the hosts are tried in order, one that
// cannot be reached, stays silent or is not of the kind asked for is passed over, and a refusal the next
// server would repeat (a database that does not exist) ends the search. Against two PostgreSQL servers this
// test starts (one of them read-only), through every driver the service connects with, and the service
// itself started on a URL whose first host is down.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readDatabaseUrl } from '../dist/db/database-url.js';
import { startEmbeddedPostgres } from '../dist/db/embedded/server.js';
import { createPool } from '../dist/db/pool.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { createTestDatabase } from './helpers/db.js';
import { throughMigrations, throughPool } from './helpers/db-drivers.js';
import { freePort, startTestService } from './helpers/server.js';
import { PRODUCTION_ENV } from './helpers/settings.js';

t.test('several hosts are read as pgx reads them: host i with port i, or with the first port', async (t) => {
  const servers = (url: string) => readDatabaseUrl(url).servers;
  t.strictSame(servers('postgres://u:p@h1:5432,h2:5433/db'), [
    { host: 'h1', port: 5432 },
    { host: 'h2', port: 5433 },
  ]);
  t.strictSame(
    servers('postgres://u@h1,h2:6000/db'),
    [
      { host: 'h1', port: 6000 },
      { host: 'h2', port: 6000 },
    ],
    'a host without a port takes the first one given',
  );
  t.strictSame(servers('postgres://u@h1,h2/db'), [{ host: 'h1' }, { host: 'h2' }], 'none given: the default port for each');
  t.strictSame(servers('postgres://u@[::1]:5432,[2001:db8::2]/db'), [
    { host: '::1', port: 5432 },
    { host: '2001:db8::2', port: 5432 },
  ]);
  t.strictSame(servers('host=h1,h2 port=5432,5433 dbname=db'), [
    { host: 'h1', port: 5432 },
    { host: 'h2', port: 5433 },
  ]);
  t.strictSame(servers('postgres://u@h1:5432/db'), [{ host: 'h1', port: 5432 }], 'one host is one server');

  const target = readDatabaseUrl('postgres://us%40r:p%2Fw@h1:5432,h2:5433/auth?sslmode=disable&application_name=x');
  t.match(target, {
    host: 'h1',
    port: 5432,
    user: 'us@r',
    password: 'p/w',
    database: 'auth',
    ssl: false,
    params: { application_name: 'x' },
  });
  t.equal(target.targetSessionAttrs, 'any', 'target_session_attrs is any unless given');

  t.throws(
    () => readDatabaseUrl('postgres://u@h1:5432,h2:99999/db'),
    { message: 'port "99999" is not a port number (1–65535)' },
    "each host's port is checked",
  );
  t.throws(() => readDatabaseUrl('postgres://u@h1/db?target_session_attrs=master'), {
    message: 'target_session_attrs must be one of any, read-write, read-only, primary, standby, prefer-standby; got master',
  });
  const refused = (() => {
    try {
      loadConfig({ env: { ...PRODUCTION_ENV, AUTH_DB_DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=master' }, envFile: null });
      return [];
    } catch (err) {
      return err instanceof ConfigError ? err.problems : [String(err)];
    }
  })();
  t.strictSame(
    refused,
    [
      'AUTH_DB_DATABASE_URL: cannot be read (target_session_attrs must be one of any, read-write, read-only, primary, standby, prefer-standby; got master)',
    ],
    'an unknown target_session_attrs stops the start, as pgx refuses the string',
  );
});

// Two servers sharing one superuser password, so that one URL reaches both; the first is read-only, as a
// standby or a primary set read-only answers `show transaction_read_only`.
const password = 'several-hosts-test-password';
const dirs = [mkdtempSync(join(tmpdir(), 'portcullis-hosts-ro-')), mkdtempSync(join(tmpdir(), 'portcullis-hosts-rw-'))];
for (const dir of dirs) writeFileSync(join(dir, 'pg-password'), password, { mode: 0o600 });
const [readOnly, readWrite] = await Promise.all([
  startEmbeddedPostgres({ dataDir: dirs[0], log: () => {}, settings: { default_transaction_read_only: 'on' } }),
  startEmbeddedPostgres({ dataDir: dirs[1], log: () => {} }),
]);
t.teardown(async () => {
  await Promise.all([readOnly.stop(), readWrite.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const RO = Number(new URL(readOnly.url).port);
const RW = Number(new URL(readWrite.url).port);
const DOWN = await freePort(); // nothing listens there: the connection is refused

// Accepts connections and never answers: a host that hangs rather than refuses.
const silent = net.createServer(() => {});
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
const SILENT = (silent.address() as net.AddressInfo).port;
const held: net.Socket[] = [];
silent.on('connection', (socket) => held.push(socket));
t.teardown(() => {
  for (const socket of held) socket.destroy();
  silent.close();
});

const urlOf = (ports: number[], query = '', database = 'postgres') =>
  `postgres://postgres:${password}@${ports.map((p) => `127.0.0.1:${p}`).join(',')}/${database}${query ? `?${query}` : ''}`;

const PORT = 'select inet_server_port() as port';
/** The port of the server the service's pool connects to for `url`. */
const poolLandsOn = (url: string) => throughPool<number>(url, PORT);
/** The same for the migrations' connection. */
const migrationsLandOn = (url: string) => throughMigrations<number>(url, PORT);

t.test('a host that is down or silent is passed over for the next one', async (t) => {
  t.equal(await poolLandsOn(urlOf([DOWN, RW])), RW, 'a refused connection: the next host');
  t.equal(await migrationsLandOn(urlOf([DOWN, RW])), RW, 'the migrations too');
  t.equal(await poolLandsOn(urlOf([RO, RW])), RO, 'target_session_attrs any: the first host that answers');
  const started = Date.now();
  t.equal(await poolLandsOn(urlOf([SILENT, RW], 'connect_timeout=1')), RW, 'a silent host: given up after connect_timeout');
  t.ok(Date.now() - started < 9_000, 'within connect_timeout, not the pool’s whole wait');
  await t.rejects(poolLandsOn(urlOf([DOWN, DOWN])), /ECONNREFUSED/, 'every host down: the last refusal');
});

t.test('target_session_attrs picks the server of the kind asked for', async (t) => {
  t.equal(await poolLandsOn(urlOf([RO, RW], 'target_session_attrs=read-write')), RW, 'read-write passes over a read-only server');
  t.equal(await migrationsLandOn(urlOf([RO, RW], 'target_session_attrs=read-write')), RW, 'the migrations too');
  t.equal(await poolLandsOn(urlOf([DOWN, RO, RW], 'target_session_attrs=read-write')), RW, 'and a host that is down');
  t.equal(await poolLandsOn(urlOf([RW, RO], 'target_session_attrs=read-only')), RO, 'read-only: the last host, checked itself');
  t.equal(await poolLandsOn(urlOf([RO, RW], 'target_session_attrs=primary')), RO, 'primary: neither is in recovery, the first');
  t.equal(await poolLandsOn(urlOf([RW, RO], 'target_session_attrs=prefer-standby')), RW, 'prefer-standby without a standby: the first');
  await t.rejects(
    poolLandsOn(urlOf([RO], 'target_session_attrs=read-write')),
    { message: 'read only connection' },
    'one host of the wrong kind',
  );
  await t.rejects(
    poolLandsOn(urlOf([RO, RW], 'target_session_attrs=standby')),
    { message: 'server is not in hot standby mode' },
    'standby: no server is one',
  );
});

t.test('a refusal the next server would repeat ends the search, as pgx ends it', async (t) => {
  const admin = createPool({ url: readWrite.url, max: 1, namespace: 'public' });
  await admin.query('create database only_on_second');
  await admin.end();
  await t.rejects(
    poolLandsOn(urlOf([RO, RW], '', 'only_on_second')),
    /database "only_on_second" does not exist/,
    'a database missing on the first host: not looked for on the second',
  );
  t.equal(await poolLandsOn(urlOf([DOWN, RW], '', 'only_on_second')), RW, 'while an unreachable host is still passed over');
});

t.test('the service starts, migrates and serves on a URL whose first host is down', async (t) => {
  const database = await createTestDatabase();
  const { username, password: pass, port, pathname } = new URL(database.url);
  const hosts = `postgres://${username}${pass ? `:${pass}` : ''}@127.0.0.1:${DOWN},127.0.0.1:${port}${pathname}`;
  const api = await startTestService({ DATABASE_URL: database.url, AUTH_DB_DATABASE_URL: hosts, AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(async () => {
    await api.stop();
    await database.drop();
  });
  const signUp = await api.request('POST', '/signup', { body: { email: 'hosts@example.com', password: 'several-hosts-1' } });
  t.equal(signUp.status, 200, 'a sign-up is served');
  const { rows } = await api.db.query('select email from auth.users');
  t.strictSame(rows, [{ email: 'hosts@example.com' }], 'into the migrated database on the second host');
});
