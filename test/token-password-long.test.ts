// POST /token?grant_type=password with a password longer than the original's 72-byte limit (one an
// imported hash can have): the original's strength check stops at the limit with an error that is not a
// weakness, so the sign-in reports `weak_password: null` whatever the policy would say.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';

const api = await startTestService({ AUTH_PASSWORD_REQUIRED_CHARACTERS: '0123456789' });
t.teardown(() => api.stop());

/** Signs in as a new confirmed user whose stored (bcrypt, as imported) password is `password`. */
async function signInWithStored(email: string, password: string) {
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', $1, now(), $2)`,
    [email, bcrypt.hashSync(password, 4)],
  );
  return api.request('POST', '/token?grant_type=password', { body: { email, password } });
}

t.test('a password over 72 bytes signs in with weak_password null, as in the original', async (t) => {
  const res = await signInWithStored('long-password@example.com', 'x'.repeat(80));
  t.equal(res.status, 200);
  t.equal(res.body.weak_password, null, 'no digit, yet not reported: the limit comes first');
});

t.test('a password at the limit is still checked', async (t) => {
  const res = await signInWithStored('limit-password@example.com', 'y'.repeat(72));
  t.equal(res.status, 200);
  t.strictSame(res.body.weak_password, {
    message: 'Password should contain at least one character of each: 0123456789.',
    reasons: ['characters'],
  });
});
