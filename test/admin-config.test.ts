// Admin settings: JWT_ADMIN_ROLES decides which role claims are admins (REFERENCE §3.3), and with
// DISABLE_SIGNUP users can only be created by invitation and by admins (SPEC configuration table).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_JWT_ADMIN_ROLES: 'ops,backoffice', AUTH_DISABLE_SIGNUP: 'true' });
t.teardown(() => api.stop());

t.test('only the configured roles are admins', async (t) => {
  const serviceRole = await api.request('GET', '/admin/users', { token: await adminToken('service_role') });
  t.strictSame([serviceRole.status, serviceRole.body], [403, { code: 403, error_code: 'not_admin', msg: 'User not allowed' }]);
  for (const role of ['ops', 'backoffice']) {
    t.equal((await api.request('GET', '/admin/users', { token: await adminToken(role) })).status, 200, role);
  }
  const noRole = await api.request('GET', '/admin/users', { token: await adminToken('') });
  t.equal(noRole.status, 403);
});

t.test('with signups disabled, invites and admins still create users', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'self@example.com', password: 'self-pass' } });
  t.strictSame([signup.status, signup.body.error_code], [422, 'signup_disabled']);
  const ops = await adminToken('ops');
  const invited = await api.request('POST', '/invite', { token: ops, body: { email: 'invited@example.com' } });
  t.equal(invited.status, 200);
  t.ok(invited.body.invited_at);
  const created = await api.request('POST', '/admin/users', { token: ops, body: { email: 'made@example.com' } });
  t.equal(created.status, 200);
  const { rows } = await api.db.query(`select payload from audit_log_entries where payload ->> 'action' = 'user_invited'`);
  t.equal(rows[0].payload.actor_username, 'ops', 'the audit names the role that acted');
});

t.test('an empty password on update is refused by the policy', async (t) => {
  const ops = await adminToken('ops');
  const made = await api.request('POST', '/admin/users', { token: ops, body: { email: 'empty@example.com', password: '' } });
  t.equal(made.status, 200, 'on create an empty password means none');
  const res = await api.request('PUT', `/admin/users/${made.body.id}`, { token: ops, body: { password: '' } });
  t.strictSame([res.status, res.body.error_code], [422, 'weak_password']);
});
