// `portcullis admin createuser|deleteuser`, the original's `auth admin` commands, run as an operator's
// script runs them (bin/portcullis.js in a child process) against the database a running service uses:
// the user it creates signs in through the API, and the one it deletes is gone with its sessions.
import t from 'tap';
import os from 'node:os';
import { decodeJwt } from 'jose';
import { startTestService, testServiceEnv } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { runPortcullisBesideService } from './helpers/cli.js';

const database = await createTestDatabase();
const api = await startTestService({ DATABASE_URL: database.url });
t.teardown(async () => {
  await api.stop();
  await database.drop();
});
const env = { PATH: process.env.PATH, ...testServiceEnv(database.url, 1), AUTH_LOG_LEVEL: 'info' };
const admin = (...args: string[]) => runPortcullisBesideService(['admin', ...args], { cwd: os.tmpdir(), env });
const logged = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; msg: string });
const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });

t.test('createuser: the user signs in with the password; --confirm confirms it, a third argument or --admin sets the role', async (t) => {
  const made = await admin('createuser', 'Ops@Example.com', 'first-password-1', '--confirm');
  t.equal(made.status, 0, made.stderr);
  t.match(logged(made.stdout), [{ level: 'info', msg: 'Created user: ops@example.com' }]);
  const session = await signIn('ops@example.com', 'first-password-1');
  t.equal(session.status, 200, 'signs in through the API');
  t.equal(decodeJwt(session.body.access_token).role, 'authenticated', 'the default role');
  t.equal(session.body.user.aud, 'authenticated');
  t.match(session.body.user.identities, [{ provider: 'email', identity_data: { email: 'ops@example.com', email_verified: true } }]);

  t.equal((await admin('createuser', 'unconfirmed@example.com', 'first-password-1')).status, 0);
  t.equal((await signIn('unconfirmed@example.com', 'first-password-1')).body.error_code, 'email_not_confirmed', 'without --confirm');

  t.equal((await admin('createuser', 'role@example.com', 'first-password-1', 'support_agent', '--confirm')).status, 0);
  t.equal(decodeJwt((await signIn('role@example.com', 'first-password-1')).body.access_token).role, 'support_agent');
  t.equal((await admin('createuser', '--admin', 'boss@example.com', 'first-password-1', '--confirm')).status, 0);
  t.equal(decodeJwt((await signIn('boss@example.com', 'first-password-1')).body.access_token).role, 'admin', 'JWT_ADMIN_GROUP_NAME');

  t.equal((await admin('createuser', 'other-aud@example.com', 'first-password-1', '--confirm', '-a', 'partners')).status, 0);
  const row = await api.db.query('select aud from users where email = $1', ['other-aud@example.com']);
  t.equal(row.rows[0].aud, 'partners', '--aud/-a sets the audience');
});

t.test('createuser refuses a taken or malformed address and leaves nothing behind', async (t) => {
  const before = (await api.db.query('select count(*)::int as n from users')).rows[0].n;
  const again = await admin('createuser', 'OPS@example.com', 'another-password-1');
  t.equal(again.status, 1);
  t.match(logged(again.stdout), [{ level: 'error', msg: 'Error creating new user: user already exists' }]);
  const malformed = await admin('createuser', 'not-an-address', 'another-password-1');
  t.equal(malformed.status, 1);
  t.match(logged(malformed.stdout)[0].msg, /^Error creating new user: /);
  t.equal((await api.db.query('select count(*)::int as n from users')).rows[0].n, before);
  t.equal((await signIn('ops@example.com', 'first-password-1')).status, 200, 'the existing user keeps its password');
});

t.test('deleteuser by email or by id: the user and its sessions are gone', async (t) => {
  t.equal((await admin('createuser', 'leaving@example.com', 'first-password-1', '--confirm')).status, 0);
  const session = await signIn('leaving@example.com', 'first-password-1');
  const removed = await admin('deleteuser', 'leaving@example.com');
  t.equal(removed.status, 0, removed.stderr);
  t.match(logged(removed.stdout), [{ level: 'info', msg: 'Removed user: leaving@example.com' }]);
  t.equal((await api.request('GET', '/user', { token: session.body.access_token })).status, 403, 'its access token no longer works');
  t.equal(
    (await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: session.body.refresh_token } })).status,
    400,
  );

  const { id } = (await api.db.query('select id from users where email = $1', ['unconfirmed@example.com'])).rows[0];
  t.equal((await admin('deleteuser', id)).status, 0, 'by id');
  t.equal((await api.db.query('select count(*)::int as n from users where id = $1', [id])).rows[0].n, 0);

  const unknown = await admin('deleteuser', 'nobody@example.com');
  t.equal(unknown.status, 1);
  t.match(logged(unknown.stdout), [{ level: 'error', msg: /^Error finding user \(nobody@example\.com\)/ }]);
});

t.test('usage errors exit 2 with the usage line', async (t) => {
  for (const args of [
    [],
    ['createuser', 'only@example.com'],
    ['deleteuser'],
    ['deleteuser', 'a', 'b'],
    ['renameuser', 'x'],
    ['createuser', 'a@b.co', 'pw', 'role', 'extra'],
  ]) {
    const res = await admin(...args);
    t.equal(res.status, 2, args.join(' ') || '(nothing)');
    t.match(res.stderr, /^usage: portcullis admin createuser/);
  }
});
