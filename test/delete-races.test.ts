// Concurrent deletions of one thing, and updates racing them, in a forced interleaving: the test holds a
// row lock until every request has made its own look-ups and waits on it, then lets them go. Each must then
// answer as if made after the others (docs/users-and-audit.md#deletion, docs/mfa.md): one removes, the rest
// answer as a repeat does, and only what a sequential run writes is written (audit entries, hashes).
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { signUp } from './helpers/accounts.js';
import { verifiedTotp } from './helpers/mfa.js';
import { holdLock, holdUserLock, inOrderBehind } from './helpers/row-lock.js';
import { obfuscate } from '../dist/db/user-deletion.js';

const RACERS = 3;

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const admin = await adminToken();

/** Starts RACERS copies of `send` once the test holds the user's row, releases it when all wait on a lock. */
async function racing(userId: string, send: () => Promise<Reply>): Promise<Reply[]> {
  const lock = await holdUserLock(api.db, userId);
  const replies: Promise<Reply>[] = [];
  try {
    for (let i = 0; i < RACERS; i++) replies.push(send());
    await lock.waiters(RACERS);
  } finally {
    await lock.release();
  }
  return Promise.all(replies);
}

/** Answers as [status, body], in an order independent of which request won. */
const unordered = (answers: unknown[][]) => answers.map((a) => JSON.stringify(a)).sort();
const answersOf = (replies: Reply[]) => unordered(replies.map((r) => [r.status, r.body]));

async function auditEntries(action: string, key: string, value: string): Promise<any[]> {
  const { rows } = await api.db.query(
    `select payload from audit_log_entries where payload ->> 'action' = $1 and payload -> 'traits' ->> $2 = $3`,
    [action, key, value],
  );
  return rows.map((r: any) => r.payload);
}

const USER_NOT_FOUND = [404, { code: 404, error_code: 'user_not_found', msg: 'User not found' }];
const FACTOR_NOT_FOUND = [404, { code: 404, error_code: 'mfa_factor_not_found', msg: 'Factor not found' }];

t.test('concurrent hard deletes of one user: one 200 and one user_deleted entry, the others 404 as a repeat', async (t) => {
  const { user } = await signUp(api);
  const replies = await racing(user.id, () => api.request('DELETE', `/admin/users/${user.id}`, { token: admin }));
  t.strictSame(answersOf(replies), unordered([[200, {}], USER_NOT_FOUND, USER_NOT_FOUND]));
  t.equal((await auditEntries('user_deleted', 'user_id', user.id)).length, 1, 'audited once');
  const { rows } = await api.db.query('select count(*)::int as n from users where id = $1', [user.id]);
  t.equal(rows[0].n, 0);
});

t.test('concurrent soft deletes of one user: anonymised once, the others the no-op of a repeat', async (t) => {
  const { user } = await signUp(api);
  const {
    rows: [identity],
  } = await api.db.query('select provider, provider_id from identities where user_id = $1', [user.id]);
  const replies = await racing(user.id, () =>
    api.request('DELETE', `/admin/users/${user.id}`, { token: admin, body: { should_soft_delete: true } }),
  );
  t.strictSame(
    replies.map((r) => [r.status, r.body]),
    Array.from({ length: RACERS }, () => [200, {}]),
  );
  const hashedEmail = obfuscate(user.id, user.email);
  const {
    rows: [row],
  } = await api.db.query(
    'select u.email, i.provider_id from users u join identities i on i.user_id = u.id where u.id = $1 and i.provider = $2',
    [user.id, identity.provider],
  );
  t.equal(row.email, hashedEmail, 'the email hashed once');
  t.equal(row.provider_id, obfuscate(user.id, `${identity.provider}:${identity.provider_id}`), 'the identity hashed once');
  // As sequential repeats: each is audited (the original audits the no-op too), the later ones with the hash.
  const entries = await auditEntries('user_deleted', 'user_id', user.id);
  t.strictSame(entries.map((p) => p.traits.user_email).sort(), [user.email, hashedEmail, hashedEmail].sort());
});

t.test('concurrent unenrolments of one factor: one 200, one entry, the others 404 as a repeat', async (t) => {
  const { access_token } = await signUp(api);
  const { factor, session } = await verifiedTotp(api, access_token);
  const userId = session.user.id;
  const replies = await racing(userId, () => api.request('DELETE', `/factors/${factor.id}`, { token: session.access_token }));
  t.strictSame(answersOf(replies), unordered([[200, { id: factor.id }], FACTOR_NOT_FOUND, FACTOR_NOT_FOUND]));
  t.equal((await auditEntries('factor_unenrolled', 'factor_id', factor.id)).length, 1, 'audited once');
});

t.test("concurrent admin deletions of one user's factor: one 200, one entry, the others 404 as a repeat", async (t) => {
  const { access_token } = await signUp(api);
  const { factor, session } = await verifiedTotp(api, access_token);
  const userId = session.user.id;
  const replies = await racing(userId, () => api.request('DELETE', `/admin/users/${userId}/factors/${factor.id}`, { token: admin }));
  const ok = replies.filter((r) => r.status === 200);
  t.equal(ok.length, 1, 'one deletes');
  t.match(ok[0]?.body, { id: factor.id, status: 'verified' });
  t.strictSame(
    replies.filter((r) => r.status !== 200).map((r) => [r.status, r.body]),
    [FACTOR_NOT_FOUND, FACTOR_NOT_FOUND],
  );
  t.equal((await auditEntries('factor_deleted', 'factor_id', factor.id)).length, 1, 'audited once');
});

t.test('admin updates of a factor an admin deletes meanwhile: the 404 of a missing factor, not a 500, and no entry', async (t) => {
  const { user } = await signUp(api);
  const {
    rows: [factor],
  } = await api.db.query(
    `insert into mfa_factors (user_id, friendly_name, factor_type, phone) values ($1, 'phone', 'phone', '15550001111') returning id`,
    [user.id],
  );
  const path = `/admin/users/${user.id}/factors/${factor.id}`;
  // Each update found the factor before the deletion commits; the test holds the factor's row so that
  // all three are under way, and the deletion is first to take it.
  const held = await holdLock(api.db, 'select 1 from mfa_factors where id = $1 for update', [factor.id]);
  const [deleted, renamed, renumbered] = await inOrderBehind(held, [
    () => api.request('DELETE', path, { token: admin }),
    () => api.request('PUT', path, { token: admin, body: { friendly_name: 'x' } }),
    () => api.request('PUT', path, { token: admin, body: { phone: '+15550002222' } }),
  ]);
  t.match([deleted.status, deleted.body], [200, { id: factor.id }]);
  t.strictSame([renamed.status, renamed.body], FACTOR_NOT_FOUND, 'renamed');
  t.strictSame([renumbered.status, renumbered.body], FACTOR_NOT_FOUND, 'renumbered');
  t.equal((await auditEntries('factor_updated', 'factor_id', factor.id)).length, 0, 'no update audited');
});

t.test('a PKCE code exchanged while an admin deletes its user: no deadlock, no 500, and no session for a deleted user', async (t) => {
  for (const soft of [false, true]) {
    const { user } = await signUp(api);
    const verifier = 'v'.repeat(43);
    const {
      rows: [flow],
    } = await api.db.query(
      `insert into flow_state (user_id, auth_code, code_challenge_method, code_challenge, provider_type, authentication_method, auth_code_issued_at)
       values ($1, gen_random_uuid()::text, 'plain', $2, 'email', 'magiclink', now()) returning auth_code`,
      [user.id, verifier],
    );
    // The deletion takes the user's row first; the exchange, having locked its flow, waits for the row behind it.
    const [deleted, exchanged] = await inOrderBehind(await holdUserLock(api.db, user.id), [
      () => api.request('DELETE', `/admin/users/${user.id}`, { token: admin, body: { should_soft_delete: soft } }),
      () => api.request('POST', '/token?grant_type=pkce', { body: { auth_code: flow.auth_code, code_verifier: verifier } }),
    ]);
    const label = soft ? 'soft' : 'hard';
    t.equal(deleted.status, 200, `${label}: the deletion succeeds`);
    if (soft) t.ok(exchanged.status < 500, `soft: refused as a soft-deleted user's sign-in is (${exchanged.status})`);
    else t.strictSame([exchanged.status, exchanged.body.error_code], [404, 'flow_state_not_found'], 'hard: the flow went with its user');
    const { rows } = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [user.id]);
    t.equal(rows[0].n, 0, `${label}: no session for the deleted user`);
  }
});
