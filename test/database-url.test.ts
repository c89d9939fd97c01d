// DATABASE_URL read as libpq and the original's pgx read it (docs/settings.md#database): with no sslmode,
// TLS without checking the certificate when the server has it and plain text when it has not (`prefer`);
// `require` encrypts without checking; `verify-*` check; `disable` is plain; keyword/value strings connect.
// Against real PostgreSQL servers of the test's own (the embedded one, with and without TLS), through every
// driver the service connects with: the pools (node-postgres) and the migrations (postgres.js).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startEmbeddedPostgres } from '../dist/db/embedded/server.js';
import { appliedSchemaVersion } from '../dist/db/schema-version.js';
import { createPool } from '../dist/db/pool.js';
import { throughMigrations, throughPool } from './helpers/db-drivers.js';
import { makeKeyPair } from './helpers/saml-idp.js';
import { startTlsPostgres } from './helpers/tls-postgres.js';

const OWN_TLS = 'select ssl from pg_stat_ssl where pid = pg_backend_pid()';

/** Whether the connection the service's pool opens for `url` is encrypted. */
const poolTls = (url: string) => throughPool<boolean>(url, OWN_TLS);

/** The same for the migrations' connection. */
const migrationsTls = (url: string) => throughMigrations<boolean>(url, OWN_TLS);

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [name, value] of Object.entries(params)) u.searchParams.set(name, value);
  return u.toString();
}

t.test('a server with TLS (a self-signed certificate)', async (t) => {
  const db = await startTlsPostgres(t);
  const { dataDir, certFile } = db;
  const { username, password, port } = new URL(db.url);

  t.equal(await poolTls(db.url), true, 'no sslmode: the pool connects encrypted (prefer), the certificate unchecked');
  t.equal(await migrationsTls(db.url), true, 'and so do the migrations');
  t.equal(await appliedSchemaVersion(db.url, 'public'), 0, 'and the schema version check connects');

  const require = withParams(db.url, { sslmode: 'require' });
  t.equal(await poolTls(require), true, 'sslmode=require: encrypted, the self-signed certificate accepted');
  t.equal(await migrationsTls(require), true, 'the migrations too');

  const verifyFull = withParams(db.url, { sslmode: 'verify-full' });
  await t.rejects(poolTls(verifyFull), /self[- ]signed/, 'sslmode=verify-full: an untrusted certificate is refused');
  await t.rejects(migrationsTls(verifyFull), /self[- ]signed/, 'by the migrations too');

  const verifyCa = withParams(db.url, { sslmode: 'verify-ca', sslrootcert: certFile });
  t.equal(await poolTls(verifyCa), true, 'sslmode=verify-ca with the certificate as root: connects');

  const disable = withParams(db.url, { sslmode: 'disable' });
  t.equal(await poolTls(disable), false, 'sslmode=disable: plain text');
  t.equal(await migrationsTls(disable), false, 'the migrations too');

  // A client certificate whose key is encrypted: sslpassword unlocks it.
  const client = makeKeyPair('auth');
  const clientCert = join(dataDir, 'client.crt');
  const clientKey = join(dataDir, 'client.key');
  writeFileSync(clientCert, client.certificatePem);
  const encrypted = createPrivateKey(client.privateKeyPem).export({
    type: 'pkcs8',
    format: 'pem',
    cipher: 'aes-256-cbc',
    passphrase: 'k3y pass',
  });
  writeFileSync(clientKey, encrypted, { mode: 0o600 });
  const withKey = { sslmode: 'require', sslcert: clientCert, sslkey: clientKey };
  t.equal(await poolTls(withParams(db.url, { ...withKey, sslpassword: 'k3y pass' })), true, 'sslpassword unlocks an encrypted sslkey');
  t.equal(await migrationsTls(withParams(db.url, { ...withKey, sslpassword: 'k3y pass' })), true, 'for the migrations too');
  await t.rejects(poolTls(withParams(db.url, withKey)), 'without it the key cannot be used');

  const keywords = `host=127.0.0.1 port=${port} user=${decodeURIComponent(username)} password='${decodeURIComponent(password)}' dbname=postgres`;
  t.equal(await poolTls(keywords), true, 'a keyword/value string connects, encrypted (prefer)');
  t.equal(await migrationsTls(keywords), true, 'the migrations too');
  t.equal(await poolTls(`${keywords} sslmode=disable`), false, 'with its own sslmode');
});

t.test('a server without TLS', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-dburl-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const db = await startEmbeddedPostgres({ dataDir, log: () => {} });
  t.teardown(() => db.stop());

  t.equal(await poolTls(db.url), false, 'no sslmode: the pool goes on in plain text (prefer)');
  t.equal(await migrationsTls(db.url), false, 'and so do the migrations');
  t.equal(await appliedSchemaVersion(db.url, 'public'), 0, 'and the schema version check');
  const pool = createPool({ url: db.url, max: 2, namespace: 'public' });
  t.teardown(() => pool.end());
  const both = await Promise.all([pool.query('select 1 as one'), pool.query('select 2 as two')]);
  t.same(
    both.map((r) => r.rows[0]),
    [{ one: 1 }, { two: 2 }],
    'each new connection of a pool falls back by itself',
  );

  const require = withParams(db.url, { sslmode: 'require' });
  await t.rejects(poolTls(require), /does not support SSL/, 'sslmode=require: refused, never plain text');
  await t.rejects(migrationsTls(require), 'by the migrations too');
});
