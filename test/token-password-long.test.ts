// POST /token?grant_type=password with a password longer than the original's 72-byte limit (one an
// imported hash can have): the original's strength check stops at the limit with an error that is not a
// weakness, so the sign-in reports `weak_password: null` whatever the policy would say.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';

const api = await startTestService({ AUTH_PASSWORD_REQUIRED_CHARACTERS: '0123456789' });
t.teardown(() => api.stop());
const login = (body: unknown) => api.request('POST', '/token?grant_type=password', { body });

t.test('a password over 72 bytes signs in with weak_password null, as in the original', async (t) => {
  const long = 'x'.repeat(80);
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', 'long-password@example.com', now(), $1)`,
    [bcrypt.hashSync(long, 4)],
  );
  const res = await login({ email: 'long-password@example.com', password: long });
  t.equal(res.status, 200);
  t.equal(res.body.weak_password, null, 'no digit, yet not reported: the limit comes first');
});

t.test('a password at the limit is still checked', async (t) => {
  const atLimit = 'y'.repeat(72);
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', 'limit-password@example.com', now(), $1)`,
    [bcrypt.hashSync(atLimit, 4)],
  );
  const res = await login({ email: 'limit-password@example.com', password: atLimit });
  t.equal(res.status, 200);
  t.strictSame(res.body.weak_password, {
    message: 'Password should contain at least one character of each: 0123456789.',
    reasons: ['characters'],
  });
});
