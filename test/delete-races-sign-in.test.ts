// An admin's deletion of a user racing that user's returning sign-in (POST /token?grant_type=id_token, which
// the OAuth callback shares: oauth/linking.ts), in a forced interleaving: the deletion takes the user's row
// first, the sign-in, past its look-ups, waits behind it. Neither may deadlock (a 500 for one of the two):
// the sign-in is answered as one made after the deletion, a first sign-in that makes a new user.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';
import { inOrderBehindUserLock } from './helpers/row-lock.js';

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
