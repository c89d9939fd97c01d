// The admin API end to end through @supabase/auth-js's GoTrueAdminApi, as a back-end would use it with a
// service_role key: createUser, listUsers, getUserById, updateUserById (ban, role, app_metadata),
// deleteUser, generateLink and inviteUserByEmail, with the user side checked through AuthClient.
import t from 'tap';
import { AuthClient, GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { adminToken, fragmentOf } from './helpers/admin.js';

const smtp = await startSmtpServer();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});
const serviceRoleJwt = await adminToken('service_role');
const adminApi = new GoTrueAdminApi({ url: api.url, headers: { Authorization: 'Bearer ' + serviceRoleJwt } });
const client = () => new AuthClient({ url: api.url, persistSession: false, autoRefreshToken: false, detectSessionInUrl: false });
const follow = (link: string) => {
  const u = new URL(link);
  return api.request('GET', u.pathname + u.search);
};

t.test('createUser → sign in → getUserById → listUsers pages', async (t) => {
  const { data, error } = await adminApi.createUser({
    email: 'e2e@example.com',
    password: 'e2e-password',
    email_confirm: true,
    user_metadata: { full_name: 'End To End' },
  });
  t.equal(error, null);
  t.equal(data.user!.email, 'e2e@example.com');
  t.ok(data.user!.email_confirmed_at);
  const signedIn = await client().signInWithPassword({ email: 'e2e@example.com', password: 'e2e-password' });
  t.equal(signedIn.error, null);
  t.equal(signedIn.data.user!.id, data.user!.id);

  const byId = await adminApi.getUserById(data.user!.id);
  t.equal(byId.error, null);
  t.strictSame(byId.data.user!.user_metadata, { full_name: 'End To End', email_verified: true });

  for (let i = 0; i < 4; i++) await adminApi.createUser({ email: `listed${i}@example.com` });
  const page1 = await adminApi.listUsers({ page: 1, perPage: 2 });
  t.equal(page1.error, null);
  t.equal(page1.data.users.length, 2);
  t.match(page1.data, { total: 5, nextPage: 2, lastPage: 3 });
  const page3 = await adminApi.listUsers({ page: 3, perPage: 2 });
  t.equal(page3.data.users.length, 1);
  t.match(page3.data, { total: 5, nextPage: null, lastPage: 3 });
  const all = await adminApi.listUsers();
  t.equal(all.data.users.length, 5, 'no paging parameters: the default page of 50');

  const dup = await adminApi.createUser({ email: 'e2e@example.com' });
  t.equal(dup.error?.status, 422);
  t.equal(dup.error?.code, 'email_exists');
});

t.test('updateUserById: role and app_metadata reach the JWT; a ban refuses sign-in until lifted', async (t) => {
  const { data } = await adminApi.createUser({ email: 'managed@example.com', password: 'managed-pass', email_confirm: true });
  const id = data.user!.id;
  const updated = await adminApi.updateUserById(id, { role: 'manager', app_metadata: { tier: 'gold' } });
  t.equal(updated.error, null);
  t.equal(updated.data.user!.role, 'manager');
  t.match(updated.data.user!.app_metadata, { provider: 'email', tier: 'gold' });
  const session = await client().signInWithPassword({ email: 'managed@example.com', password: 'managed-pass' });
  const claims = JSON.parse(Buffer.from(session.data.session!.access_token.split('.')[1], 'base64url').toString());
  t.match(claims, { role: 'manager', app_metadata: { tier: 'gold' } });

  const banned = await adminApi.updateUserById(id, { ban_duration: '2h' });
  t.equal(banned.error, null);
  t.ok(Date.parse((banned.data.user as any).banned_until) > Date.now() + 3_600_000);
  const refused = await client().signInWithPassword({ email: 'managed@example.com', password: 'managed-pass' });
  t.equal(refused.error?.code, 'user_banned');
  const lifted = await adminApi.updateUserById(id, { ban_duration: 'none' });
  t.notOk((lifted.data.user as any).banned_until);
  t.equal((await client().signInWithPassword({ email: 'managed@example.com', password: 'managed-pass' })).error, null);
});

t.test('deleteUser, hard and soft', async (t) => {
  const hard = await adminApi.createUser({ email: 'gone@example.com' });
  t.equal((await adminApi.deleteUser(hard.data.user!.id)).error, null);
  const missing = await adminApi.getUserById(hard.data.user!.id);
  t.equal(missing.error?.status, 404);
  t.equal(missing.error?.code, 'user_not_found');
  const soft = await adminApi.createUser({ email: 'faded@example.com' });
  t.equal((await adminApi.deleteUser(soft.data.user!.id, true)).error, null);
  t.ok((await adminApi.getUserById(soft.data.user!.id)).data.user!.deleted_at);
});

t.test('generateLink: properties and user split by the client; the link signs in', async (t) => {
  await adminApi.createUser({ email: 'linked@example.com', email_confirm: true });
  const { data, error } = await adminApi.generateLink({
    type: 'magiclink',
    email: 'linked@example.com',
    options: { redirectTo: 'http://localhost:3000/in' },
  });
  t.equal(error, null);
  t.match(data.properties, { verification_type: 'magiclink', redirect_to: 'http://localhost:3000/in', email_otp: /^\d{6}$/ });
  t.equal(data.user!.email, 'linked@example.com');
  const res = await follow(data.properties!.action_link);
  const fragment = fragmentOf(res.headers.get('location'));
  t.equal(fragment.type, 'magiclink');
  const user = await client().getUser(fragment.access_token);
  t.equal(user.data.user?.email, 'linked@example.com');

  const signup = await adminApi.generateLink({
    type: 'signup',
    email: 'linksignup@example.com',
    password: 'link-pass-1',
    options: { data: { a: 1 } },
  });
  t.equal(signup.error, null);
  t.match(signup.data.user!.user_metadata, { a: 1 });
});

t.test('inviteUserByEmail: the invite mail arrives and its link signs the user in', async (t) => {
  const { data, error } = await adminApi.inviteUserByEmail('friend@example.com', {
    data: { from: 'e2e' },
    redirectTo: 'http://localhost:3000/welcome',
  });
  t.equal(error, null);
  t.ok(data.user!.invited_at);
  const mail = await smtp.waitForMail('friend@example.com');
  const res = await follow(mail.link!);
  t.ok(res.headers.get('location')!.startsWith('http://localhost:3000/welcome#'));
  const fragment = fragmentOf(res.headers.get('location'));
  t.equal(fragment.type, 'invite');
  const user = await client().getUser(fragment.access_token);
  t.equal(user.data.user?.id, data.user!.id);
  const notAdmin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: 'Bearer ' + fragment.access_token } });
  const refused = await notAdmin.listUsers();
  t.equal(refused.error?.status, 403);
  t.equal(refused.error?.code, 'not_admin');
});
