import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { loadOrCreateJwtSecret, startEmbeddedPostgres } from '../dist/db/embedded.js';

// mkdtemp under the OS temp dir rather than t.testdir(): as root, the server runs as the postgres user,
// which must be able to reach the data directory (the temp dir is world-searchable).
function tempDataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-embedded-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** As root the server runs as the `postgres` OS user; otherwise as us. */
function serverUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number.parseInt(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }), 10);
  return { uid: id('-u'), gid: id('-g') };
}

async function query(url: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

t.test('a cluster is created on first start and its data is still there on the next', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await startEmbeddedPostgres({ dataDir, log: () => {} });
  await query(first.url, `create table kept (note text); insert into kept values ('survives a restart')`);
  await first.stop();
  await first.stop(); // a second stop is harmless

  const second = await startEmbeddedPostgres({ dataDir, log: () => {} });
  t.teardown(() => second.stop());
  t.same(await query(second.url, 'select note from kept'), [{ note: 'survives a restart' }]);
  t.equal(second.url, first.url, 'same password, and the previous port when it is free');
  t.equal(statSync(join(dataDir, 'pg-password')).mode & 0o777, 0o600);
});

t.test('a stale postmaster.pid naming some other live process is removed and the start retried', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await startEmbeddedPostgres({ dataDir, log: () => {} });
  await first.stop();
  // As after a container restart: the PID in the file now belongs to an unrelated live process of the
  // server's own OS user (postgres itself sees through a PID owned by another user, or by its parent).
  const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    stdio: 'ignore', ...serverUser(),
  });
  t.teardown(() => { bystander.kill(); });
  writeFileSync(join(dataDir, 'pg', 'postmaster.pid'), `${bystander.pid}\n${join(dataDir, 'pg')}\n`);

  const logged: string[] = [];
  const second = await startEmbeddedPostgres({ dataDir, log: (m) => logged.push(m) });
  t.teardown(() => second.stop());
  t.same(await query(second.url, 'select 1 as ok'), [{ ok: 1 }]);
  t.ok(logged.some((m) => m.startsWith('removed stale')), 'says what it removed');
});

t.test('a non-empty pg directory without a cluster is left alone', async (t) => {
  const dataDir = tempDataDir(t);
  mkdirSync(join(dataDir, 'pg'));
  writeFileSync(join(dataDir, 'pg', 'something'), 'not a cluster');
  await t.rejects(startEmbeddedPostgres({ dataDir, log: () => {} }), /holds no PostgreSQL cluster/);
});

t.test('the JWT secret is generated once, kept private, and reused', async (t) => {
  const dataDir = tempDataDir(t);
  const secret = loadOrCreateJwtSecret(dataDir);
  t.match(secret, /^[A-Za-z0-9_-]{64}$/, '48 random bytes, base64url');
  t.equal(loadOrCreateJwtSecret(dataDir), secret);
  t.equal(statSync(join(dataDir, 'jwt-secret')).mode & 0o777, 0o600);
});
