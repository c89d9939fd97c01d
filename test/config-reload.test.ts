// Reloading the --config-dir (docs/settings.md#reloading), on the real binary: a file written in the
// directory reaches GET /settings without a request failing meanwhile, a file that does not check keeps
// the running configuration, settings that need a restart keep their values, and the signal reloads.
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, testServiceEnv } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';

const bin = path.resolve('bin/portcullis.js');

interface Running {
  dir: string;
  port: number;
  logs(): Array<Record<string, any>>;
  /** resolves with the first log line `match` accepts, written after this call */
  nextLog(match: (line: Record<string, any>) => boolean): Promise<Record<string, any>>;
  signal(name: NodeJS.Signals): void;
}

/** The binary with `-c FILE -d DIR` and only PATH in its environment; stopped at the test's end. */
async function startWithDir(t: Test, settings: Record<string, string>): Promise<Running> {
  const database = await createTestDatabase();
  const port = await freePort();
  const root = mkdtempSync(path.join(os.tmpdir(), 'config-reload-'));
  const lines = Object.entries({ ...testServiceEnv(database.url, port), AUTH_HTTP_WORKERS: '2', AUTH_LOG_LEVEL: 'info', ...settings });
  writeFileSync(path.join(root, 'auth.env'), lines.map(([k, v]) => `${k}=${v}\n`).join(''));
  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  writeFileSync(path.join(dir, '50_auth.env'), 'GOTRUE_DISABLE_SIGNUP=false\n');
  const child: ChildProcess = spawn(process.execPath, [bin, 'serve', '--config', 'auth.env', '--config-dir', 'auth.d'], {
    cwd: root,
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const parsed: Array<Record<string, any>> = [];
  const waiters: Array<{ match: (l: Record<string, any>) => boolean; resolve: (l: Record<string, any>) => void }> = [];
  let buffered = '';
  child.stdout!.on('data', (chunk) => {
    buffered += chunk;
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const text of complete.filter((l) => l.startsWith('{'))) {
      const line = JSON.parse(text);
      parsed.push(line);
      for (const w of waiters.filter((w) => w.match(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await database.drop();
  });
  const up = new Promise((resolve) => waiters.push({ match: (l) => l.msg === 'watching the config directory for changes', resolve }));
  await Promise.race([up, exited.then(() => Promise.reject(new Error('the service ended')))]);
  await waitForHealth(port);
  return {
    dir,
    port,
    logs: () => parsed,
    nextLog: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
    signal: (name) => child.kill(name),
  };
}

t.test('a file written in the directory reaches /settings with no request failing meanwhile', async (t) => {
  const svc = await startWithDir(t, { GOTRUE_RELOADING_GRACE_PERIOD_INTERVAL: '100ms' });
  t.equal((await settings(svc.port)).disable_signup, false);

  // Requests all along over new connections, until the change shows. (A kept-alive connection across
  // the drain has its own test below, and a request its thread closes on unanswered test/guard-resend.)
  const statuses: Array<number | string> = [];
  let done = false;
  const load = async () => {
    while (!done)
      statuses.push(
        await get(svc.port, '/settings', false).then(
          (r) => r.status,
          (err: Error) => err.message,
        ),
      );
  };
  const loads = [load(), load(), load()];
  const reloaded = svc.nextLog((l) => l.msg.startsWith('HTTP threads serve the reloaded configuration'));
  writeFileSync(path.join(svc.dir, '60_signup.json'), JSON.stringify({ GOTRUE_DISABLE_SIGNUP: 'true' }));
  await reloaded;
  let now = await settings(svc.port);
  while (!now.disable_signup) now = await settings(svc.port);
  done = true;
  await Promise.all(loads);
  t.equal(now.disable_signup, true, 'the new value is served');
  t.strictSame(
    statuses.filter((s) => s !== 200),
    [],
    `every one of ${statuses.length} requests during the roll-over was answered 200`,
  );
  const applied = svc.logs().find((l) => String(l.msg).startsWith('configuration reloaded:'));
  t.strictSame(applied?.settings, ['DISABLE_SIGNUP'], 'the log names what changed');

  // A file that does not check: the running configuration stays, and the log says why.
  const refused = svc.nextLog((l) => String(l.msg).startsWith('configuration not reloaded'));
  writeFileSync(path.join(svc.dir, '70_bad.env'), 'GOTRUE_JWT_EXP=soon\nGOTRUE_DISABLE_SIGNUP=false\n');
  const why = await refused;
  t.match(why.msg, `GOTRUE_JWT_EXP (${path.join('auth.d', '70_bad.env')}): "soon" is not a whole number`);
  t.equal(why.level, 'error', 'an error');
  t.equal((await settings(svc.port)).disable_signup, true, 'the old configuration is still served');

  // Fixed: a port change is named as needing a restart and is not applied; the rest of the file is.
  const restart = svc.nextLog((l) => String(l.msg).startsWith('changed settings need a restart'));
  const reloadedAgain = svc.nextLog((l) => l.msg.startsWith('HTTP threads serve the reloaded configuration'));
  writeFileSync(path.join(svc.dir, '70_bad.env'), `GOTRUE_API_PORT=${await freePort()}\nGOTRUE_DISABLE_SIGNUP=false\n`);
  t.strictSame((await restart).settings, ['API_PORT']);
  await reloadedAgain;
  let after = await settings(svc.port);
  while (after.disable_signup) after = await settings(svc.port);
  t.equal(after.disable_signup, false, 'the rest of the change is served, on the port the service started on');
});

t.test('with RELOADING_SIGNAL_ENABLED the signal reloads, without file notifications', async (t) => {
  const svc = await startWithDir(t, {
    GOTRUE_RELOADING_NOTIFY_ENABLED: 'false',
    GOTRUE_RELOADING_SIGNAL_ENABLED: 'true',
    GOTRUE_RELOADING_SIGNAL_NUMBER: '12', // SIGUSR2 on Linux
    GOTRUE_RELOADING_GRACE_PERIOD_INTERVAL: '0',
  });
  writeFileSync(
    path.join(svc.dir, '60_github.env'),
    'GOTRUE_EXTERNAL_GITHUB_ENABLED=true\nGOTRUE_EXTERNAL_GITHUB_CLIENT_ID=id\nGOTRUE_EXTERNAL_GITHUB_SECRET=s\nGOTRUE_EXTERNAL_GITHUB_REDIRECT_URI=http://127.0.0.1/cb\n',
  );
  // Without notifications the write alone changes nothing; the signal reloads.
  t.equal((await settings(svc.port)).external.github, false, 'not before the signal');
  const reloaded = svc.nextLog((l) => l.msg.startsWith('HTTP threads serve the reloaded configuration'));
  svc.signal('SIGUSR2');
  await reloaded;
  let now = await settings(svc.port);
  while (!now.external.github) now = await settings(svc.port);
  t.equal(now.external.github, true, 'after the signal');
});

t.test('without the HTTP guard the threads share the port, and a reload reaches it all the same', async (t) => {
  const svc = await startWithDir(t, { AUTH_HTTP_GUARD: 'false', GOTRUE_RELOADING_GRACE_PERIOD_INTERVAL: '100ms' });
  t.equal((await settings(svc.port)).disable_signup, false);
  const drained = svc.nextLog((l) => l.msg === 'the previous HTTP threads have drained and ended');
  writeFileSync(path.join(svc.dir, '60_signup.json'), JSON.stringify({ GOTRUE_DISABLE_SIGNUP: 'true' }));
  // Until then the previous threads may answer, and a connection the kernel queued on one as it stopped
  // listening is reset (docs/settings.md#reloading): only what is served afterwards is asserted.
  await drained;
  const after = await Promise.all(Array.from({ length: 40 }, () => get(svc.port, '/settings', false)));
  t.strictSame(
    after.map((r) => r.status),
    after.map(() => 200),
  );
  t.ok(
    after.every((r) => JSON.parse(r.body).disable_signup === true),
    'every thread listening now serves the reloaded configuration',
  );
  t.equal(svc.logs().filter((l) => l.msg === 'HTTP thread crashed').length, 0);
});

t.test('a kept-alive connection outlives the thread it was on: the guard moves it to a new one', async (t) => {
  const svc = await startWithDir(t, { GOTRUE_RELOADING_GRACE_PERIOD_INTERVAL: '100ms' });
  const socket = net.connect(svc.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  t.teardown(() => socket.destroy());
  const answers = answersOn(socket);
  const ask = () => socket.write('GET /settings HTTP/1.1\r\nHost: localhost\r\n\r\n');

  ask();
  const before = await answers.next();
  t.equal(before.status, 200);
  t.equal(JSON.parse(before.body).disable_signup, false);

  const drained = svc.nextLog((l) => l.msg === 'the previous HTTP threads have drained and ended');
  writeFileSync(path.join(svc.dir, '60_signup.json'), JSON.stringify({ GOTRUE_DISABLE_SIGNUP: 'true' }));
  await drained; // the thread that answered is gone, and with it the guard's connection to it
  t.notOk(answers.ended(), 'the client connection is still open');

  ask();
  const after = await answers.next();
  t.equal(after.status, 200, 'the next request on it is answered');
  t.equal(JSON.parse(after.body).disable_signup, true, 'by a thread with the reloaded configuration');
});

/** Reads HTTP/1.1 answers (Content-Length bodies) off a raw socket, one at a time. */
function answersOn(socket: net.Socket) {
  let buffered = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    wake?.();
  });
  socket.on('close', () => {
    ended = true;
    wake?.();
  });
  return {
    ended: () => ended,
    async next(): Promise<{ status: number; body: string }> {
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end >= 0) {
          const head = buffered.subarray(0, end).toString('latin1');
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffered.length >= end + 4 + length) {
            const body = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
            buffered = buffered.subarray(end + 4 + length);
            return { status: Number(head.split(' ')[1]), body };
          }
        }
        if (ended) throw new Error('the connection closed before the answer');
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    },
  };
}

function get(port: number, pathname: string, agent: http.Agent | false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathname, agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function settings(port: number): Promise<any> {
  return JSON.parse((await get(port, '/settings', false)).body);
}

async function waitForHealth(port: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('service did not come up');
}
