// The PG* variables (PGHOST, PGUSER, PGSSLMODE, …) give what DATABASE_URL leaves out, as the original's pgx
// reads them (docs/settings.md#pg-variables): what the URL gives wins, in either of its forms; a value pgx
// would refuse stops the start naming the variable; a service file (`service=`, PGSERVICE) gives its
// keywords before the variables, a password file the password; pgx's defaults lie beneath them all; the
// service, both drivers and the migrations connect with the result.
import t, { type Test } from 'tap';
import { withConnectionDefaults } from '../dist/db/connection-string.js';
import { postgresJsConnection, readDatabaseUrl } from '../dist/db/database-url.js';
import { loadConfig, ConfigError, type Config } from '../dist/server/config/load.js';
import { createTestDatabase } from './helpers/db.js';
import { throughMigrations, throughPool } from './helpers/db-drivers.js';
import { startTestService } from './helpers/server.js';
import { PRODUCTION_ENV } from './helpers/settings.js';
import { makeKeyPair } from './helpers/saml-idp.js';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const PASSWORD = `p w'@:/?#&\\%41`;
const VARIABLES = {
  PGHOST: 'h1,h2',
  PGPORT: '6543',
  PGUSER: 'env-user',
  PGPASSWORD: PASSWORD,
  PGDATABASE: 'env db',
  PGSSLMODE: 'disable',
  PGAPPNAME: 'from-env',
  PGCONNECT_TIMEOUT: '7',
};

const load = (env: Record<string, string>): Config => loadConfig({ env: { ...PRODUCTION_ENV, ...env }, envFile: null });
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

/** A fresh folder under the OS temp dir, removed with the test. */
function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `lines` written to a file `name` in a fresh folder; the file's path, and its folder for more. */
function fileOf(t: Test, name: string, lines: string[]): { file: string; dir: string } {
  const dir = tempDir(t, 'portcullis-pgfiles-');
  const file = join(dir, name);
  writeFileSync(file, lines.join('\n'));
  return { file, dir };
}

/** What the service's connections use for the URL it loads from `env`. */
const target = (env: Record<string, string>) => readDatabaseUrl(load(env).db.url);

t.test('what the URL leaves out comes from the PG* variables; what it gives wins', async (t) => {
  const bare = target({ ...VARIABLES, DATABASE_URL: 'postgres:///' });
  t.strictSame(
    bare,
    {
      host: 'h1',
      port: 6543,
      user: 'env-user',
      password: PASSWORD,
      database: 'env db',
      connectTimeout: 7,
      ssl: false,
      plainWhenRefused: false,
      params: { application_name: 'from-env' },
      servers: [
        { host: 'h1', port: 6543 },
        { host: 'h2', port: 6543 },
      ],
      targetSessionAttrs: 'any',
    },
    'a URL naming nothing takes every variable, a password of any characters intact',
  );

  const full = target({ ...VARIABLES, DATABASE_URL: 'postgres://u:pw@db:5432/app?sslmode=require&application_name=own&connect_timeout=3' });
  t.match(full, {
    host: 'db',
    port: 5432,
    user: 'u',
    password: 'pw',
    database: 'app',
    connectTimeout: 3,
    params: { application_name: 'own' },
  });
  t.strictSame(full.ssl, { rejectUnauthorized: false }, "the URL's sslmode=require, not PGSSLMODE=disable");
  t.strictSame(full.servers, [{ host: 'db', port: 5432 }]);

  t.match(
    target({ ...VARIABLES, DATABASE_URL: 'postgres://u@db/app' }),
    { host: 'db', port: 6543, user: 'u', password: PASSWORD, database: 'app' },
    'a host without a port takes PGPORT, as in pgx',
  );
  t.match(
    target({ ...VARIABLES, DATABASE_URL: 'postgres://u:@db/app' }),
    { password: undefined },
    'an empty password in the URL is given, so PGPASSWORD is not used',
  );
  t.match(
    target({ ...VARIABLES, DATABASE_URL: 'postgres://db/?dbname=q' }),
    { database: 'q' },
    "pgx's dbname query parameter names the database",
  );
  t.strictSame(
    target({ ...VARIABLES, DATABASE_URL: 'postgres://u@[::1]/app' }).servers,
    [{ host: '::1', port: 6543 }],
    'an IPv6 host is a host given',
  );

  const keywords = target({ ...VARIABLES, DATABASE_URL: "dbname=app user='k u'" });
  t.match(
    keywords,
    { host: 'h1', port: 6543, user: 'k u', password: PASSWORD, database: 'app', ssl: false },
    'keyword/value strings likewise',
  );
  t.match(target({ ...VARIABLES, DATABASE_URL: 'database=app' }), { database: 'app' }, '`database` is a name of `dbname` there');

  const migrations = readDatabaseUrl(
    load({ ...VARIABLES, DATABASE_URL: 'postgres://db/app', AUTH_DB_MIGRATIONS_DATABASE_URL: 'postgres://direct/' }).db.migrationsUrl,
  );
  t.match(migrations, { host: 'direct', user: 'env-user', database: 'env db' }, 'DB_MIGRATIONS_DATABASE_URL takes them too');

  t.equal(load({ DATABASE_URL: 'postgres://u@db/app' }).db.url, 'postgres://u@db/app', 'without PG* variables the URL is used as given');
  // pgx's own defaults beneath them: a socket directory of libpq's builds, the first that exists, and the OS user.
  const socketDirectory = ['/var/run/postgresql', '/private/tmp', '/tmp'].find((dir) => existsSync(dir)) ?? 'localhost';
  t.match(
    target({ DATABASE_URL: 'postgres:///app' }),
    { host: socketDirectory, user: userInfo().username, database: 'app' },
    'neither given: where pgx looks',
  );
  t.match(target({ DATABASE_URL: 'dbname=app' }), { host: socketDirectory, user: userInfo().username }, 'in keyword strings too');
  t.match(target({ DATABASE_URL: 'postgres:///app', PGHOST: 'db' }), { host: 'db' }, 'a variable before them');

  // TLS settings are ignored for a Unix socket, as libpq and pgx ignore them there.
  const socket = target({ DATABASE_URL: 'postgres:///app', PGHOST: '/var/run/postgresql', PGSSLMODE: 'require' });
  t.match(socket, { host: '/var/run/postgresql', ssl: false, plainWhenRefused: false }, 'PGSSLMODE=require and a socket directory: plain');
  t.match(
    postgresJsConnection(load({ DATABASE_URL: 'host=/tmp sslmode=verify-full' }).db.url),
    { host: '/tmp', ssl: false },
    'for the migrations too',
  );
  t.strictSame(
    target({ DATABASE_URL: 'postgres:///app', PGHOST: '/tmp,db', PGSSLMODE: 'require' }).ssl,
    { rejectUnauthorized: false },
    'a list with a network host keeps its TLS',
  );
  t.equal(withConnectionDefaults('host=a', { port: '' }), 'host=a', 'an empty variable gives nothing, as in pgx');
});

t.test('a PG* value pgx refuses stops the start, naming the variable', async (t) => {
  t.strictSame(problemsOf({ PGSSLMODE: 'sometimes' }), [
    'DATABASE_URL with PGSSLMODE: cannot be read (sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full; got sometimes)',
  ]);
  t.strictSame(problemsOf({ PGPORT: '99999', PGTARGETSESSIONATTRS: 'master' }).length, 1);
  t.match(problemsOf({ PGCONNECT_TIMEOUT: 'soon' })[0], /^DATABASE_URL with PGCONNECT_TIMEOUT: cannot be read \(connect_timeout "soon"/);
  t.strictSame(
    problemsOf({ PGSSLMODE: 'sometimes', DATABASE_URL: 'postgres://localhost/x?sslmode=disable' }),
    [],
    'not when the URL gives its own',
  );
  t.strictSame(problemsOf({ PGSSLMODE: 'verify-full', PGSSLROOTCERT: '/nonexistent/ca.pem' }), [
    'DATABASE_URL with PGSSLMODE, PGSSLROOTCERT: cannot be read (a certificate or key file cannot be read (/nonexistent/ca.pem): ENOENT)',
  ]);
  t.strictSame(problemsOf({ AUTH_PGSSLMODE: 'sometimes' }).length, 1, 'read under the AUTH_ prefix too, as every setting');
});

t.test('a service file gives what the string leaves out, before the PG* variables', async (t) => {
  const { file, dir } = fileOf(t, 'pg_service.conf', [
    '# services of the auth database',
    '[auth.primary]',
    '  host = db1 ',
    'port=6000',
    'user=svc',
    'dbname=auth',
    'password=a;b=c',
    'application_name=from-service',
    '',
    '[other]',
    'host=elsewhere',
  ]);
  const viaUrl = target({ DATABASE_URL: `postgres://u@/?service=auth.primary&servicefile=${encodeURIComponent(file)}`, PGPORT: '7000' });
  t.match(
    viaUrl,
    { host: 'db1', port: 6000, user: 'u', password: 'a;b=c', database: 'auth', params: { application_name: 'from-service' } },
    "named in the URL: the service's keywords where the URL has none (a dot in the name, `;` in a value, as in pgx), before PGPORT",
  );
  t.notOk('service' in viaUrl.params || 'servicefile' in viaUrl.params, 'neither is sent to the server as a setting');
  t.match(
    target({ DATABASE_URL: 'host=db2', PGSERVICE: 'auth.primary', PGSERVICEFILE: file, PGUSER: 'env-user' }),
    { host: 'db2', port: 6000, user: 'svc', database: 'auth' },
    'named by PGSERVICE in PGSERVICEFILE, for a keyword string',
  );
  t.match(
    target({ DATABASE_URL: `postgres:///?service=other&servicefile=${encodeURIComponent(file)}`, PGSERVICE: 'auth.primary' }),
    { host: 'elsewhere' },
    "the string's service before PGSERVICE",
  );

  const bad = join(dir, 'bad.conf');
  writeFileSync(bad, '[auth]\nhost db\n');
  const orphan = join(dir, 'orphan.conf');
  writeFileSync(orphan, 'host=db\n[auth]\n');
  t.strictSame(problemsOf({ PGSERVICE: 'auth', PGSERVICEFILE: join(dir, 'missing.conf') }), [
    `DATABASE_URL with PGSERVICE, PGSERVICEFILE: cannot be read (the service file ${join(dir, 'missing.conf')} cannot be read: ENOENT)`,
  ]);
  t.strictSame(problemsOf({ PGSERVICE: 'nope', PGSERVICEFILE: file }), [
    `DATABASE_URL with PGSERVICE, PGSERVICEFILE: cannot be read (the service file ${file} has no service "nope")`,
  ]);
  t.strictSame(problemsOf({ PGSERVICE: 'auth', PGSERVICEFILE: bad }), [
    `DATABASE_URL with PGSERVICE, PGSERVICEFILE: cannot be read (the service file ${bad} cannot be read: line 2 is not key=value)`,
  ]);
  t.strictSame(problemsOf({ PGSERVICE: 'auth', PGSERVICEFILE: orphan }), [
    `DATABASE_URL with PGSERVICE, PGSERVICEFILE: cannot be read (the service file ${orphan} cannot be read: line 1 is not in a service)`,
  ]);
  t.strictSame(problemsOf({ PGSERVICEFILE: bad }), [], 'a service file no service names is not read');
});

t.test('a password file gives the password when nothing else does, as pgx looks it up', async (t) => {
  const { file, dir } = fileOf(t, 'pgpass', [
    '# host:port:database:user:password',
    'db:5432:app:u:first',
    'db:5432:app:u:second',
    'db:*:other:*:any-user',
    'localhost:5432:app:sock:over-socket',
    'db:5432:app:odd:c\\:ol\\\\on',
    'too:few:fields',
  ]);
  const password = (url: string, env: Record<string, string> = {}) => target({ DATABASE_URL: url, PGPASSFILE: file, ...env }).password;
  t.equal(password('postgres://u@db/app'), 'first', 'the first entry that matches');
  t.equal(password('postgres://someone@db:6000/other'), 'any-user', '`*` matches any port and user');
  t.equal(
    password('postgres://sock@/app', { PGHOST: '/var/run/postgresql' }),
    'over-socket',
    'a socket directory is looked up as localhost',
  );
  t.equal(password('postgres://odd@db/app'), 'c:ol\\on', 'escaped colons and backslashes');
  t.equal(password('postgres://u:given@db/app'), 'given', 'a password given wins');
  t.equal(password('postgres://u@db/app', { PGPASSWORD: 'env' }), 'env', 'and so does PGPASSWORD');
  t.equal(password('postgres://nobody@db/app'), undefined, 'none matches: none');
  t.equal(
    password(`postgres://u@db/app?passfile=${encodeURIComponent(join(dir, 'missing'))}`),
    undefined,
    "the string's passfile first; one that cannot be read gives none, as in pgx",
  );
  t.equal(target({ DATABASE_URL: 'host=db user=u dbname=app', PGPASSFILE: file }).password, 'first', 'keyword strings likewise');
});

t.test('the service and both drivers connect with what the variables give', async (t) => {
  const database = await createTestDatabase({ migrated: true });
  t.teardown(() => database.drop());
  const { hostname, port, username, password, pathname } = new URL(database.url);
  const variables = {
    PGUSER: decodeURIComponent(username),
    ...(password ? { PGPASSWORD: decodeURIComponent(password) } : {}),
    PGDATABASE: decodeURIComponent(pathname.slice(1)),
    PGPORT: port || '5432',
    PGAPPNAME: 'pg-variables-test',
  };
  const bareUrl = `postgres://${hostname}/`;
  const url = load({ ...variables, DATABASE_URL: bareUrl }).db.url;
  const WHO = "select current_user || ' ' || current_database() || ' ' || current_setting('application_name')";
  const expected = `${variables.PGUSER} ${variables.PGDATABASE} pg-variables-test`;
  t.equal(await throughPool(url, WHO), expected, "the service's pool");
  t.equal(await throughMigrations(url, WHO), expected, 'the migrations');

  const serviceDir = tempDir(t, 'portcullis-pgservice-');
  const serviceFile = join(serviceDir, 'pg_service.conf');
  const passwordLine = password ? [`password=${decodeURIComponent(password)}`] : [];
  const serviceLines = [`host=${hostname}`, `port=${variables.PGPORT}`, `user=${variables.PGUSER}`, `dbname=${variables.PGDATABASE}`];
  writeFileSync(serviceFile, ['[auth]', ...serviceLines, ...passwordLine, 'application_name=pg-variables-test'].join('\n'));
  const viaService = load({ DATABASE_URL: 'postgres:///?service=auth', PGSERVICEFILE: serviceFile }).db.url;
  t.equal(await throughPool(viaService, WHO), expected, 'a service file: the pool');
  t.equal(await throughMigrations(viaService, WHO), expected, 'and the migrations');

  if (password) {
    // Only a server that asks for the password can tell whether the file gave it.
    const passFile = join(serviceDir, 'pgpass');
    writeFileSync(passFile, `*:*:*:${variables.PGUSER}:${decodeURIComponent(password).replace(/[\\:]/g, '\\$&')}\n`);
    const { PGPASSWORD: _, ...withoutPassword } = variables;
    const viaFile = load({ ...withoutPassword, DATABASE_URL: bareUrl, PGPASSFILE: passFile }).db.url;
    t.equal(await throughMigrations(viaFile, WHO), expected, 'a password file: the migrations, whose driver reads none by itself');
  }

  // A CA the server's certificate (if it has one) was never signed by: verify-full can only fail.
  const dir = tempDir(t, 'portcullis-pgvars-');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, makeKeyPair('elsewhere.example').certificatePem);
  const checked = { ...variables, PGSSLMODE: 'verify-full', PGSSLROOTCERT: caFile };
  await t.rejects(throughPool(load({ ...checked, DATABASE_URL: bareUrl }).db.url, WHO), 'PGSSLMODE=verify-full is honoured by the pool');
  await t.rejects(throughMigrations(load({ ...checked, DATABASE_URL: bareUrl }).db.url, WHO), 'and by the migrations');
  t.equal(
    await throughPool(load({ ...checked, DATABASE_URL: `${bareUrl}?sslmode=disable` }).db.url, WHO),
    expected,
    "the URL's sslmode wins",
  );

  const api = await startTestService({
    ...variables,
    DATABASE_URL: database.url,
    AUTH_DB_DATABASE_URL: bareUrl,
    AUTH_MAILER_AUTOCONFIRM: 'true',
  });
  t.teardown(() => api.stop());
  const signUp = await api.request('POST', '/signup', { body: { email: 'pgvars@example.com', password: 'pg-variables-1' } });
  t.equal(signUp.status, 200, 'the service started on the bare URL serves a sign-up');
  const { rows } = await api.db.query('select email from auth.users');
  t.strictSame(rows, [{ email: 'pgvars@example.com' }], 'into the database PGDATABASE names');
});
