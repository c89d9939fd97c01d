// PUT /user judges who may change what (docs/api.md#put-user) on the user as the bearer check read it, and
// again on the row it locks: a change that took the row first and would refuse a request sent after it
// refuses this one too. Each race is put in order behind the user's row lock: the other change queues first,
// the update passes its early checks and queues behind it.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { inOrderBehindUserLock } from './helpers/row-lock.js';
import { adminToken } from './helpers/admin.js';
import { signIn, signUp, uniqueEmail } from './helpers/accounts.js';
import { challenge, enrollTotp, totpCode, verifiedTotp, verify } from './helpers/mfa.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

t.test('a session downgraded to aal1 while its password change waited is refused insufficient_aal', async (t) => {
  const email = uniqueEmail('aal-race');
  const user = await signUp(api, email);
  // Two verified factors; the session's aal2 comes from the second, so unenrolling it leaves the session aal1
  // while the user keeps a verified factor.
  const { session: first } = await verifiedTotp(api, user.access_token, 'first');
  const second = await enrollTotp(api, first.access_token, 'second');
  const c = await challenge(api, first.access_token, second.id);
  const upgraded = await verify(api, first.access_token, second.id, c.body.id, totpCode(second.totp.secret));
  t.equal(upgraded.status, 200, upgraded.body.error_code ?? 'aal2 by the second factor');
  const token = upgraded.body.access_token as string;

  const [unenrolled, changed] = await inOrderBehindUserLock(api.db, user.user.id, [
    () => api.request('DELETE', `/factors/${second.id}`, { token }),
    () => api.request('PUT', '/user', { token, body: { password: 'Changed-password-2' } }),
  ]);
  t.equal(unenrolled.status, 200, unenrolled.body.error_code ?? 'unenrolled');
  t.strictSame([changed.status, changed.body.error_code], [401, 'insufficient_aal'], 'refused as if sent after the unenrolment');
  t.equal((await api.request('POST', '/token?grant_type=password', { body: { email, password: 'Changed-password-2' } })).status, 400);
  t.ok(await signIn(api, email), 'the password is unchanged');
});

t.test('a user whose admin role was taken while its app_metadata update waited is refused not_admin', async (t) => {
  const user = await signUp(api, uniqueEmail('role-race'));
  await api.db.query(`update users set role = 'admin' where id = $1`, [user.user.id]);
  const admin = await adminToken();
  const [demoted, updated] = await inOrderBehindUserLock(api.db, user.user.id, [
    () => api.request('PUT', `/admin/users/${user.user.id}`, { token: admin, body: { role: 'authenticated' } }),
    () => api.request('PUT', '/user', { token: user.access_token, body: { app_metadata: { plan: 'pro' } } }),
  ]);
  t.equal(demoted.status, 200, demoted.body.error_code ?? 'demoted');
  t.strictSame([updated.status, updated.body.error_code], [403, 'not_admin']);
  const { rows } = await api.db.query('select raw_app_meta_data from users where id = $1', [user.user.id]);
  t.equal(rows[0].raw_app_meta_data.plan, undefined, 'app_metadata left as it was');
});
