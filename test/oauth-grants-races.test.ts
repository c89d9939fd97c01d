// DELETE /user/oauth/grants against the writes it may meet on the user's row, put in a fixed order
// (test/helpers/row-lock.ts): a session that ended while the revoke waited revokes nothing, and a revoke
// racing an exchange of the grant's code neither deadlocks nor leaves the app a session.
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { afterSessionEnded, holdUserLock, inOrderBehind } from './helpers/row-lock.js';
import { approvedCode, oauthServerEnv } from './helpers/oauth-server.js';

const api = await startTestService(oauthServerEnv());
t.teardown(() => api.stop());

/** The grant's state: whether the consent is revoked, its codes, the app's sessions, and what was audited. */
async function grantState(userId: string, clientId: string): Promise<unknown> {
  const { rows } = await api.db.query(
    `select (select revoked_at is not null from oauth_consents where user_id = $1 and client_id = $2) as revoked,
            (select count(*)::int from oauth_authorizations where user_id = $1 and client_id = $2 and status = 'approved') as codes,
            (select count(*)::int from sessions where user_id = $1 and oauth_client_id = $2) as app_sessions,
            (select count(*)::int from audit_log_entries where payload->>'actor_id' = $1::text
               and payload->'traits'->>'action' = 'revoke_oauth_grant') as audited`,
    [userId, clientId],
  );
  return rows[0];
}

t.test('a session ended while the revoke waits for the user: 403 session_not_found, the grant as it was', async (t) => {
  const { client, user, accessToken, revoke } = await approvedCode(api);
  const { rows } = await api.db.query('select id from oauth_consents where user_id = $1 and client_id = $2', [user.id, client.client_id]);
  const before = await grantState(user.id, client.client_id);
  t.strictSame(before, { revoked: false, codes: 1, app_sessions: 0, audited: 0 });
  // The consent is held too: the revoke waits whichever of the two rows it takes first.
  const reply: Reply = await afterSessionEnded(api, user.id, accessToken, revoke, { table: 'oauth_consents', id: rows[0].id });
  t.strictSame(
    [reply.status, reply.body],
    [403, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' }],
  );
  t.strictSame(await grantState(user.id, client.client_id), before, 'the consent, its code and the audit log as they were');
});

t.test('a revoke that takes the user first, then an exchange of its code: no deadlock, no session of the app survives', async (t) => {
  const { client, user, exchange, revoke } = await approvedCode(api);
  // The revoke queues on the user's row first; the exchange then spends its code and queues to record the
  // sign-in. Let go, the revoke's delete of the codes meets the exchange's.
  const [revoked, exchanged] = await inOrderBehind<{ status: number; body: unknown }>(await holdUserLock(api.db, user.id), [
    revoke,
    exchange,
  ]);
  t.strictSame([revoked.status, exchanged.status], [204, 200], 'both succeed, in that order');
  t.strictSame(await grantState(user.id, client.client_id), { revoked: true, codes: 0, app_sessions: 0, audited: 1 });
});
