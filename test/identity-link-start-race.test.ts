// GET /user/identities/authorize for a session that ended while the request waited for the user's row
// (test/helpers/row-lock.ts): no linking flow is stored, so the provider's answer cannot link an identity
// to the user for a session already cut off.
import t from 'tap';
import { confirmedUser } from './helpers/users.js';
import { afterSessionEnded } from './helpers/row-lock.js';
import { startGithubLinking } from './helpers/oauth.js';

const { api, stop } = await startGithubLinking();
t.teardown(stop);

const linkFlows = async (userId: string): Promise<number> =>
  (await api.db.query('select count(*)::int as n from flow_state where linking_target_id = $1', [userId])).rows[0].n;

t.test('a session ended while the link start waits for the user: 403 session_not_found, no flow stored', async (t) => {
  const s = await confirmedUser(api);
  const start = () => api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token: s.access_token });
  const reply = await afterSessionEnded(api, s.user.id, s.access_token, start);
  t.strictSame(
    [reply.status, reply.body],
    [403, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' }],
  );
  t.equal(await linkFlows(s.user.id), 0, 'no linking flow for the provider to complete');
});

t.test('a live session starts the link as before', async (t) => {
  const s = await confirmedUser(api);
  const reply = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token: s.access_token });
  t.equal(reply.status, 200, 'started');
  t.equal(await linkFlows(s.user.id), 1);
});
