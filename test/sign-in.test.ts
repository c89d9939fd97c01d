// The sign-in statement (src/db/sign-in.ts): a password login writes exactly the rows it always wrote
// (session, refresh token, AMR claim, 'login' audit entry, last_sign_in_at), all of them or none, and
// the token response carries the same user and identities the finders give.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { findAmrAndIdentities } from '../dist/db/sign-in.js';
import { findIdentitiesByUser } from '../dist/db/identities.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const login = (body: unknown, userAgent = 'sign-in-test') =>
  api.request('POST', '/token?grant_type=password', { body, headers: { 'user-agent': userAgent } });
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** Rows of every table a sign-in writes, whoever they belong to: a failed sign-in must leave none. */
async function tableCounts() {
  const { rows } = await api.db
    .query(`select (select count(*) from users)::int as users, (select count(*) from identities)::int as identities,
    (select count(*) from sessions)::int as sessions, (select count(*) from refresh_tokens)::int as refresh_tokens,
    (select count(*) from mfa_amr_claims)::int as amr, (select count(*) from audit_log_entries)::int as audit`);
  return rows[0];
}
const userRow = async (email: string) => (await api.db.query('select * from users where email = $1', [email])).rows[0];

// Refuses every AMR insert while armed: a failing row among the sign-in's writes, after the session
// and the refresh token.
await api.db.query(`create table refuse_amr (armed boolean);
  create function refuse_amr() returns trigger language plpgsql as $$
  begin if exists (select 1 from refuse_amr) then raise exception 'AMR refused by the test'; end if; return new; end $$;
  create trigger refuse_amr before insert on mfa_amr_claims for each row execute function refuse_amr();`);
async function withAmrRefused(fn: () => Promise<void>) {
  await api.db.query('insert into refuse_amr values (true)');
  try {
    await fn();
  } finally {
    await api.db.query('delete from refuse_amr');
  }
}

t.test('a password login writes one session, one refresh token, one AMR claim, one audit entry and last_sign_in_at', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'rows@example.com', password: 'correct-horse' } });
  t.equal(signup.status, 200);
  const before = await tableCounts();
  const userBefore = await userRow('rows@example.com');

  const res = await login({ email: 'rows@example.com', password: 'correct-horse' });
  t.equal(res.status, 200);
  t.strictSame(await tableCounts(), {
    ...before,
    sessions: before.sessions + 1,
    refresh_tokens: before.refresh_tokens + 1,
    amr: before.amr + 1,
    audit: before.audit + 1,
  });

  const sessionId = decodeJwt(res.body.access_token).session_id as string;
  const session = (await api.db.query('select * from sessions where id = $1', [sessionId])).rows[0];
  t.match(session, {
    user_id: userBefore.id,
    aal: 'aal1',
    user_agent: 'sign-in-test',
    ip: '127.0.0.1',
    refreshed_at: null,
    factor_id: null,
  });
  const tokens = (await api.db.query('select * from refresh_tokens where session_id = $1', [sessionId])).rows;
  t.match(tokens, [{ token_hash: sha256Hex(res.body.refresh_token), user_id: userBefore.id, parent_id: null, revoked: false }]);
  const amr = (await api.db.query('select authentication_method from mfa_amr_claims where session_id = $1', [sessionId])).rows;
  t.strictSame(amr, [{ authentication_method: 'password' }]);
  const audit = (
    await api.db.query(
      `select payload, ip_address from audit_log_entries where payload ->> 'action' = 'login'
    and payload ->> 'actor_id' = $1 order by created_at`,
      [userBefore.id],
    )
  ).rows;
  t.equal(audit.length, 2, "the autoconfirmed sign-up's own login, then this one");
  t.strictSame(audit.slice(1), [
    {
      payload: {
        actor_id: userBefore.id,
        actor_via_sso: false,
        actor_username: 'rows@example.com',
        action: 'login',
        log_type: 'account',
        traits: { provider: 'email' },
      },
      ip_address: '',
    },
  ]);

  const userAfter = await userRow('rows@example.com');
  t.ok(userAfter.last_sign_in_at > userBefore.last_sign_in_at, 'last_sign_in_at moves');
  t.ok(userAfter.updated_at > userBefore.updated_at, 'updated_at moves');
  t.strictSame(
    { ...userAfter, last_sign_in_at: null, updated_at: null },
    { ...userBefore, last_sign_in_at: null, updated_at: null },
    'no other column changes',
  );
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.strictSame(res.body.user, me.body, "the response's user is what GET /user (the finders) renders");
});

/** A JSON POST sent without a User-Agent header, which fetch always adds (node:http adds none). */
function postWithoutUserAgent(pathAndQuery: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(api.url + pathAndQuery, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

t.test("without a User-Agent header the session's user_agent is NULL, at sign-in and at each refresh, as the original", async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'no-agent@example.com', password: 'correct-horse' } });
  t.equal(signup.status, 200);
  const agentOf = async (sessionId: string) =>
    (await api.db.query('select user_agent, ip from sessions where id = $1', [sessionId])).rows[0];

  const bare = await postWithoutUserAgent('/token?grant_type=password', { email: 'no-agent@example.com', password: 'correct-horse' });
  t.equal(bare.status, 200);
  const sessionId = decodeJwt(bare.body.access_token).session_id as string;
  t.strictSame(await agentOf(sessionId), { user_agent: null, ip: '127.0.0.1' }, 'NULL, not an empty string');

  const named = await api.request('POST', '/token?grant_type=refresh_token', {
    body: { refresh_token: bare.body.refresh_token },
    headers: { 'user-agent': 'named-agent' },
  });
  t.equal(named.status, 200);
  t.equal((await agentOf(sessionId)).user_agent, 'named-agent', 'a refresh with one records it');
  const again = await postWithoutUserAgent('/token?grant_type=refresh_token', { refresh_token: named.body.refresh_token });
  t.equal(again.status, 200);
  t.equal((await agentOf(sessionId)).user_agent, null, 'a refresh without one clears it, as the original');

  const withAgent = await login({ email: 'no-agent@example.com', password: 'correct-horse' });
  t.equal((await agentOf(decodeJwt(withAgent.body.access_token).session_id as string)).user_agent, 'sign-in-test');
});

t.test("identities travel with their exact timestamps, whatever the session's time zone", async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'micro@example.com', password: 'correct-horse' } });
  const userId = signup.body.user.id;
  await api.db.query(
    `update identities set created_at = '2024-02-29 23:59:59.999999+00', updated_at = '2024-03-01 00:00:00.000500+00',
    last_sign_in_at = null where user_id = $1`,
    [userId],
  );
  const res = await login({ email: 'micro@example.com', password: 'correct-horse' });
  t.equal(res.status, 200);
  t.match(res.body.user.identities, [{ created_at: '2024-02-29T23:59:59.999999Z', updated_at: '2024-03-01T00:00:00.0005Z' }]);
  t.notOk('last_sign_in_at' in res.body.user.identities[0], 'a null last_sign_in_at stays absent');
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.strictSame(res.body.user.identities, me.body.identities);

  // Two AMR claims, so the order (newest first) is pinned too; compared with plain selects. The second is
  // 0.7 s into its second: its timestamp is that second, truncated as the original's Unix() truncates.
  const sessionId = decodeJwt(res.body.access_token).session_id as string;
  await api.db.query(
    `insert into mfa_amr_claims (session_id, authentication_method, updated_at)
     values ($1, 'otp', date_trunc('second', now()) + interval '5.7 seconds')`,
    [sessionId],
  );
  const client = await api.db.connect();
  try {
    await client.query("set timezone = 'Asia/Kolkata'");
    const together = await findAmrAndIdentities(client, sessionId, userId);
    // The session's AMR claims as a plain select gives them, newest first.
    const amr = (
      await client.query('select authentication_method, updated_at from mfa_amr_claims where session_id = $1 order by updated_at desc', [
        sessionId,
      ])
    ).rows.map((r) => ({ method: r.authentication_method, timestamp: Math.floor(r.updated_at.getTime() / 1000) }));
    t.strictSame(together, { amr, identities: await findIdentitiesByUser(client, userId), factors: [] });
    t.same(
      together.amr.map((a) => a.method),
      ['otp', 'password'],
    );
  } finally {
    client.release();
  }
});

t.test('a failing sign-in leaves nothing behind: not the audit entry, the session, the token, nor the upgraded hash', async (t) => {
  const legacy = bcrypt.hashSync('legacy-pass', 4);
  await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at, encrypted_password)
    values ('authenticated', 'authenticated', 'atomic@example.com', now(), $1)`,
    [legacy],
  );
  const before = await tableCounts();
  const userBefore = await userRow('atomic@example.com');
  await withAmrRefused(async () => {
    const res = await login({ email: 'atomic@example.com', password: 'legacy-pass' });
    t.match(res, { status: 500, body: { code: 500, error_code: 'unexpected_failure' } });
  });
  t.strictSame(await tableCounts(), before);
  t.strictSame(await userRow('atomic@example.com'), userBefore, 'the bcrypt hash is kept, last_sign_in_at unset');

  const res = await login({ email: 'atomic@example.com', password: 'legacy-pass' });
  t.equal(res.status, 200, 'the same login succeeds once the AMR is accepted');
  t.match((await userRow('atomic@example.com')).encrypted_password, /^\$argon2id\$/);
});

t.test("inside a caller's transaction, a failing sign-in undoes the caller's writes too (autoconfirmed sign-up)", async (t) => {
  const before = await tableCounts();
  await withAmrRefused(async () => {
    const res = await api.request('POST', '/signup', { body: { email: 'undone@example.com', password: 'correct-horse' } });
    t.match(res, { status: 500, body: { code: 500, error_code: 'unexpected_failure' } });
  });
  t.strictSame(await tableCounts(), before, 'no user, identity, session, token or user_signedup entry');
  const res = await api.request('POST', '/signup', { body: { email: 'undone@example.com', password: 'correct-horse' } });
  t.equal(res.status, 200);
  const audit = await api.db.query(
    `select payload ->> 'action' as action from audit_log_entries where payload ->> 'actor_id' = $1 order by 1`,
    [res.body.user.id],
  );
  t.strictSame(audit.rows, [{ action: 'login' }, { action: 'user_signedup' }], "the sign-up's entries, written with its session");
});
