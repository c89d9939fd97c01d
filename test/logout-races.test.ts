// POST /logout against the writes it may meet on the user's sessions, put in a fixed order
// (test/helpers/row-lock.ts): a logout whose session ended while it waited ends no other session, and a
// logout racing an MFA verification (which holds the user's row, upgrades its session and then ends the
// user's other aal1 sessions) does not deadlock with it; a refresh it waits for loses its new token with
// the session.
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { signIn, signUp } from './helpers/accounts.js';
import { challenge, enrollTotp, totpCode, verify } from './helpers/mfa.js';
import { afterSessionEnded, holdLock, inOrderBehind } from './helpers/row-lock.js';
import { claimsOf } from './helpers/mfa.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const SESSION_GONE = [403, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' }];

const sessionsOf = async (userId: string): Promise<string[]> =>
  (await api.db.query('select id from sessions where user_id = $1 order by created_at', [userId])).rows.map((r) => r.id);

t.test('scope=others from a session ended while the logout waits: 403 session_not_found, the other sessions kept', async (t) => {
  // a: the session that ends (as a stolen one does when the owner, on b, sets a new password); b: the owner's.
  const a = await signUp(api);
  const b = await signIn(api, a.user.email);
  const owners = claimsOf(b.access_token).session_id;
  // b's row is held too: the logout waits whichever of the two rows it takes first.
  const reply = await afterSessionEnded(
    api,
    a.user.id,
    a.access_token,
    () => api.request('POST', '/logout?scope=others', { token: a.access_token }),
    { table: 'sessions', id: owners },
  );
  t.strictSame([reply.status, reply.body], SESSION_GONE);
  t.strictSame(await sessionsOf(a.user.id), [owners], "the owner's session survives the ended one's logout");
});

t.test('a logout waiting on a session an MFA verification then ends: no deadlock, every session ended', async (t) => {
  // first: the oldest session, which signs out everywhere; second: verifies a TOTP factor, which ends the
  // user's other aal1 sessions, first among them.
  const first = await signUp(api);
  const second = await signIn(api, first.user.email);
  const factor = await enrollTotp(api, second.access_token);
  const issued = await challenge(api, second.access_token, factor.id);
  // The test holds the first session's row: the logout waits on it, then the verification, which has
  // upgraded the second session by then, waits on it too. Let go, the logout takes it first.
  const held = await holdLock(api.db, 'select 1 from sessions where id = $1 for update', [claimsOf(first.access_token).session_id]);
  const [loggedOut, verified] = await inOrderBehind<Reply>(held, [
    () => api.request('POST', '/logout', { token: first.access_token }),
    () => verify(api, second.access_token, factor.id, issued.body.id, totpCode(factor.totp.secret)),
  ]);
  t.equal(loggedOut.status, 204);
  t.strictSame([verified.status, verified.body], SESSION_GONE, 'the verification refused as one sent after the logout');
  t.strictSame(await sessionsOf(first.user.id), [], 'no session survives the logout');
});

t.test('a global logout waiting on a refresh of one of the sessions: the rotated token ends with the session', async (t) => {
  const a = await signUp(api);
  const b = await signIn(api, a.user.email);
  // The test holds b's row: the refresh of b (which locks it) queues first, the logout second.
  const held = await holdLock(api.db, 'select 1 from sessions where id = $1 for update', [claimsOf(b.access_token).session_id]);
  const [refreshed, loggedOut] = await inOrderBehind<Reply>(held, [
    () => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: b.refresh_token } }),
    () => api.request('POST', '/logout', { token: a.access_token }),
  ]);
  t.strictSame([refreshed.status, loggedOut.status], [200, 204]);
  const again = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: refreshed.body.refresh_token } });
  t.equal(again.body.error_code, 'refresh_token_not_found', 'the rotated refresh token ended with its session');
  t.strictSame(await sessionsOf(a.user.id), []);
  const { rows } = await api.db.query('select count(*)::int as n from refresh_tokens where user_id = $1', [a.user.id]);
  t.equal(rows[0].n, 0, 'no refresh token left');
});
