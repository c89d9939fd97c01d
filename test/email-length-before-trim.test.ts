// The 255 limit on an email is the original's: counted on the address as sent, in UTF-8 bytes, before
// anything else (docs/users-and-audit.md#addresses). Every route that checks an address answers the same.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const TOO_LONG = { code: 400, error_code: 'validation_failed', msg: 'An email address is too long' };
// A valid address, short once trimmed, sent with more than 255 characters of spaces around it.
const PADDED = `${' '.repeat(130)}padded@example.com${' '.repeat(130)}`;
// 130 two-byte letters: 142 characters, 272 bytes.
const WIDE = `${'é'.repeat(130)}@example.com`;

t.test('an address over 255 bytes as sent is too long on every route', async (t) => {
  const admin = await adminToken();
  const session = (await api.request('POST', '/signup', { body: { email: 'me@example.com', password: 'secret99' } })).body;
  const userId = session.user.id;
  const routes: Array<[string, string, (email: string) => unknown, string?]> = [
    ['POST', '/signup', (email) => ({ email, password: 'secret99' })],
    ['POST', '/magiclink', (email) => ({ email })],
    ['POST', '/otp', (email) => ({ email })],
    ['POST', '/recover', (email) => ({ email })],
    ['POST', '/resend', (email) => ({ type: 'signup', email })],
    ['PUT', '/user', (email) => ({ email }), session.access_token],
    ['POST', '/invite', (email) => ({ email }), admin],
    ['POST', '/admin/users', (email) => ({ email }), admin],
    ['PUT', `/admin/users/${userId}`, (email) => ({ email }), admin],
    ['POST', '/admin/generate_link', (email) => ({ type: 'magiclink', email }), admin],
  ];
  for (const [method, path, body, token] of routes) {
    for (const [name, email] of [
      ['padded', PADDED],
      ['wide', WIDE],
    ]) {
      const res = await api.request(method, path, { body: body(email), token });
      t.strictSame({ status: res.status, body: res.body }, { status: 400, body: TOO_LONG }, `${method} ${path}, ${name}`);
    }
  }
  t.equal(Number((await api.db.query("select count(*) from users where email like 'padded%'")).rows[0].count), 0);
});

t.test('POST /verify refuses them as its own invalid format', async (t) => {
  for (const email of [PADDED, WIDE]) {
    const res = await api.request('POST', '/verify', { body: { type: 'email', email, token: '123456' } });
    t.strictSame(res.body, { code: 422, error_code: 'validation_failed', msg: 'Invalid email format' });
  }
});

t.test('an address padded within the limit is still trimmed', async (t) => {
  const res = await api.request('POST', '/signup', { body: { email: '  trimmed@example.com  ', password: 'secret99' } });
  t.equal(res.status, 200);
  t.equal(res.body.user.email, 'trimmed@example.com');
});
