// A password sign-in racing a password change (docs/api.md#post-tokengrant_typepassword): the sign-in checked
// the password the account had when it was read; if a change replaced it before the sign-in wrote, the sign-in
// is checked again against the new one, as a request sent after the change would be. Otherwise the old password
// would start a session the change was meant to end, and the upgrade of an imported hash stored with the
// sign-in would put the old password back over the new one.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';
import { holdLock } from './helpers/row-lock.js';
import { uniqueEmail } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const login = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });

/** A confirmed user whose password is stored as `hash`; answers its id. */
async function userWithHash(email: string, hash: string): Promise<string> {
  const { rows } = await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
     values ('authenticated', 'authenticated', $1, now(), $2) returning id`,
    [email, hash],
  );
  return rows[0].id;
}

/**
 * Signs `email` in with `password` while an uncommitted change of its stored hash to `newHash` holds the user's
 * row: the sign-in reads the old hash, checks the password against it and waits to write; then the change commits.
 */
async function signInBehindChange(id: string, email: string, password: string, newHash: string) {
  const change = await holdLock(api.db, 'update users set encrypted_password = $2 where id = $1', [id, newHash]);
  const signIn = login(email, password);
  await change.waiters(1);
  await change.release();
  return signIn;
}

const sessionCount = async (id: string) =>
  (await api.db.query('select count(*)::int as n from sessions where user_id = $1', [id])).rows[0].n;

t.test("an imported hash's upgrade does not put the old password back over a new one set meanwhile", async (t) => {
  const email = uniqueEmail('imported');
  const id = await userWithHash(email, bcrypt.hashSync('old-password-1', 4));
  const raced = await signInBehindChange(id, email, 'old-password-1', bcrypt.hashSync('new-password-2', 4));
  t.strictSame([raced.status, raced.body.error_code], [400, 'invalid_credentials'], 'the old password no longer signs in');
  t.equal(await sessionCount(id), 0, 'no session was started with the old password');
  t.equal((await login(email, 'new-password-2')).status, 200, 'the new password signs in');
  t.equal((await login(email, 'old-password-1')).status, 400, 'the old one does not');
});

t.test('a sign-in with a password replaced meanwhile starts no session, even without an upgrade', async (t) => {
  const email = uniqueEmail('current');
  const signedUp = await api.request('POST', '/signup', { body: { email, password: 'old-password-1' } });
  t.equal(signedUp.status, 200);
  const id = signedUp.body.user.id as string;
  const other = uniqueEmail('other');
  t.equal((await api.request('POST', '/signup', { body: { email: other, password: 'new-password-2' } })).status, 200);
  const { rows } = await api.db.query('select encrypted_password from users where email = $1', [other]);
  await api.db.query('delete from sessions where user_id = $1', [id]);
  const raced = await signInBehindChange(id, email, 'old-password-1', rows[0].encrypted_password);
  t.strictSame([raced.status, raced.body.error_code], [400, 'invalid_credentials']);
  t.equal(await sessionCount(id), 0);
  t.equal((await login(email, 'new-password-2')).status, 200);
});

t.test('a sign-in whose hash another sign-in upgraded meanwhile is checked against the upgrade and goes through', async (t) => {
  const email = uniqueEmail('twice');
  const id = await userWithHash(email, bcrypt.hashSync('same-password-1', 4));
  const first = await login(email, 'same-password-1');
  t.equal(first.status, 200);
  const { rows } = await api.db.query('select encrypted_password from users where id = $1', [id]);
  t.match(rows[0].encrypted_password, /^\$argon2id\$/, 'the first sign-in upgraded the hash');
  // Back to the imported hash, then the second sign-in reads it while the upgrade (the same password) commits.
  await api.db.query('update users set encrypted_password = $2 where id = $1', [id, bcrypt.hashSync('same-password-1', 4)]);
  const raced = await signInBehindChange(id, email, 'same-password-1', rows[0].encrypted_password);
  t.equal(raced.status, 200, raced.body.error_code ?? 'signed in');
  t.equal((await login(email, 'same-password-1')).status, 200);
});
