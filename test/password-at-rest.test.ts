// Password hashes at rest under SECURITY_DB_ENCRYPTION (docs/passwords.md#hashes-at-rest). A GoTrue
// database written with encryption on holds each hash sealed in the original's envelope, keyed by the
// user's id: its users must sign in here, with the keys configured. With SECURITY_DB_ENCRYPTION_ENCRYPT on,
// the hashes this service writes are sealed the same way (readable by the original), and a hash found in
// clear is sealed at the next sign-in. The envelope is built and opened here by the format's definition,
// not by the service's code.
import t from 'tap';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { signIn, signUp, uniqueEmail } from './helpers/accounts.js';

const KEY_ID = 'key-2025';
const KEY = randomBytes(32).toString('base64url');
const PASSWORD = 'Secret-password-1';
const rowKey = (rowId: string) => Buffer.from(hkdfSync('sha256', Buffer.from(KEY, 'base64url'), Buffer.alloc(0), Buffer.from(rowId), 32));

/** The original's envelope of `value` for row `rowId`: AES-256-GCM under HKDF(key, info = row id). */
function sealBySpec(rowId: string, value: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', rowKey(rowId), nonce);
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({ key_id: KEY_ID, alg: 'aes-gcm-hkdf', data: data.toString('base64'), nonce: nonce.toString('base64') });
}

function openBySpec(rowId: string, envelope: string): string {
  const e = JSON.parse(envelope);
  const data = Buffer.from(e.data, 'base64');
  const d = createDecipheriv('aes-256-gcm', rowKey(rowId), Buffer.from(e.nonce, 'base64'));
  d.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString();
}

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true',
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: KEY_ID,
  AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: KEY,
});
t.teardown(() => api.stop());
const storedOf = async (id: string) =>
  (await api.db.query('select encrypted_password from users where id = $1', [id])).rows[0].encrypted_password as string;

t.test('a sign-up stores its hash sealed for its own row, and signs in with it', async (t) => {
  const email = uniqueEmail('sealed');
  const s = await signUp(api, email);
  const stored = await storedOf(s.user.id);
  t.match(JSON.parse(stored), { key_id: KEY_ID, alg: 'aes-gcm-hkdf' });
  t.match(openBySpec(s.user.id, stored), /^\$argon2id\$/, 'an argon2id hash inside');
  t.equal((await signIn(api, email)).user.id, s.user.id);
});

t.test('a hash the original sealed opens here: its users sign in and change their password', async (t) => {
  const email = uniqueEmail('adopted');
  const s = await signUp(api, email);
  const clear = openBySpec(s.user.id, await storedOf(s.user.id));
  await api.db.query('update users set encrypted_password = $2 where id = $1', [s.user.id, sealBySpec(s.user.id, clear)]);
  const session = await signIn(api, email);
  const wrong = await api.request('POST', '/token?grant_type=password', { body: { email, password: 'Not-the-password-1' } });
  t.equal(wrong.status, 400, 'a wrong password is still wrong');
  const same = await api.request('PUT', '/user', { token: session.access_token, body: { password: PASSWORD } });
  t.equal(same.body.error_code, 'same_password', 'the sealed hash is what a new password is compared with');
  const changed = await api.request('PUT', '/user', { token: session.access_token, body: { password: 'Another-password-2' } });
  t.equal(changed.status, 200);
  t.match(openBySpec(s.user.id, await storedOf(s.user.id)), /^\$argon2id\$/, 'the new hash is sealed too');
  t.ok(await signIn(api, email, 'Another-password-2'));
});

t.test('a hash in clear is sealed at the next sign-in', async (t) => {
  const email = uniqueEmail('clear');
  const s = await signUp(api, email);
  const clear = openBySpec(s.user.id, await storedOf(s.user.id));
  await api.db.query('update users set encrypted_password = $2 where id = $1', [s.user.id, clear]);
  await signIn(api, email);
  const stored = await storedOf(s.user.id);
  t.not(stored, clear);
  t.equal(openBySpec(s.user.id, stored), clear, 'the same hash, now sealed');
  t.ok(await signIn(api, email), 'and still signs in');
});

t.test('admin-created users and admin password changes are sealed', async (t) => {
  const token = await adminToken();
  const email = uniqueEmail('admin');
  const created = await api.request('POST', '/admin/users', { token, body: { email, password: PASSWORD, email_confirm: true } });
  t.equal(created.status, 200);
  t.match(openBySpec(created.body.id, await storedOf(created.body.id)), /^\$argon2id\$/);
  const updated = await api.request('PUT', `/admin/users/${created.body.id}`, { token, body: { password: 'Changed-by-admin-3' } });
  t.equal(updated.status, 200);
  t.match(openBySpec(created.body.id, await storedOf(created.body.id)), /^\$argon2id\$/);
  t.ok(await signIn(api, email, 'Changed-by-admin-3'));
});

t.test('an invited user who sets a password at POST /verify gets it sealed', async (t) => {
  const email = uniqueEmail('invited');
  const link = await api.request('POST', '/admin/generate_link', { token: await adminToken(), body: { type: 'invite', email } });
  t.equal(link.status, 200);
  const verified = await api.request('POST', '/verify', {
    body: { type: 'invite', token_hash: link.body.hashed_token, password: PASSWORD },
  });
  t.equal(verified.status, 200);
  t.match(openBySpec(link.body.id, await storedOf(link.body.id)), /^\$argon2id\$/, 'sealed, an argon2id hash inside');
  t.equal((await signIn(api, email)).user.id, link.body.id);
});
