import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import t, { type Test } from 'tap';
import { loadOrCreateJwtSecret, startEmbeddedPostgres } from '../dist/db/embedded/server.js';
import { servesDataDir } from '../dist/db/embedded/postmaster-pid.js';
import { chooseLocalPort } from '../dist/db/embedded/local-port.js';
import { createServer, type AddressInfo } from 'node:net';

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

function postmasterPid(dataDir: string): number {
  return Number.parseInt(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0], 10);
}

/** A PID that no process has now: a child's, after it exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** Starts the embedded server through the project's code in a child process, as `portcullis serve` does. */
async function startInChild(dataDir: string): Promise<{ child: ChildProcess; url: string; exited: Promise<unknown> }> {
  const module = pathToFileURL(resolve('dist/db/embedded/server.js')).href;
  const script = `const { startEmbeddedPostgres } = await import(${JSON.stringify(module)});
    const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, log: () => {} });
    process.stdout.write(db.url + '\\n');
    setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the child exited before starting the database (code ${code})`)));
  });
  return { child, url, exited };
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
    stdio: 'ignore',
    ...serverUser(),
  });
  t.teardown(() => {
    bystander.kill();
  });
  writeFileSync(join(dataDir, 'pg', 'postmaster.pid'), `${bystander.pid}\n${join(dataDir, 'pg')}\n`);
  // ... and the service that owned the server is gone: still no reason to signal the bystander.
  writeFileSync(join(dataDir, 'pg-owner'), `${await deadPid()}\n`);

  const logged: string[] = [];
  const second = await startEmbeddedPostgres({ dataDir, log: (m) => logged.push(m) });
  t.teardown(() => second.stop());
  t.same(await query(second.url, 'select 1 as ok'), [{ ok: 1 }]);
  t.ok(
    logged.some((m) => m.startsWith('removed stale')),
    'says what it removed',
  );
  t.equal(bystander.exitCode ?? bystander.signalCode, null, 'the bystander was left alone');
  t.doesNotThrow(() => process.kill(bystander.pid!, 0), 'and is still running');
});

t.test('a port taken between its choice and the bind (a parallel start) is given up for another free one', async (t) => {
  const dataDir = tempDataDir(t);
  // The race made certain: the first port offered is already held by someone else.
  const holder = createServer();
  await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
  t.teardown(() => holder.close());
  const held = (holder.address() as AddressInfo).port;
  const offered: number[] = [];
  const logged: string[] = [];
  const db = await startEmbeddedPostgres({
    dataDir,
    log: (m) => logged.push(m),
    choosePort: async (portFile) => {
      const port = offered.length === 0 ? held : await chooseLocalPort(portFile);
      offered.push(port);
      return port;
    },
  });
  t.teardown(() => db.stop());
  t.equal(offered.length, 2, 'a second port was chosen');
  t.equal(new URL(db.url).port, String(offered[1]), 'and the server listens there');
  t.ok(logged.some((m) => m === `the port was taken before PostgreSQL could bind it: trying ${offered[1]}`));
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  t.equal((await client.query('select 1 as one')).rows[0].one, 1);
  await client.end();
});

t.test('a stale postmaster.pid naming this very process: the start goes on and nothing is signalled', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await startEmbeddedPostgres({ dataDir, log: () => {} });
  await first.stop();
  writeFileSync(join(dataDir, 'pg', 'postmaster.pid'), `${process.pid}\n${join(dataDir, 'pg')}\n`);
  writeFileSync(join(dataDir, 'pg-owner'), `${await deadPid()}\n`);
  const second = await startEmbeddedPostgres({ dataDir, log: () => {} });
  t.teardown(() => second.stop());
  t.same(await query(second.url, 'select 1 as ok'), [{ ok: 1 }], 'started, and this test is still alive to see it');
  t.not(postmasterPid(dataDir), process.pid, "the pid file is the new server's");
});

t.test('after kill -9 of the service, the orphaned server is stopped and the next start succeeds', async (t) => {
  const dataDir = tempDataDir(t);
  const service = await startInChild(dataDir);
  const orphan = postmasterPid(dataDir);
  service.child.kill('SIGKILL');
  await service.exited;
  t.same(await query(service.url, 'select 1 as ok'), [{ ok: 1 }], 'the server outlived its service');

  const logged: string[] = [];
  const next = await startEmbeddedPostgres({ dataDir, log: (m) => logged.push(m) });
  t.teardown(() => next.stop());
  t.same(await query(next.url, 'select 1 as ok'), [{ ok: 1 }]);
  t.not(postmasterPid(dataDir), orphan, 'a new server');
  t.notOk(servesDataDir(orphan, join(dataDir, 'pg')), 'the orphan is gone');
  t.ok(
    logged.some((m) => m.startsWith(`stopping PostgreSQL ${orphan} left running`)),
    'says what it stopped',
  );
});

t.test('a server whose service is still running is left alone: the second start fails', async (t) => {
  const dataDir = tempDataDir(t);
  const service = await startInChild(dataDir);
  const running = postmasterPid(dataDir);
  try {
    await t.rejects(startEmbeddedPostgres({ dataDir, log: () => {} }), /embedded PostgreSQL did not start/);
    t.same(await query(service.url, 'select 1 as ok'), [{ ok: 1 }], 'the running server still serves its service');
    t.equal(postmasterPid(dataDir), running);
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    // Its service is gone, so the next start stops it (the case above).
    await (await startEmbeddedPostgres({ dataDir, log: () => {} })).stop();
  }
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
