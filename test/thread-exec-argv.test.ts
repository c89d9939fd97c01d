// The service's threads take Node's options from startService's threadExecArgv, and by default (left out)
// the process's own, as Node's worker threads do. Watched in a fresh Node process started with an
// `--import` preload that notes every thread it runs in; the service there serves a sign-up, so a crypto
// thread has hashed a password before the notes are read.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './helpers/db.js';
import { freePort, testServiceEnv } from './helpers/server.js';

const root = path.resolve(import.meta.dirname, '..');

// Runs first in every thread that has the option: one line, the thread's kind.
const preload = `
import { appendFileSync } from 'node:fs';
import { isMainThread, workerData } from 'node:worker_threads';
const kind = isMainThread ? 'main' : workerData && 'listen' in workerData ? 'http' : 'other';
appendFileSync(process.env.THREAD_NOTES, kind + '\\n');`;

// Starts the service with the options given as its first argument, signs a user up, and stops it. Run from
// a file, not with --input-type and -e: threads that inherit the process's options would inherit those too.
const child = `
import { createRequire } from 'node:module';
import { loadConfig } from '${root}/dist/server/config/load.js';
import { startService } from '${root}/dist/server/service.js';
const { pino } = createRequire('${root}/package.json')('pino');
const config = loadConfig({ envFile: null, env: JSON.parse(process.env.SERVICE_ENV) });
const service = await startService(config, pino({ level: 'silent' }), JSON.parse(process.argv[2]));
const res = await fetch(service.url + '/signup', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'threads@example.com', password: 'a-long-enough-password-1' }),
});
const body = await res.json();
console.log('REPLY ' + JSON.stringify({ status: res.status, session: Boolean(body.access_token), code: body.error_code }));
await service.stop();
`;

async function run(options: object): Promise<{ reply: { status: number; session: boolean; code?: string }; threads: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-thread-argv-'));
  const database = await createTestDatabase();
  try {
    const notes = path.join(dir, 'threads');
    const env = { ...testServiceEnv(database.url, await freePort()), AUTH_MAILER_AUTOCONFIRM: 'true' };
    const script = path.join(dir, 'start.mjs');
    writeFileSync(script, child);
    const args = [`--import=data:text/javascript,${encodeURIComponent(preload)}`, script, JSON.stringify(options)];
    const out = await new Promise<string>((resolve, reject) => {
      const proc = spawn(process.execPath, args, {
        cwd: root,
        // Only this test's preload: the test runner's own (in NODE_OPTIONS) would blur what is counted.
        env: { PATH: process.env.PATH, THREAD_NOTES: notes, SERVICE_ENV: JSON.stringify(env) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (chunk) => (stdout += chunk));
      proc.stderr.on('data', (chunk) => (stderr += chunk));
      proc.on('error', reject);
      proc.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`the child exited ${code}: ${stderr}`))));
    });
    // The threads log to stdout as well; the child's reply is the line it marked.
    const line = out.split('\n').find((l) => l.startsWith('REPLY '));
    return { reply: JSON.parse(line?.slice('REPLY '.length) ?? 'null'), threads: readFileSync(notes, 'utf8').split('\n').filter(Boolean) };
  } finally {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test("left out, the threads inherit the process's options: the preload runs in the HTTP thread too", async (t) => {
  const { reply, threads } = await run({});
  t.match(reply, { status: 200, session: true }, 'the sign-up is served');
  t.equal(threads.filter((kind) => kind === 'main').length, 1, 'the process ran it once');
  t.ok(threads.includes('http'), `the HTTP thread ran it as well: ${threads.join(', ')}`);
});

t.test('threadExecArgv [] starts every thread without it, and the threads still serve and hash', async (t) => {
  const { reply, threads } = await run({ threadExecArgv: [] });
  t.match(reply, { status: 200, session: true }, 'the sign-up is served, its password hashed on a crypto thread');
  t.same(threads, ['main'], 'only the process itself ran the preload');
});
