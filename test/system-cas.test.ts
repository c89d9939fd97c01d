// The certificate authorities the service trusts, started as the container starts it (bin/with-system-cas,
// docs/settings.md#certificate-authorities): as the original, the system's bundle or the file SSL_CERT_FILE
// names. Shown on the strictest outbound check there is, DATABASE_URL's sslmode=verify-full without a CA
// of its own, against a PostgreSQL server of the test's whose certificate no public CA signed.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startTlsPostgres } from './helpers/tls-postgres.js';
import { freePort, testServiceEnv } from './helpers/server.js';

const BIN = (name: string) => fileURLToPath(new URL(`../bin/${name}`, import.meta.url));
const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** Runs `command` as the image's entry point runs node: through bin/with-system-cas, with only `env`. */
function throughLauncher(command: string[], env: Record<string, string>): { status: number | null; output: string } {
  const res = spawnSync(BIN('with-system-cas'), command, {
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

t.test('what the launcher hands node', async (t) => {
  const named = (env: Record<string, string>) => throughLauncher(['sh', '-c', 'printf %s "$NODE_EXTRA_CA_CERTS"'], env).output;
  t.equal(named({ SSL_CERT_FILE: '/etc/corp/ca.pem' }), '/etc/corp/ca.pem', 'SSL_CERT_FILE, as Go reads it');
  t.equal(named({ SSL_CERT_FILE: '/etc/corp/ca.pem', NODE_EXTRA_CA_CERTS: '/own.pem' }), '/own.pem', "node's own variable first");
  t.equal(named({}), existsSync(SYSTEM_BUNDLE) ? SYSTEM_BUNDLE : '', "else the system's bundle, where there is one");
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cas-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'file.pem'), 'FROM SSL_CERT_FILE');
  mkdirSync(join(dir, 'certs'));
  writeFileSync(join(dir, 'certs', 'one.pem'), 'FROM SSL_CERT_DIR');
  const joined = throughLauncher(['sh', '-c', 'cat "$NODE_EXTRA_CA_CERTS"'], {
    SSL_CERT_FILE: join(dir, 'file.pem'),
    SSL_CERT_DIR: `${join(dir, 'certs')}:/nonexistent`,
  });
  t.same(
    joined.output.split('\n').filter(Boolean),
    ['FROM SSL_CERT_FILE', 'FROM SSL_CERT_DIR'],
    'with SSL_CERT_DIR, one file joining both',
  );
  // Each start replaces the one joined file rather than leaving its own behind.
  const temp = join(dir, 'tmp');
  mkdirSync(temp);
  const joinedIn = (extra: string) =>
    throughLauncher(['sh', '-c', 'printf %s "$NODE_EXTRA_CA_CERTS"'], {
      TMPDIR: temp,
      SSL_CERT_FILE: join(dir, 'file.pem'),
      SSL_CERT_DIR: join(dir, extra),
    }).output;
  const first = joinedIn('certs');
  writeFileSync(join(dir, 'certs', 'two.pem'), 'ADDED SINCE');
  t.equal(joinedIn('certs'), first, 'the same file, named again');
  t.strictSame(readdirSync(temp), [basename(first)], 'and no other left in TMPDIR');
  t.match(readFileSync(first, 'utf8'), /ADDED SINCE/, 'holding what the directory holds now');
});

t.test('a server certificate signed by a CA the operator trusts is accepted, as by the original', async (t) => {
  const db = await startTlsPostgres(t);
  const url = new URL(db.url);
  url.hostname = 'localhost';
  url.searchParams.set('sslmode', 'verify-full');
  const env = { DATABASE_URL: url.toString(), AUTH_DB_DRIVER: 'postgres' };
  const migrate = (extra: Record<string, string>, bin = 'portcullis.js') =>
    throughLauncher(['node', BIN(bin), 'migrate'], { ...env, ...extra });

  const untrusted = migrate({});
  t.not(untrusted.status, 0, 'no CA of the operator: the self-signed certificate is refused');
  t.match(untrusted.output, /self[- ]signed certificate/);

  const trusted = migrate({ SSL_CERT_FILE: db.certFile });
  t.equal(trusted.status, 0, trusted.output);
  t.match(trusted.output, /migrations complete/, 'SSL_CERT_FILE names it: the migrations run');

  t.equal(migrate({ NODE_EXTRA_CA_CERTS: db.certFile, SSL_CERT_FILE: '/nonexistent.pem' }).status, 0, 'NODE_EXTRA_CA_CERTS first');

  // A directory of certificates, as Go reads SSL_CERT_DIR (a list, apart by colons): every file in it.
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cas-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'README'), 'not a certificate');
  copyFileSync(db.certFile, join(dir, 'internal-ca.pem'));
  const fromDir = migrate({ SSL_CERT_DIR: `/nonexistent:${dir}` });
  t.equal(fromDir.status, 0, `SSL_CERT_DIR: its files are trusted too: ${fromDir.output}`);

  const viaAuth = spawnSync(BIN('auth'), ['migrate'], {
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...env, SSL_CERT_FILE: db.certFile },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(viaAuth.status, 0, `the original's command name, as \`docker exec … auth migrate\` runs it: ${viaAuth.stderr}`);
});

t.test('`npm start` goes through the launcher too: the service it starts trusts the same CAs', async (t) => {
  const db = await startTlsPostgres(t);
  const url = new URL(db.url);
  url.hostname = 'localhost';
  url.searchParams.set('sslmode', 'verify-full');
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: {
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
      ...testServiceEnv(url.toString(), port),
      SSL_CERT_FILE: db.certFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // npm, its shell and node: the whole group is stopped at the end
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.on('close', resolve));
  t.teardown(async () => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    await exited;
  });
  let health = 0;
  for (let i = 0; i < 600 && health !== 200 && child.exitCode === null; i++) {
    health = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (health !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.equal(health, 200, `the service started on a verify-full connection: ${output.slice(-2000)}`);
});
