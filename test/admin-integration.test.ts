// Admin features meeting flows that other branches build: the refresh grant refusing banned and deleted
// users (REFERENCE §14.1, §14.3), an accepted invite setting its password with PUT /user (§7.5), and
// generate_link's email_change links followed to the end (§2.15, §7.4). Each test runs only when the
// feature is in the compiled tree, and says so when it is skipped.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken, fragmentOf } from './helpers/admin.js';
import { GRANTS } from '../dist/server/grants/index.js';
import { VERIFY_TYPES } from '../dist/server/verify/types.js';
import { ROUTES } from '../dist/server/routes.js';

const hasRefresh = GRANTS.has('refresh_token');
const hasUserUpdate = ROUTES.some((r) => r.method === 'PUT' && r.path === '/user');
const hasEmailChange = VERIFY_TYPES.has('email_change');

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken();
const follow = (link: string) => {
  const u = new URL(link);
  return api.request('GET', u.pathname + u.search);
};
const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });
const refresh = (token: string) => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: token } });
async function confirmedUser(email: string) {
  const res = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email, password: 'integration-pass', email_confirm: true },
  });
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

t.test(
  'the refresh grant refuses a banned user until the ban is lifted, and a deleted one for good',
  { skip: !hasRefresh && 'the refresh_token grant is not in this tree' },
  async (t) => {
    const user = await confirmedUser('refresh-ban@example.com');
    const session = await signIn('refresh-ban@example.com', 'integration-pass');
    await api.request('PUT', `/admin/users/${user.id}`, { token: admin, body: { ban_duration: '1h' } });
    const refused = await refresh(session.body.refresh_token);
    t.strictSame(
      [refused.status, refused.body],
      [400, { code: 400, error_code: 'user_banned', msg: 'Invalid Refresh Token: User Banned' }],
    );
    await api.request('PUT', `/admin/users/${user.id}`, { token: admin, body: { ban_duration: 'none' } });
    const renewed = await refresh(session.body.refresh_token);
    t.equal(renewed.status, 200);
    await api.request('DELETE', `/admin/users/${user.id}`, { token: admin });
    const gone = await refresh(renewed.body.refresh_token);
    t.equal(gone.status, 400);
    t.equal(gone.body.error_code, 'refresh_token_not_found');
  },
);

t.test(
  'an accepted invite sets its password with PUT /user and then signs in with it',
  { skip: !hasUserUpdate && 'PUT /user is not in this tree' },
  async (t) => {
    const link = await api.request('POST', '/admin/generate_link', {
      token: admin,
      body: { type: 'invite', email: 'setpass@example.com' },
    });
    const fragment = fragmentOf((await follow(link.body.action_link)).headers.get('location'));
    t.equal(fragment.type, 'invite');
    const set = await api.request('PUT', '/user', { token: fragment.access_token, body: { password: 'chosen-password' } });
    t.equal(set.status, 200);
    t.equal((await signIn('setpass@example.com', 'chosen-password')).status, 200);
  },
);

t.test(
  'email_change_current and email_change_new links, followed, move the user to the new address',
  { skip: !hasEmailChange && 'GET /verify type=email_change is not in this tree' },
  async (t) => {
    const user = await confirmedUser('before@example.com');
    const body = { email: 'before@example.com', new_email: 'after@example.com' };
    const current = await api.request('POST', '/admin/generate_link', { token: admin, body: { ...body, type: 'email_change_current' } });
    const next = await api.request('POST', '/admin/generate_link', { token: admin, body: { ...body, type: 'email_change_new' } });
    const first = fragmentOf((await follow(next.body.action_link)).headers.get('location'));
    t.strictSame(first, { message: 'Confirmation link accepted. Please proceed to confirm link sent to the other email', sb: '' });
    const second = fragmentOf((await follow(current.body.action_link)).headers.get('location'));
    t.equal(second.type, 'email_change');
    const shown = await api.request('GET', `/admin/users/${user.id}`, { token: admin });
    t.equal(shown.body.email, 'after@example.com');
    t.notOk('new_email' in shown.body);
    t.equal((await signIn('after@example.com', 'integration-pass')).status, 200);
  },
);
