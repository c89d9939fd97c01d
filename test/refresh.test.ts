// POST /token?grant_type=refresh_token: rotation, every branch of reuse detection (REFERENCE §4.3 and the
// SPEC transitions table), with the database checked, and 1,000 concurrent refreshes of one token.
import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService, type TestService } from './helpers/server.js';
import { refresh, signIn, signUp, uniqueEmail } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
const noRotation = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: 'false',
  AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10',
});
// The defaults (rotation on, no reuse interval) on two HTTP threads, each with its own pool: the
// concurrent refreshes cross threads, as they would instances. The request time limit is raised from
// 10 s: the 1,000-way test is about correctness, and this machine's two cores are shared with other test
// runs, so its duration is not ours to bound here (bench/ measures it). For the same reason the pool's
// load shedding is widened: 1,000 requests at once are 50 waiters per connection, past the default bound.
const defaults = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_HTTP_WORKERS: '2',
  AUTH_API_MAX_REQUEST_DURATION: '120',
  AUTH_DB_POOL_WAITERS_PER_CONNECTION: '100',
  AUTH_DB_ACQUIRE_TIMEOUT: '120s',
  AUTH_DB_STATEMENT_TIMEOUT: '120s',
});
t.teardown(async () => {
  await api.stop();
  await noRotation.stop();
  await defaults.stop();
});
const ageRevocation = (svc: TestService, tokens: string[]) =>
  svc.db.query(`update refresh_tokens set updated_at = now() - interval '1 hour' where token_hash = any($1)`, [tokens.map(hash)]);

const hash = (token: string) => createHash('sha256').update(token).digest('hex');
const row = async (svc: TestService, token: string) =>
  (await svc.db.query('select * from refresh_tokens where token_hash = $1', [hash(token)])).rows[0];
const countTokens = async (svc: TestService, sessionId: string) =>
  Number((await svc.db.query('select count(*) from refresh_tokens where session_id = $1', [sessionId])).rows[0].count);
const ALREADY_USED = { code: 400, error_code: 'refresh_token_already_used', msg: 'Invalid Refresh Token: Already Used' };
const tokenAudits = async (svc: TestService, userId: string) =>
  (
    await svc.db.query(
      `select payload->>'action' as action from audit_log_entries
  where payload->>'actor_id' = $1 and payload->>'log_type' = 'token' order by payload->>'action'`,
      [userId],
    )
  ).rows.map((r) => r.action);

/**
 * Runs `hold` in a transaction that keeps `sessionId`'s row locked, starts `requests` refreshes, waits
 * until all of them wait for that lock in the grant's one statement (lockAndRotate), then commits.
 */
async function behindSessionLock<T>(svc: TestService, sessionId: string, hold: string, requests: () => Promise<T>[]) {
  const holder = await svc.db.connect();
  try {
    await holder.query('begin');
    await holder.query(hold, [sessionId]);
    const pending = requests();
    const replies = Promise.all(pending);
    for (let i = 0; ; i++) {
      const { rows } = await svc.db.query(`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like 'with locked as%'`);
      if (rows[0].n >= pending.length) break;
      if (i === 500) throw new Error('the refreshes never waited for the session lock in the one statement');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await holder.query('commit');
    return await replies;
  } catch (err) {
    await holder.query('rollback'); // not back to the pool inside a transaction, holding the lock
    throw err;
  } finally {
    holder.release();
  }
}

/** A session rotated `times` times: the tokens oldest first (the last one active). */
async function chain(svc: TestService, times: number): Promise<string[]> {
  const first = await signUp(svc);
  const tokens = [first.refresh_token];
  for (let i = 0; i < times; i++) {
    const res = await refresh(svc, tokens[tokens.length - 1]);
    if (res.status !== 200) throw new Error(res.text);
    tokens.push(res.body.refresh_token);
  }
  return tokens;
}

t.test('malformed tokens are refused before any lookup; unknown ones are not found', async (t) => {
  for (const bad of ['', 'short', 'ABCDEFGHIJKL', 'abcdefghijk!']) {
    const res = await refresh(api, bad);
    t.equal(res.status, 400, bad);
    t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg: 'Refresh token is not valid' });
  }
  const unknown = await refresh(api, 'abcdefghijkl');
  t.strictSame(unknown.body, { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' });
  const wrongType = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: 12 } });
  t.strictSame(wrongType.body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field RefreshTokenGrantParams.refresh_token of type string',
  });
  const nullToken = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: null } });
  t.strictSame(
    nullToken.body,
    { code: 400, error_code: 'validation_failed', msg: 'Refresh token is not valid' },
    'null is an empty token, as the original decodes it',
  );
});

t.test('a refresh revokes the presented token and issues its child in the same session', async (t) => {
  const session = await signUp(api);
  const res = await refresh(api, session.refresh_token);
  t.equal(res.status, 200);
  t.match(res.body, { token_type: 'bearer', expires_in: 3600, user: { id: session.user.id, email: session.user.email } });
  t.match(res.body.refresh_token, /^[a-z2-7]{12}$/);
  t.not(res.body.refresh_token, session.refresh_token);
  const parent = await row(api, session.refresh_token);
  const child = await row(api, res.body.refresh_token);
  t.equal(parent.revoked, true);
  t.equal(child.revoked, false);
  t.equal(child.parent_id, parent.id);
  t.equal(child.session_id, parent.session_id);
  const s = (await api.db.query('select refreshed_at, user_agent, ip from sessions where id = $1', [child.session_id])).rows[0];
  t.ok(s.refreshed_at, 'session refreshed_at set');
  t.equal(s.ip, '127.0.0.1');
  t.equal(s.user_agent, 'node', 'the refreshing client is recorded');
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.id, session.user.id);
  const audit = await api.db.query(`select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1`, [
    session.user.id,
  ]);
  t.ok(audit.rows.some((r) => r.action === 'token_refreshed'));
  t.ok(audit.rows.some((r) => r.action === 'token_revoked'));
});

t.test("a refresh writes the rotation whole or not at all: parent, child, the session's refresh, both audit rows", async (t) => {
  const session = await signUp(api);
  const { id: parentId, session_id: sessionId } = await row(api, session.refresh_token);
  const sessionRow = async () => (await api.db.query('select refreshed_at from sessions where id = $1', [sessionId])).rows[0];
  // Refuses this user's token_refreshed audit row while armed: the rotation's last row.
  await api.db.query(`create table refuse_refresh_audit (actor_id text);
    create function refuse_refresh_audit() returns trigger language plpgsql as $$
    begin
      if new.payload->>'action' = 'token_refreshed' and exists (select 1 from refuse_refresh_audit where actor_id = new.payload->>'actor_id')
      then raise exception 'audit refused by the test'; end if;
      return new;
    end $$;
    create trigger refuse_refresh_audit before insert on audit_log_entries for each row execute function refuse_refresh_audit();`);
  t.teardown(() =>
    api.db.query(
      'drop trigger refuse_refresh_audit on audit_log_entries; drop function refuse_refresh_audit(); drop table refuse_refresh_audit',
    ),
  );

  await api.db.query('insert into refuse_refresh_audit values ($1)', [session.user.id]);
  const refused = await refresh(api, session.refresh_token);
  t.match(refused, { status: 500, body: { code: 500, error_code: 'unexpected_failure' } });
  t.equal((await row(api, session.refresh_token)).revoked, false, 'the parent is still active');
  t.equal(await countTokens(api, sessionId), 1, 'no child');
  t.equal((await sessionRow()).refreshed_at, null, 'the session records no refresh');
  t.strictSame(await tokenAudits(api, session.user.id), [], 'no audit row, not even token_revoked');

  await api.db.query('delete from refuse_refresh_audit');
  const res = await refresh(api, session.refresh_token);
  t.equal(res.status, 200, 'the same token refreshes once the audit row is accepted');
  t.equal((await row(api, session.refresh_token)).revoked, true);
  t.match(await row(api, res.body.refresh_token), { parent_id: parentId, session_id: sessionId, revoked: false });
  t.ok((await sessionRow()).refreshed_at instanceof Date);
  t.strictSame(await tokenAudits(api, session.user.id), ['token_refreshed', 'token_revoked']);
  // The user, AMR and identities the rotation returned make the same answer the sign-up gave.
  t.strictSame(res.body.user, session.user, 'the user and identities exactly as the sign-up answered them');
  t.strictSame(decodeJwt(res.body.access_token).amr, decodeJwt(session.access_token).amr);
  t.equal(decodeJwt(res.body.access_token).session_id, sessionId);
});

t.test('a refresh racing a logout: the session is gone once the lock is granted, not found, nothing written', async (t) => {
  const session = await signUp(api);
  const { session_id: sessionId } = await row(api, session.refresh_token);
  const [res] = await behindSessionLock(api, sessionId, 'delete from sessions where id = $1', () => [refresh(api, session.refresh_token)]);
  t.strictSame(res.body, { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' });
  t.equal(await countTokens(api, sessionId), 0);
  t.strictSame(await tokenAudits(api, session.user.id), [], 'no audit row');
});

t.test('two refreshes waiting for one lock in the one statement: one child, both answered with it', async (t) => {
  const session = await signUp(api);
  const { session_id: sessionId } = await row(api, session.refresh_token);
  const replies = await behindSessionLock(api, sessionId, 'select 1 from sessions where id = $1 for update', () => [
    refresh(api, session.refresh_token),
    refresh(api, session.refresh_token),
  ]);
  t.strictSame(
    replies.map((r) => r.status),
    [200, 200],
  );
  t.equal(replies[0].body.refresh_token, replies[1].body.refresh_token);
  t.equal(await countTokens(api, sessionId), 2);
  t.strictSame(
    await tokenAudits(api, session.user.id),
    ['token_refreshed', 'token_refreshed', 'token_revoked'],
    'one rotation, and the loser answered with its child audited too',
  );
});

t.test('re-presenting the immediately previous token returns the existing child, no new token', async (t) => {
  const [t0, t1] = await chain(api, 1);
  const { session_id: sessionId, user_id: userId } = await row(api, t0);
  const sessionRow = async () => (await api.db.query('select refreshed_at, user_agent from sessions where id = $1', [sessionId])).rows[0];
  const before = await sessionRow();
  const again = await api.request('POST', '/token?grant_type=refresh_token', {
    body: { refresh_token: t0 },
    headers: { 'user-agent': 'another-tab' },
  });
  t.equal(again.status, 200);
  t.equal(again.body.refresh_token, t1, 'the same child');
  t.equal(await countTokens(api, sessionId), 2, 'nothing new minted');
  t.equal((await row(api, t1)).revoked, false, 'the child stays active');
  // As the original: every refresh it answers is audited and recorded on the session, this one too.
  t.strictSame(await tokenAudits(api, userId), ['token_refreshed', 'token_refreshed', 'token_revoked'], 'one more token_refreshed');
  const after = await sessionRow();
  t.ok(after.refreshed_at > before.refreshed_at, 'refreshed_at moved later');
  t.equal(after.user_agent, 'another-tab', 'the answering client is recorded');
  // The client that failed to save the response keeps going with the child.
  t.equal((await refresh(api, t1)).status, 200);
});

t.test('with no reuse interval (the default) the previous token is answered however late', async (t) => {
  // REFERENCE §4.3 step 5: the client that failed to save the response keeps its session.
  const [t0, t1] = await chain(defaults, 1);
  await ageRevocation(defaults, [t0]);
  const again = await refresh(defaults, t0);
  t.equal(again.status, 200);
  t.equal(again.body.refresh_token, t1);
});

t.test('the previous token after the interval is reuse: the active token is revoked', async (t) => {
  const [t0, t1] = await chain(api, 1);
  await ageRevocation(api, [t0]);
  t.strictSame((await refresh(api, t0)).body, ALREADY_USED);
  t.equal((await row(api, t1)).revoked, true, 'the thief cannot ride the active token');
  t.strictSame((await refresh(api, t1)).body, ALREADY_USED);
});

t.test('an older token than the previous one after the interval is reuse: every token of the session is revoked', async (t) => {
  const [t0, t1, t2, t3] = await chain(api, 3);
  const sessionId = (await row(api, t0)).session_id;
  const other = await signIn(
    api,
    (await api.db.query('select email from users u join sessions s on s.user_id = u.id where s.id = $1', [sessionId])).rows[0].email,
  );
  // t2 aged too: a rotated token within the interval would get another child (the test above).
  await ageRevocation(api, [t1, t2]);
  const res = await refresh(api, t1); // older than the immediately previous (t2), and out of the 10 s interval
  t.equal(res.status, 400);
  t.strictSame(res.body, ALREADY_USED);
  const live = await api.db.query('select token_hash from refresh_tokens where session_id = $1 and not revoked', [sessionId]);
  t.strictSame(live.rows, [], 'the whole session is revoked');
  t.equal((await row(api, t3)).revoked, true);
  t.equal((await row(api, t0)).revoked, true);
  t.strictSame((await refresh(api, t3)).body, ALREADY_USED, 'the thief and the owner are both out');
  t.strictSame((await refresh(api, t2)).body, ALREADY_USED);
  t.equal((await row(api, other.refresh_token)).revoked, false, 'another session of the user is untouched');
  t.equal((await refresh(api, other.refresh_token)).status, 200);
});

t.test('an older token within the interval gets another child of its own; the active token stays valid', async (t) => {
  // SECURITY_REFRESH_TOKEN_REUSE_INTERVAL=10: the original swaps any revoked token within the interval.
  const [t1, t2, t3] = await chain(api, 2);
  const { id: t1Id, session_id: sessionId, user_id: userId } = await row(api, t1);
  const res = await refresh(api, t1);
  t.equal(res.status, 200);
  const t4 = res.body.refresh_token;
  t.match(t4, /^[a-z2-7]{12}$/);
  t.not(t4, t2, 'not the child it had: another one');
  t.not(t4, t3);
  t.match(await row(api, t4), { parent_id: t1Id, session_id: sessionId, revoked: false });
  t.equal((await row(api, t1)).revoked, true, 'the presented token stays revoked');
  t.equal((await row(api, t3)).revoked, false, 'the active token is not revoked, as in the original');
  t.equal(decodeJwt(res.body.access_token).session_id, sessionId);
  t.strictSame(
    (await tokenAudits(api, userId)).filter((a) => a === 'token_revoked').length,
    3,
    'audited as a rotation (token_revoked, token_refreshed)',
  );

  // t4 is now the newest token and t1 its parent: t1 again is answered with t4, as a previous token is.
  const again = await refresh(api, t1);
  t.equal(again.status, 200);
  t.equal(again.body.refresh_token, t4, 'the same second child');
  t.equal(await countTokens(api, sessionId), 4, 'nothing more minted');

  // Both live tokens go on: t4, and t3, which the original leaves valid.
  const next = await refresh(api, t4);
  t.equal(next.status, 200);
  t.equal((await api.request('GET', '/user', { token: next.body.access_token })).status, 200, 'a token that works');
  t.equal((await refresh(api, t3)).status, 200, 't3 still refreshes');
});

t.test('reuse revokes every live token of the session, a branch given within the interval included, as the original', async (t) => {
  // t0 -> t1 -> t2; t0 presented within the interval gets a branch t1b beside t1. t1 presented after the
  // interval is a reuse: t1b is no descendant of t1, yet it goes too, as the original revokes the session's tokens.
  const [t0, t1, t2] = await chain(api, 2);
  const sessionId = (await row(api, t0)).session_id;
  const branched = await refresh(api, t0);
  t.equal(branched.status, 200, 'within the interval: another child of t0');
  const t1b = branched.body.refresh_token;
  await ageRevocation(api, [t1]);
  t.strictSame((await refresh(api, t1)).body, ALREADY_USED);
  t.equal((await row(api, t2)).revoked, true, "t1's descendant is revoked");
  t.equal((await row(api, t1b)).revoked, true, 'and so is the branch, which descends from t0');
  const live = await api.db.query('select token_hash from refresh_tokens where session_id = $1 and not revoked', [sessionId]);
  t.strictSame(live.rows, [], 'no live token left in the session');
  t.strictSame((await refresh(api, t1b)).body, ALREADY_USED, 'the branch no longer refreshes');
});

t.test('a token revoked by reuse detection stays refused within the interval', async (t) => {
  const [t0, t1, t2] = await chain(api, 2);
  await ageRevocation(api, [t0]);
  t.strictSame((await refresh(api, t0)).body, ALREADY_USED);
  t.strictSame((await refresh(api, t2)).body, ALREADY_USED, 'never rotated: no child for it');
  t.equal((await row(api, t1)).revoked, true);
});

t.test("reuse after the interval is refused too, and revokes the session's tokens", async (t) => {
  const [t0, t1, t2] = await chain(api, 2);
  await ageRevocation(api, [t0, t1]);
  t.strictSame((await refresh(api, t0)).body, ALREADY_USED);
  t.equal((await row(api, t2)).revoked, true);
});

t.test('presenting the first token of a chain after the interval revokes every later token of it', async (t) => {
  const [t0, t1, t2] = await chain(api, 2);
  const sessionId = (await row(api, t0)).session_id;
  await ageRevocation(api, [t0]);
  t.strictSame((await refresh(api, t0)).body, ALREADY_USED);
  const states = await api.db.query('select token_hash, revoked from refresh_tokens where session_id = $1 order by id', [sessionId]);
  t.strictSame(
    states.rows.map((r) => [r.token_hash, r.revoked]),
    [
      [hash(t0), true],
      [hash(t1), true],
      [hash(t2), true],
    ],
  );
});

t.test('rotation disabled: reuse is refused, nothing is revoked', async (t) => {
  const [, t1, t2, t3] = await chain(noRotation, 3);
  await ageRevocation(noRotation, [t1]);
  t.strictSame((await refresh(noRotation, t1)).body, ALREADY_USED);
  t.equal((await row(noRotation, t3)).revoked, false, 'the active token survives');
  t.equal((await row(noRotation, t2)).revoked, true);
  const next = await refresh(noRotation, t3);
  t.equal(next.status, 200, 'and still refreshes');
  await ageRevocation(noRotation, [t3]);
  const previous = await refresh(noRotation, t3);
  t.equal(
    previous.body.refresh_token,
    next.body.refresh_token,
    'rotation still happens; the previous token answers its child, interval or not',
  );
});

t.test('a banned user cannot refresh', async (t) => {
  const session = await signUp(api);
  await api.db.query(`update users set banned_until = now() + interval '1 hour' where id = $1`, [session.user.id]);
  const res = await refresh(api, session.refresh_token);
  t.strictSame(res.body, { code: 400, error_code: 'user_banned', msg: 'Invalid Refresh Token: User Banned' });
  const { revoked, session_id: sessionId } = await row(api, session.refresh_token);
  t.equal(revoked, false);
  t.equal(await countTokens(api, sessionId), 1, 'no child');
  t.match((await api.db.query('select refreshed_at, user_agent from sessions where id = $1', [sessionId])).rows[0], {
    refreshed_at: null,
    user_agent: 'node',
  });
  t.strictSame(await tokenAudits(api, session.user.id), [], 'no audit row');
});

t.test('1,000 concurrent refreshes of one token: one child, every success carries it, no 5xx', async (t) => {
  const session = await signUp(defaults, uniqueEmail('concurrent'));
  const sessionId = (await row(defaults, session.refresh_token)).session_id;
  const replies = await Promise.all(Array.from({ length: 1000 }, () => refresh(defaults, session.refresh_token)));
  const statuses = new Map<number, number>();
  for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  t.strictSame([...statuses.keys()], [200], `statuses ${JSON.stringify([...statuses])}`);
  const children = new Set(replies.map((r) => r.body.refresh_token));
  t.equal(children.size, 1, 'every answer carries the same child');
  t.equal(await countTokens(defaults, sessionId), 2, 'exactly one child in the database');
  const audits = await defaults.db.query(
    `select payload->>'action' as action from audit_log_entries
    where payload->>'actor_id' = $1 and payload->>'log_type' = 'token' order by payload->>'action'`,
    [session.user.id],
  );
  const actions = new Map<string, number>();
  for (const r of audits.rows) actions.set(r.action, (actions.get(r.action) ?? 0) + 1);
  t.strictSame(
    Object.fromEntries(actions),
    { token_refreshed: 1000, token_revoked: 1 },
    'one rotation; every answer audited token_refreshed, as the original audits each refresh it answers',
  );
  const [child] = children;
  t.equal((await row(defaults, child)).revoked, false);
  const next = await refresh(defaults, child);
  t.equal(next.status, 200, 'the session stays usable');
});
