// POST /logout with each scope (REFERENCE §2.10): 204, the sessions it ends refuse their access tokens
// (403 session_not_found) and their refresh tokens; the others keep working.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { refresh, signIn, signUp, type Session } from './helpers/accounts.js';
import { signedToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const SESSION_GONE = { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' };
const NOT_FOUND = { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' };

/** Three sessions of one user: a (the caller), b and c. */
async function threeSessions(): Promise<Session[]> {
  const a = await signUp(api);
  return [a, await signIn(api, a.user.email), await signIn(api, a.user.email)];
}

async function alive(s: Session): Promise<boolean> {
  const me = await api.request('GET', '/user', { token: s.access_token });
  return me.status === 200;
}

t.test('global (the default) ends every session of the user', async (t) => {
  const [a, b, c] = await threeSessions();
  const other = await signUp(api);
  const res = await api.request('POST', '/logout', { token: a.access_token });
  t.equal(res.status, 204);
  t.equal(res.text, '');
  for (const s of [a, b, c]) {
    t.strictSame((await api.request('GET', '/user', { token: s.access_token })).body, SESSION_GONE);
    t.strictSame((await refresh(api, s.refresh_token)).body, NOT_FOUND);
  }
  t.ok(await alive(other), 'another user is untouched');
  const rows = await api.db.query('select count(*) from refresh_tokens where user_id = $1', [a.user.id]);
  t.equal(rows.rows[0].count, '0', 'refresh tokens went with the sessions');
  const audit = await api.db.query(`select 1 from audit_log_entries where payload->>'action' = 'logout' and payload->>'actor_id' = $1`, [
    a.user.id,
  ]);
  t.equal(audit.rowCount, 1);
});

t.test("a session that has ended (past its not_after) may still sign out, and global ends the user's others", async (t) => {
  const [a, b] = await threeSessions();
  await api.db.query(`update sessions set not_after = now() - interval '1 minute' where user_id = $1 and id = $2`, [
    a.user.id,
    JSON.parse(Buffer.from(a.access_token.split('.')[1], 'base64url').toString()).session_id,
  ]);
  t.equal(
    (await api.request('GET', '/user', { token: a.access_token })).body.error_code,
    'session_expired',
    'the ended session reads nothing',
  );
  const res = await api.request('POST', '/logout', { token: a.access_token });
  t.equal(res.status, 204);
  t.notOk(await alive(b), 'the other session ended too');
});

t.test('scope=global explicitly is the same', async (t) => {
  const [a, b] = await threeSessions();
  t.equal((await api.request('POST', '/logout?scope=global', { token: a.access_token })).status, 204);
  t.notOk(await alive(b));
});

t.test('local ends only the current session', async (t) => {
  const [a, b, c] = await threeSessions();
  t.equal((await api.request('POST', '/logout?scope=local', { token: b.access_token })).status, 204);
  t.notOk(await alive(b));
  t.strictSame((await refresh(api, b.refresh_token)).body, NOT_FOUND);
  t.ok(await alive(a));
  t.ok(await alive(c));
  t.equal((await refresh(api, a.refresh_token)).status, 200);
});

t.test('others ends every session but the current one', async (t) => {
  const [a, b, c] = await threeSessions();
  t.equal((await api.request('POST', '/logout?scope=others', { token: a.access_token })).status, 204);
  t.ok(await alive(a));
  t.notOk(await alive(b));
  t.notOk(await alive(c));
  t.equal((await refresh(api, a.refresh_token)).status, 200);
});

t.test('an unknown scope is refused and ends nothing', async (t) => {
  const [a] = await threeSessions();
  const res = await api.request('POST', '/logout?scope=everything', { token: a.access_token });
  t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg: 'Unsupported logout scope "everything"' });
  // quoted as Go's %q quotes it: quotes and backslashes escaped, characters that do not print as escapes
  const odd = await api.request('POST', '/logout?scope=a%22b%5Cc%09%E2%80%8B%C3%A9%F0%9F%98%80%7F', { token: a.access_token });
  t.equal(odd.body.msg, 'Unsupported logout scope "a\\"b\\\\c\\t\\u200bé😀\\x7f"');
  t.ok(await alive(a));
});

t.test("an invalid UTF-8 scope is quoted byte by byte, as Go's %q quotes the bytes the original read", async (t) => {
  const [a] = await threeSessions();
  const msgOf = async (query: string) => (await api.request('POST', `/logout?${query}`, { token: a.access_token })).body.msg;
  t.equal(await msgOf('scope=%FF'), 'Unsupported logout scope "\\xff"');
  // a sequence cut short is one escape per byte; a surrogate's encoding is no character either
  t.equal(await msgOf('scope=%E2%82x%ED%A0%80'), 'Unsupported logout scope "\\xe2\\x82x\\xed\\xa0\\x80"');
  // the replacement character itself, sent as valid UTF-8, prints as it is
  t.equal(await msgOf('scope=%EF%BF%BD%FF'), 'Unsupported logout scope "\uFFFD\\xff"');
  t.ok(await alive(a));
});

t.test('a scope pair Go\'s query parser drops (a ";" or a bad escape) leaves the default, global', async (t) => {
  const [a, b] = await threeSessions();
  t.equal((await api.request('POST', '/logout?scope=local;x', { token: a.access_token })).status, 204);
  t.notOk(await alive(b), "every session ended, not only the caller's");
  const [c, d] = await threeSessions();
  t.equal((await api.request('POST', '/logout?scope=local%zz', { token: c.access_token })).status, 204);
  t.notOk(await alive(d));
});

t.test("local with a token naming another user's session ends that session, as the original deletes by id", async (t) => {
  const [a, a2] = await threeSessions();
  const [b] = await threeSessions();
  const claimsOf = (s: Session) => JSON.parse(Buffer.from(s.access_token.split('.')[1], 'base64url').toString());
  // A's own claims, with the session id of B's session: a token only the JWT secret's holder can mint.
  const token = await signedToken({ ...claimsOf(a), session_id: claimsOf(b).session_id, iat: undefined, exp: undefined });
  t.equal((await api.request('POST', '/logout?scope=local', { token })).status, 204);
  t.strictSame((await api.request('GET', '/user', { token: b.access_token })).body, SESSION_GONE, "B's session is gone");
  t.ok((await alive(a)) && (await alive(a2)), "A's sessions stay");
  // others: every session of the token's user but the named one, which is not the user's, so all of them
  const [c] = await threeSessions();
  const others = await signedToken({ ...claimsOf(a), session_id: claimsOf(c).session_id, iat: undefined, exp: undefined });
  t.equal((await api.request('POST', '/logout?scope=others', { token: others })).status, 204);
  t.notOk((await alive(a)) || (await alive(a2)), 'every session of A ended');
  t.ok(await alive(c), "the named session, another user's, is untouched");
});

t.test('logout needs a bearer token; a logged-out token cannot log out again', async (t) => {
  const none = await api.request('POST', '/logout');
  t.strictSame(none.body, { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' });
  const [a] = await threeSessions();
  await api.request('POST', '/logout', { token: a.access_token });
  t.strictSame((await api.request('POST', '/logout', { token: a.access_token })).body, SESSION_GONE);
});

t.test('a logout that fails writes nothing: its audit entry and the sessions it ends are one transaction', async (t) => {
  const [a, b] = await threeSessions();
  // Refuses this user's logout audit row, as a full disk or a broken trigger would.
  await api.db.query(`create function refuse_logout_audit() returns trigger language plpgsql as $$
    begin
      if new.payload->>'action' = 'logout' and new.payload->>'actor_id' = '${a.user.id}' then raise exception 'audit refused by the test'; end if;
      return new;
    end $$;
    create trigger refuse_logout_audit before insert on audit_log_entries for each row execute function refuse_logout_audit();`);
  t.teardown(() =>
    api.db.query('drop trigger if exists refuse_logout_audit on audit_log_entries; drop function if exists refuse_logout_audit()'),
  );
  const refused = await api.request('POST', '/logout', { token: a.access_token });
  t.equal(refused.status, 500);
  t.ok((await alive(a)) && (await alive(b)), 'every session is still there');
  await api.db.query('drop trigger refuse_logout_audit on audit_log_entries; drop function refuse_logout_audit()');
  t.equal((await api.request('POST', '/logout', { token: a.access_token })).status, 204);
  t.notOk((await alive(a)) || (await alive(b)), 'once the audit entry is accepted the logout ends them');
});
