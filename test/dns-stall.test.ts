// A resolver that stops answering (README "Faults and readiness"): the service runs in a mount namespace
// of its own whose /etc/resolv.conf names a DNS server of the test's that reads every query and answers
// none. An outbound call to a host name then waits for the system resolver (getaddrinfo, on libuv's thread
// pool, where argon2 hashes too): it must end within its own budget, leave no half-done flow behind, and not
// stop the password sign-ins meanwhile (libuv runs at most half its threads on such slow work).
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import t, { type Test } from 'tap';
import pg from 'pg';
import { createTestDatabase } from './helpers/db.js';
import { freePort, request, testServiceEnv } from './helpers/server.js';
import { newHookSecret } from './helpers/hook-server.js';

const PASSWORD = 'a-password-long-enough';

/** `command` run with `file` as its /etc/resolv.conf, in a mount namespace of its own (root only). */
const withResolvConf = (file: string, command: string[]) => [
  '-m',
  '--',
  'sh',
  '-c',
  'mount --bind "$0" /etc/resolv.conf && exec "$@"',
  file,
  ...command,
];

/** Whether this machine lets the test give a process its own /etc/resolv.conf. */
function canMountResolvConf(): boolean {
  const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-dns-probe-'));
  try {
    const content = 'nameserver 127.0.0.1\n';
    writeFileSync(path.join(dir, 'resolv.conf'), content);
    const probe = spawnSync('unshare', withResolvConf(path.join(dir, 'resolv.conf'), ['cat', '/etc/resolv.conf']), {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return probe.status === 0 && probe.stdout === content;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A DNS server on 127.x.y.z:53 that counts the queries it reads and answers none of them. */
async function startSilentResolver(t: Test): Promise<{ address: string; queries: () => number }> {
  for (let attempt = 0; ; attempt++) {
    const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const socket = dgram.createSocket('udp4');
    let queries = 0;
    socket.on('message', () => (queries += 1));
    const bound = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(53, address, () => resolve(true));
    });
    if (bound) {
      t.teardown(() => socket.close());
      return { address, queries: () => queries };
    }
    socket.close();
    if (attempt === 20) throw new Error('no loopback address with a free port 53');
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, tries = 300): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const cannot = !canMountResolvConf() && 'this machine cannot give a process its own /etc/resolv.conf (needs root and mount namespaces)';

t.test('with the resolver silent, outbound calls end within their budget and sign-ins go on', { skip: cannot }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-dns-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const resolver = await startSilentResolver(t);
  const resolvConf = path.join(dir, 'resolv.conf');
  // glibc's longest wait per query: a lookup holds its pool thread for 30 s.
  writeFileSync(resolvConf, `nameserver ${resolver.address}\noptions timeout:30 attempts:1\n`);

  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = new pg.Pool({ connectionString: database.url, max: 1 });
  t.teardown(() => db.end());
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    ...testServiceEnv(database.url, port),
    AUTH_MAILER_AUTOCONFIRM: 'true',
    // Every mail goes to a hook whose host name only the silent resolver could answer for.
    AUTH_HOOK_SEND_EMAIL_ENABLED: 'true',
    AUTH_HOOK_SEND_EMAIL_URI: 'https://send-email.hooks.example.com/send',
    AUTH_HOOK_SEND_EMAIL_SECRETS: newHookSecret(),
    // libuv's default pool, and two threads hashing passwords: lookups and hashing share those four.
    UV_THREADPOOL_SIZE: '4',
  };
  const child = spawn('unshare', withResolvConf(resolvConf, [process.execPath, path.resolve('bin/portcullis.js'), 'serve']), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('close', resolve));
  t.teardown(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const base = `http://127.0.0.1:${port}`;
  await until('the service to answer', () =>
    child.exitCode !== null
      ? Promise.reject(new Error('the service ended'))
      : fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        ),
  ).catch((err: Error) => {
    throw new Error(`${err.message}:\n${stderr}`);
  });

  const email = `dns-stall-${process.pid}@example.com`;
  t.equal((await request(base, 'POST', '/signup', { body: { email, password: PASSWORD } })).status, 200);

  // As many mails as libuv has threads (and as the thread's pool lets send at once, sending-slots.ts):
  // each call waits on the silent resolver.
  let mailsAnswered = 0;
  const mails = Array.from({ length: 4 }, (_, i) =>
    request(base, 'POST', '/otp', { body: { email: `dns-stall-${process.pid}-${i}@example.com` } }).finally(() => (mailsAnswered += 1)),
  );
  await until('the lookups to reach the resolver', () => resolver.queries() > 0);

  const signIn = await request(base, 'POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });
  t.equal(signIn.status, 200, 'a password sign-in is answered');
  t.equal(mailsAnswered, 0, 'while every mail still waits for its lookup');
  t.type(signIn.body.access_token, 'string');

  const answers = await Promise.all(mails);
  t.strictSame(
    answers.map((r) => [r.status, r.body.error_code, r.body.msg]),
    Array(4).fill([422, 'hook_timeout', 'Failed to reach hook within maximum time of 5.000000 seconds']),
    "every mail's call ends within the hook's budget",
  );
  // Under autoconfirm the sign-up commits first and the magic link is sent on its own, as in the original:
  // the users stay, but no link was recorded for a mail that never left.
  const { rows } = await db.query<{ users: number; links: number }>(
    `select count(*)::int as users, count(t.id)::int as links
       from auth.users u left join auth.one_time_tokens t on t.user_id = u.id
      where u.email like $1`,
    [`dns-stall-${process.pid}-%`],
  );
  t.strictSame(rows[0], { users: 4, links: 0 }, 'and leaves no link behind');
});
