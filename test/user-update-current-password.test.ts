// SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD (docs/api.md#put-user): a password change names the
// current password, except in a session a one-time code or link signed in (recovery, magic link, OTP: the
// user who forgot it), and except for a user who has none, as the original.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';

const stack = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: 'true' });
const { api } = stack;
t.teardown(() => stack.stop());
const admin = await adminToken();

const REQUIRED = { code: 400, error_code: 'current_password_required', msg: 'Current password required when setting new password.' };
const INVALID = { code: 400, error_code: 'current_password_invalid', msg: 'Current password required when setting new password.' };

async function signUp(email: string, password: string): Promise<string> {
  const res = await api.request('POST', '/signup', { body: { email, password } });
  t.equal(res.status, 200, `signup ${email}`);
  return res.body.access_token as string;
}

const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });

/** A session signed in by following an admin-generated link of `type` (recovery, magiclink). */
async function linkSession(type: string, email: string): Promise<string> {
  const link = await api.request('POST', '/admin/generate_link', { token: admin, body: { type, email } });
  t.equal(link.status, 200, `generate_link ${type}`);
  const verified = await api.request('POST', '/verify', { body: { type, token_hash: link.body.hashed_token } });
  t.equal(verified.status, 200, `verify ${type}: ${verified.body.error_code ?? 'a session'}`);
  return verified.body.access_token as string;
}

t.test('a password session must name the current password, and the right one', async (t) => {
  const email = uniqueEmail('current');
  const token = await signUp(email, 'first-pass-1');
  const missing = await api.request('PUT', '/user', { token, body: { password: 'second-pass-2' } });
  t.strictSame([missing.status, missing.body], [400, REQUIRED]);
  const empty = await api.request('PUT', '/user', { token, body: { password: 'second-pass-2', current_password: '' } });
  t.strictSame([empty.status, empty.body], [400, REQUIRED]);
  const wrong = await api.request('PUT', '/user', { token, body: { password: 'second-pass-2', current_password: 'not-it-9' } });
  t.strictSame([wrong.status, wrong.body], [400, INVALID]);
  t.equal((await signIn(email, 'first-pass-1')).status, 200, 'nothing changed by the refusals');

  const right = await api.request('PUT', '/user', { token, body: { password: 'second-pass-2', current_password: 'first-pass-1' } });
  t.equal(right.status, 200);
  t.equal((await signIn(email, 'second-pass-2')).status, 200, 'the new password signs in');
  t.equal((await signIn(email, 'first-pass-1')).status, 400, 'the old one no longer does');
  // Other changes need nothing of the kind.
  const data = await api.request('PUT', '/user', { token, body: { data: { plan: 'pro' } } });
  t.equal(data.status, 200);
});

t.test('a session a recovery or magic link signed in sets a new password without the current one', async (t) => {
  for (const type of ['recovery', 'magiclink']) {
    const email = uniqueEmail(type);
    await signUp(email, 'forgotten-1');
    const token = await linkSession(type, email);
    const res = await api.request('PUT', '/user', { token, body: { password: `remembered-${type}-2` } });
    t.equal(res.status, 200, `${type}: ${res.body.error_code ?? 'changed'}`);
    t.equal((await signIn(email, `remembered-${type}-2`)).status, 200, `${type}: the new password signs in`);
  }
});

t.test('a user without a password sets the first one without a current one', async (t) => {
  const email = uniqueEmail('nopass');
  const created = await api.request('POST', '/admin/users', { token: admin, body: { email, email_confirm: true } });
  t.equal(created.status, 200);
  // Signed in by magic link (no password to sign in with), the first password needs no current one.
  const token = await linkSession('magiclink', email);
  const res = await api.request('PUT', '/user', { token, body: { password: 'very-first-1' } });
  t.equal(res.status, 200);
  // And from a password session afterwards, the rule holds.
  const password = (await signIn(email, 'very-first-1')).body.access_token as string;
  const again = await api.request('PUT', '/user', { token: password, body: { password: 'second-one-2' } });
  t.strictSame([again.status, again.body], [400, REQUIRED]);
});

t.test('without the setting, no current password is asked for', async (t) => {
  const plain = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => plain.stop());
  const email = uniqueEmail('plain');
  const signup = await plain.api.request('POST', '/signup', { body: { email, password: 'first-pass-1' } });
  const res = await plain.api.request('PUT', '/user', { token: signup.body.access_token, body: { password: 'second-pass-2' } });
  t.equal(res.status, 200);
});

t.test('concurrent changes naming one current password: one succeeds, the others are checked against its password', async (t) => {
  const email = uniqueEmail('race');
  const token = await signUp(email, 'first-pass-1');
  const news = Array.from({ length: 6 }, (_, i) => `raced-pass-${i}`);
  const replies = await Promise.all(
    news.map((password) => api.request('PUT', '/user', { token, body: { password, current_password: 'first-pass-1' } })),
  );
  // Each change checked the current password before its transaction; one that waited behind another's
  // write named a password that was no longer the current one, as it would have sent after it.
  const won = replies.flatMap((r, i) => (r.status === 200 ? [news[i]] : []));
  t.equal(won.length, 1, `one change succeeds: ${replies.map((r) => r.body.error_code ?? r.status).join(', ')}`);
  for (const r of replies.filter((r) => r.status !== 200)) t.strictSame([r.status, r.body], [400, INVALID]);
  t.equal((await signIn(email, won[0] ?? '')).status, 200, 'the winner’s password signs in');
});
