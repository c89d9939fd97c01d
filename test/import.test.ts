// `portcullis import` run as an operator runs it (bin/portcullis.js in a child process): 10,000 users from
// a JSON Lines file, resumed after an interruption and idempotent by id, bad records refused by line; and
// users read straight from a database of the original service. Imported users then sign in.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { migrate } from '../dist/db/migrate.js';
import { createTestDatabase } from './helpers/db.js';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { ALICE, BOB, createOriginalDatabase, withClient } from './helpers/gotrue-db.js';

const BIN = fileURLToPath(new URL('../bin/portcullis.js', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-import-'));
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(AUTH_|GOTRUE_)/.test(name) && name !== 'DATABASE_URL'),
);

function run(args: string[], databaseUrl: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env = {
    ...baseEnv,
    DATABASE_URL: databaseUrl,
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: JWT_SECRET,
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
    AUTH_LOG_LEVEL: 'error',
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'import', ...args], { cwd: dir, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout: stdout.trim(), stderr: stderr.trim() }));
  });
}

const count = async (url: string, table: string) =>
  (await withClient(url, (c) => c.query(`select count(*)::int as n from auth.${table}`))).rows[0].n;
const uuidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const target = await createTestDatabase();
t.teardown(() => target.drop());
await migrate(target.url, 'auth');

const bcryptHash = bcrypt.hashSync('bcrypt-password', 10);
const argonHash = await argon2.hash('argon-password', { type: argon2.argon2id, memoryCost: 1024, timeCost: 1 });
const USERS = 10_000;
const lines = Array.from({ length: USERS }, (_, i) => {
  const n = i + 1;
  return JSON.stringify({
    id: uuidOf(n),
    email: `User${n}@Example.com`,
    encrypted_password: n % 2 ? bcryptHash : argonHash,
    email_confirmed_at: '2024-01-01T00:00:00Z',
    user_metadata: { n },
    app_metadata: { provider: 'email', providers: ['email'] },
    created_at: '2023-06-01T00:00:00Z',
    identities: [{ provider: 'email', provider_id: uuidOf(n), identity_data: { sub: uuidOf(n), email: `user${n}@example.com` } }],
  });
});
const half = path.join(dir, 'half.jsonl');
const full = path.join(dir, 'users.jsonl');
writeFileSync(half, lines.slice(0, USERS / 2).join('\n') + '\n');
writeFileSync(full, lines.join('\n') + '\n');

t.test('10,000 users: an interrupted import resumes, a repeated one changes nothing', async (t) => {
  const first = await run(['--file', half], target.url);
  t.equal(first.status, 0, first.stderr);
  t.equal(await count(target.url, 'users'), USERS / 2);

  const resumed = await run(['--file', full, '--batch', '1000'], target.url);
  t.equal(resumed.status, 0, resumed.stderr);
  const progress = resumed.stdout.split('\n').filter((l) => l.startsWith('progress: '));
  t.equal(progress.length, 10, 'one progress line per batch');
  t.equal(progress[0], 'progress: 1000 read, 0 imported, 1000 already present, 0 refused (last: line 1000)');
  t.match(resumed.stdout, /^done: 5000 imported, 5000 already present, 0 refused$/m);
  t.equal(await count(target.url, 'users'), USERS);
  t.equal(await count(target.url, 'identities'), USERS);

  const again = await run(['--file', full], target.url);
  t.equal(again.status, 0);
  t.match(again.stdout, /^done: 0 imported, 10000 already present, 0 refused$/m);
  t.equal(await count(target.url, 'users'), USERS);
  const { rows } = await withClient(target.url, (c) =>
    c.query(`select email, raw_user_meta_data from auth.users where id = $1`, [uuidOf(77)]),
  );
  t.strictSame(rows, [{ email: 'user77@example.com', raw_user_meta_data: { n: 77 } }], 'email lower-cased, metadata kept');
});

t.test('bad records are refused by line and the rest imported; exit status 1', async (t) => {
  const file = path.join(dir, 'bad.jsonl');
  writeFileSync(
    file,
    [
      '{not json',
      JSON.stringify({ id: 'not-a-uuid' }),
      JSON.stringify({ id: uuidOf(20001), email: 'md5@example.com', encrypted_password: 'md5$abcdef' }),
      JSON.stringify({ id: uuidOf(20002), email: 'USER1@example.com' }),
      JSON.stringify({ id: uuidOf(20003), email: 'fine@example.com', phone: '+15550009999' }),
    ].join('\n'),
  );
  const res = await run(['--file', file], target.url);
  t.equal(res.status, 1);
  t.equal(
    res.stderr,
    [
      'line 1: refused: not valid JSON',
      'line 2: refused: "id" must be a UUID',
      'line 3: refused: "encrypted_password" is not a bcrypt or argon2 hash sign-in can verify',
      `user ${uuidOf(20002)}: refused: email user1@example.com belongs to another user`,
    ].join('\n'),
  );
  t.match(res.stdout, /^done: 1 imported, 0 already present, 4 refused$/m);
  const { rows } = await withClient(target.url, (c) => c.query(`select phone from auth.users where id = $1`, [uuidOf(20003)]));
  t.strictSame(rows, [{ phone: '15550009999' }]);
});

t.test('bad arguments print the usage with status 2', async (t) => {
  for (const args of [
    [],
    ['--file', 'a', '--from-database', 'postgres://x'],
    ['--file', 'a', '--batch', '0'],
    ['--file', 'a', '--after', uuidOf(1)],
  ]) {
    const res = await run(args, target.url);
    t.equal(res.status, 2, args.join(' '));
    t.match(res.stderr, /^usage: portcullis import/);
  }
});

t.test('times in a JSON Lines record are kept to the microsecond', async (t) => {
  const file = path.join(dir, 'micro.jsonl');
  const id = uuidOf(30001);
  writeFileSync(
    file,
    JSON.stringify({
      id,
      email: 'micro@example.com',
      created_at: '2023-06-01T00:00:00.123456Z',
      email_confirmed_at: '2024-01-01 10:00:00.000001+02:00',
      last_sign_in_at: '2024-02-01T00:00:00.5Z',
    }) + '\n',
  );
  const res = await run(['--file', file], target.url);
  t.equal(res.status, 0, res.stderr);
  const { rows } = await withClient(target.url, (c) =>
    c.query(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as created,
              to_char(email_confirmed_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as confirmed,
              to_char(last_sign_in_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as signed_in
         from auth.users where id = $1`,
      [id],
    ),
  );
  t.strictSame(rows, [
    { created: '2023-06-01 00:00:00.123456', confirmed: '2024-01-01 08:00:00.000001', signed_in: '2024-02-01 00:00:00.500000' },
  ]);
});

t.test('from a live database of the original: users with identities, read in batches, then signing in', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const res = await run(['--from-database', original.url, '--batch', '1'], target.url);
  t.equal(res.status, 0, res.stderr);
  t.match(res.stdout, /^done: 3 imported, 0 already present, 0 refused$/m);
  t.match(res.stdout, new RegExp(`^progress: 1 read, 1 imported, 0 already present, 0 refused \\(last: user ${ALICE.id}\\)$`, 'm'));
  const { rows } = await withClient(target.url, (c) =>
    c.query(
      `select u.email, u.phone, u.encrypted_password is null as no_password, count(i.id)::int as identities
             from auth.users u left join auth.identities i on i.user_id = u.id where u.id = any($1) group by u.id order by u.id`,
      [[ALICE.id, BOB.id]],
    ),
  );
  t.strictSame(rows, [
    { email: ALICE.email, phone: null, no_password: false, identities: 1 },
    { email: null, phone: BOB.phone, no_password: true, identities: 0 },
  ]);
  // The original's times are PostgreSQL's now(), to the microsecond: imported whole, not cut to milliseconds.
  const times = `select (extract(epoch from u.email_confirmed_at) * 1e6)::bigint::text as confirmed,
                        (extract(epoch from u.last_sign_in_at) * 1e6)::bigint::text as signed_in,
                        (extract(epoch from u.created_at) * 1e6)::bigint::text as created,
                        (extract(epoch from i.created_at) * 1e6)::bigint::text as identity_created
                   from auth.users u join auth.identities i on i.user_id = u.id where u.id = $1`;
  const [copied] = (await withClient(target.url, (c) => c.query(times, [ALICE.id]))).rows;
  const [source] = (await withClient(original.url, (c) => c.query(times, [ALICE.id]))).rows;
  t.strictSame(copied, source, "Alice's times to the microsecond");
  t.ok(
    Object.values(source as Record<string, string>).some((us) => !us.endsWith('000')),
    'the source has sub-millisecond digits to lose',
  );
  const resumed = await run(['--from-database', original.url, '--after', ALICE.id], target.url);
  t.match(resumed.stdout, /^done: 0 imported, 2 already present, 0 refused$/m, '--after skips what was read');

  const api = await startTestService({ DATABASE_URL: target.url });
  t.teardown(() => api.stop());
  for (const [email, password] of [
    [ALICE.email, ALICE.password],
    ['user1@example.com', 'bcrypt-password'],
    ['user2@example.com', 'argon-password'],
  ]) {
    const signIn = await api.request('POST', '/token?grant_type=password', { body: { email, password } });
    t.equal(signIn.status, 200, `${email} signs in`);
  }
});
