// An admin's deletion of a user racing that user's returning sign-in (POST /token?grant_type=id_token, which
// the OAuth callback shares: oauth/linking.ts) or a manual link to it, in a forced interleaving: the deletion
// takes the user's row first, the other request, past its look-ups, waits behind it. Neither may deadlock (a
// 500 for one of the two): each is answered as one made after the deletion.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';
import { inOrderBehindUserLock } from './helpers/row-lock.js';
import { startGithubFake, githubPerson } from './helpers/github.js';

const google = await startOidcProvider({ clientId: 'g-web' });
const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-web', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
});
t.teardown(async () => {
  await api.stop();
  await google.stop();
});
const admin = await adminToken();
const nonce = 'delete-races-sign-in';
const nonceHash = createHash('sha256').update(nonce).digest('hex');

for (const soft of [false, true]) {
  t.test(`a returning id_token sign-in while an admin ${soft ? 'soft-' : ''}deletes the user: both answered, a new user`, async (t) => {
    const sub = `deleted-meanwhile-${soft ? 'soft' : 'hard'}`;
    const email = `${sub}@example.com`;
    const signIn = async () => {
      const id_token = await google.signIdToken({ sub, email, email_verified: true, nonce: nonceHash });
      return () => api.request('POST', '/token?grant_type=id_token', { body: { provider: 'google', id_token, nonce } });
    };
    const first = await (await signIn())();
    t.equal(first.status, 200, first.text);
    const userId = first.body.user.id;
    const [deleted, again] = await inOrderBehindUserLock(api.db, userId, [
      () => api.request('DELETE', `/admin/users/${userId}`, { token: admin, body: { should_soft_delete: soft } }),
      await signIn(),
    ]);
    t.strictSame([deleted.status, deleted.body], [200, {}], 'the deletion');
    t.equal(again.status, 200, `the sign-in: ${again.text.slice(0, 120)}`);
    t.not(again.body.user?.id, userId, 'a new user, not the deleted one');
    t.equal(again.body.user?.email, email);
    const sessions = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [userId]);
    t.equal(sessions.rows[0].n, 0, 'no session for the deleted user');
  });
}

t.test('a manual link completed while an admin deletes the linking user: no deadlock, the link refused', async (t) => {
  const github = await startGithubFake();
  const linking = await startTestService({
    ...providerEnv('github', {
      clientId: github.clientId,
      secret: github.clientSecret,
      redirectUri: REDIRECT_URI,
      url: github.base,
      apiUrl: github.base,
    }),
    AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
    AUTH_MAILER_AUTOCONFIRM: 'true',
  });
  t.teardown(async () => {
    await linking.stop();
    await github.stop();
  });
  const body = { email: 'linking-deleted@example.com', password: 'Secret-password-1' };
  const session = (await linking.request('POST', '/signup', { body })).body;
  github.users.set(5001, githubPerson(5001, 'linking-deleted-gh@example.com'));
  github.approveAs = 5001;
  const start = await linking.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', {
    token: session.access_token,
  });
  const params = await github.approve(start.body.url);
  // The deletion takes the user's row first; the callback waits for it behind the deletion.
  const [deleted, linked] = await inOrderBehindUserLock(linking.db, session.user.id, [
    () => linking.request('DELETE', `/admin/users/${session.user.id}`, { token: admin }),
    () => linking.request('GET', `/callback?${params}`),
  ]);
  t.strictSame([deleted.status, deleted.body], [200, {}], 'the deletion');
  const refused = new URL(linked.headers.get('location')!).searchParams;
  t.equal(refused.get('error_code'), 'user_not_found', `the link is refused: ${refused.get('error_description')}`);
  const identities = await linking.db.query(`select count(*)::int as n from identities where provider = 'github'`);
  t.equal(identities.rows[0].n, 0, 'nothing linked');
});
