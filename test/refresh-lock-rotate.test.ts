// lockAndRotate (src/db/refresh-rotation.ts), the refresh grant's usual path in one statement: it revokes
// the parent, inserts the child, records the refresh on the session, writes the two audit rows and
// returns the user, AMR and identities the token response needs, or writes nothing at all (user banned,
// parent revoked, session gone). Two clients running it for one parent rotate once: the second waits for
// the first's session lock and then finds the parent revoked.
import t from 'tap';
import type pg from 'pg';
import { lockSessionUser } from '../dist/db/sessions.js';
import { findPresentedToken, rotateRefreshToken } from '../dist/db/refresh-tokens.js';
import { lockAndRotate } from '../dist/db/refresh-rotation.js';
import { findIdentitiesByUser, insertIdentity } from '../dist/db/identities.js';
import { findUserById } from '../dist/db/users.js';
import { ownerOf, rotationAudit } from '../dist/server/grants/refresh-token.js';
import { insertSessionRows, useMigratedDatabase } from './helpers/db.js';

const database = useMigratedDatabase(t, 4);

const CLIENT = { userAgent: 'agent/1', ip: '10.0.0.1', request: null };

let users = 0;
/** A user (with an identity, and a full name the audit names) and a session of it whose first token is `hash`. */
async function userWithSession(hash: string) {
  const n = ++users;
  const { rows } = await database.pool.query(
    `insert into users (email, phone, raw_user_meta_data) values ($1, $2, '{"full_name":"Bo"}') returning id`,
    [`user-${n}@example.com`, String(15550000 + n)],
  );
  const userId: string = rows[0].id;
  await insertIdentity(database.pool, {
    userId,
    provider: 'email',
    providerId: userId,
    data: { email: `user-${n}@example.com`, sub: userId },
  });
  return { userId, phone: String(15550000 + n), ...(await sessionOf(userId, hash)) };
}

async function sessionOf(userId: string, hash: string) {
  const { session, token } = await insertSessionRows(database.pool, {
    userId,
    userAgent: 'first',
    ip: '127.0.0.1',
    amr: ['password', 'otp'],
    tokenHash: hash,
  });
  return { sessionId: session.id, parentId: token!.id };
}

/** lockAndRotate as the grant calls it: the audit names the user as findPresentedToken read it. */
async function rotateAtOnce(q: pg.Pool | pg.PoolClient, hash: string, childHash: string, client = CLIENT, now = new Date()) {
  const found = (await findPresentedToken(database.pool, hash))!;
  return lockAndRotate(q, {
    parentId: found.id,
    sessionId: found.session_id,
    childHash,
    client,
    audit: rotationAudit(client, ownerOf(found)),
    now,
  });
}

/** Everything a rotation may write for a session, and the audit rows of its user. */
async function state(sessionId: string, userId: string) {
  const tokens = await database.pool.query(
    'select token_hash, parent_id, revoked, updated_at from refresh_tokens where session_id = $1 order by id',
    [sessionId],
  );
  const session = await database.pool.query('select refreshed_at, updated_at, user_agent, ip from sessions where id = $1', [sessionId]);
  const audits = await database.pool.query(
    `select payload, ip_address from audit_log_entries where payload ->> 'actor_id' = $1
    order by payload ->> 'action'`,
    [userId],
  );
  return { tokens: tokens.rows, session: session.rows[0], audits: audits.rows };
}

/** Resolves once the backend `pid` waits for a lock (the session row another client holds). */
async function waitingForLock(pid: number) {
  for (let i = 0; i < 500; i++) {
    const { rows } = await database.pool.query(`select wait_event_type from pg_stat_activity where pid = $1`, [pid]);
    if (rows[0]?.wait_event_type === 'Lock') return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`backend ${pid} never waited for a lock`);
}

t.test("an active parent: rotated, recorded, audited, and the token response's user, AMR and identities returned", async (t) => {
  const { userId, phone, sessionId, parentId } = await userWithSession('hash-a0');
  const rotated = await rotateAtOnce(database.pool, 'hash-a0', 'hash-a1');
  if (!rotated) throw new Error('lockAndRotate did not rotate an active parent');

  const after = await state(sessionId, userId);
  t.strictSame(
    after.tokens.map((r) => [r.token_hash, r.parent_id, r.revoked]),
    [
      ['hash-a0', null, true],
      ['hash-a1', parentId, false],
    ],
  );
  t.equal(
    after.tokens[0].updated_at.getTime(),
    after.tokens[1].updated_at.getTime(),
    'the parent revoked at the transaction time the child got',
  );
  t.match(after.session, { user_agent: 'agent/1', ip: '10.0.0.1' });
  t.ok(
    after.session.refreshed_at instanceof Date && after.session.refreshed_at.getTime() === after.session.updated_at.getTime(),
    'refreshed_at and updated_at set together',
  );
  const payload = (action: string) => ({
    payload: { actor_id: userId, actor_via_sso: false, actor_username: phone, action, log_type: 'token', actor_name: 'Bo' },
    ip_address: '',
  });
  t.strictSame(after.audits, [payload('token_refreshed'), payload('token_revoked')], 'the two audit rows, naming the user');

  // What the token response needs, exactly as plain selects of the rows give it.
  t.strictSame(rotated.user, await findUserById(database.pool, userId));
  const amr = (
    await database.pool.query(
      'select authentication_method, updated_at from mfa_amr_claims where session_id = $1 order by updated_at desc',
      [sessionId],
    )
  ).rows.map((r) => ({ method: r.authentication_method, timestamp: Math.floor(r.updated_at.getTime() / 1000) }));
  t.strictSame(rotated.amr, amr);
  t.strictSame(
    rotated.amr.map((a) => a.method),
    ['otp', 'password'],
    'newest first',
  );
  t.strictSame(rotated.identities, await findIdentitiesByUser(database.pool, userId));
  t.equal(rotated.identities.length, 1);
});

t.test('a banned user: null, and nothing written; a ban that has run out does not stop the rotation', async (t) => {
  const { userId, sessionId } = await userWithSession('hash-c0');
  const now = new Date();
  await database.pool.query('update users set banned_until = $2 where id = $1', [userId, new Date(now.getTime() + 1000)]);
  const before = await state(sessionId, userId);
  t.equal(await rotateAtOnce(database.pool, 'hash-c0', 'hash-c1', CLIENT, now), null);
  t.strictSame(await state(sessionId, userId), before);
  // The caller's clock decides, as isBanned does: banned until a moment that is now past.
  t.ok(await rotateAtOnce(database.pool, 'hash-c0', 'hash-c1', CLIENT, new Date(now.getTime() + 1000)));
  t.equal((await state(sessionId, userId)).tokens.length, 2);
});

t.test('a revoked parent: null, and nothing written', async (t) => {
  const { userId, sessionId } = await userWithSession('hash-d0');
  t.ok(await rotateAtOnce(database.pool, 'hash-d0', 'hash-d1'));
  const before = await state(sessionId, userId);
  t.equal(await rotateAtOnce(database.pool, 'hash-d0', 'hash-d2', { userAgent: 'other', ip: '10.9.9.9', request: null }), null);
  t.strictSame(await state(sessionId, userId), before);
});

t.test('a failing statement (the child hash is taken) leaves the database as it was', async (t) => {
  const { userId, sessionId } = await userWithSession('hash-e0');
  const before = await state(sessionId, userId);
  await t.rejects(rotateAtOnce(database.pool, 'hash-e0', 'hash-d1'), { code: '23505' });
  t.strictSame(await state(sessionId, userId), before);
});

/**
 * `holder` runs `hold` in a transaction that keeps the session row locked; meanwhile a second client runs
 * lockAndRotate for the same parent, which must wait for that lock (its snapshot taken before `hold`
 * commits). Returns the second client's result.
 */
async function racing(hash: string, childHash: string, hold: (c: pg.PoolClient) => Promise<unknown>) {
  const holder = await database.pool.connect();
  const waiter = await database.pool.connect();
  try {
    const pid: number = (await waiter.query('select pg_backend_pid() as pid')).rows[0].pid;
    await holder.query('begin');
    await hold(holder);
    const second = rotateAtOnce(waiter, hash, childHash, { userAgent: 'second', ip: '10.0.0.2', request: null });
    await waitingForLock(pid);
    await holder.query('commit');
    return await second;
  } catch (err) {
    await holder.query('rollback'); // not back to the pool inside a transaction, holding the lock
    throw err;
  } finally {
    holder.release();
    waiter.release();
  }
}

t.test('two clients run the statement for one parent: the one that waited for the lock rotates nothing', async (t) => {
  const { userId, sessionId } = await userWithSession('hash-f0');
  const second = await racing('hash-f0', 'hash-f2', async (c) => t.ok(await rotateAtOnce(c, 'hash-f0', 'hash-f1')));
  t.equal(second, null);
  const after = await state(sessionId, userId);
  t.strictSame(
    after.tokens.map((r) => [r.token_hash, r.revoked]),
    [
      ['hash-f0', true],
      ['hash-f1', false],
    ],
    'one child',
  );
  t.match(after.session, { user_agent: 'agent/1', ip: '10.0.0.1' }, 'the session records the winner only');
  t.strictSame(
    after.audits.map((r) => r.payload.action),
    ['token_refreshed', 'token_revoked'],
    'one rotation audited once',
  );
});

t.test('the transactional path holds the lock and rotates: the statement waiting for it rotates nothing', async (t) => {
  const { userId, sessionId, parentId } = await userWithSession('hash-g0');
  const second = await racing('hash-g0', 'hash-g2', async (c) => {
    const { user } = (await lockSessionUser(c, sessionId))!;
    t.ok(await rotateRefreshToken(c, parentId, 'hash-g1', CLIENT, rotationAudit(CLIENT, user)));
  });
  t.equal(second, null);
  const after = await state(sessionId, userId);
  t.strictSame(
    after.tokens.map((r) => [r.token_hash, r.revoked]),
    [
      ['hash-g0', true],
      ['hash-g1', false],
    ],
  );
  t.equal(after.audits.length, 2);
});

t.test('the session is deleted (a logout) while the statement waits: it writes nothing', async (t) => {
  const { userId, sessionId } = await userWithSession('hash-h0');
  const second = await racing('hash-h0', 'hash-h1', (c) => c.query('delete from sessions where id = $1', [sessionId]));
  t.equal(second, null);
  const after = await state(sessionId, userId);
  t.strictSame(after.tokens, []);
  t.equal(after.session, undefined);
  t.strictSame(after.audits, [], 'no audit row');
});
