// rotateRefreshToken (src/db/refresh-tokens.ts) writes the rotation and its audit rows in one statement:
// all of it when the parent is active, none of it when the parent was already revoked or the statement
// fails. The grant relies on "null means nothing written" under its session lock.
import t from 'tap';
import { rotateRefreshToken } from '../dist/db/refresh-tokens.js';
import { findUserById } from '../dist/db/users.js';
import { rotationAudit } from '../dist/server/grants/refresh-token.js';
import { insertSessionRows, useMigratedDatabase } from './helpers/db.js';

const database = useMigratedDatabase(t);

const CLIENT = { userAgent: 'agent/1', ip: '10.0.0.1', request: null };

/** A user with a session whose first token is `hash`; the user row as the grant sees it. */
let phones = 15550000;
async function sessionWithToken(email: string, hash: string) {
  const { rows } = await database.pool.query(
    `insert into users (email, phone, raw_user_meta_data) values ($1, $2, '{"full_name":"Bo"}') returning id`,
    [email, String(++phones)],
  );
  const user = (await findUserById(database.pool, rows[0].id))!;
  const { session, token } = await insertSessionRows(database.pool, {
    userId: user.id,
    userAgent: 'first',
    ip: '127.0.0.1',
    tokenHash: hash,
  });
  const parent = token!;
  return { user, session, parent };
}

/** Everything the rotation may write, to compare before and after. */
async function state(sessionId: string) {
  const tokens = await database.pool.query(
    'select id, token_hash, parent_id, revoked, updated_at from refresh_tokens where session_id = $1 order by id',
    [sessionId],
  );
  const session = await database.pool.query('select refreshed_at, updated_at, user_agent, ip from sessions where id = $1', [sessionId]);
  const audits = await database.pool.query('select payload, ip_address from audit_log_entries order by created_at, id');
  return { tokens: tokens.rows, session: session.rows[0], audits: audits.rows };
}

t.test('an active parent: child inserted, parent revoked, session touched, the two audit rows written', async (t) => {
  const { user, session, parent } = await sessionWithToken('rotate@example.com', 'hash-a0');
  const before = await state(session.id);
  const child = await rotateRefreshToken(database.pool, parent.id, 'hash-a1', CLIENT, rotationAudit(CLIENT, user));
  t.match(child, { token_hash: 'hash-a1', parent_id: parent.id, session_id: session.id, user_id: user.id, revoked: false });
  const after = await state(session.id);
  t.strictSame(
    after.tokens.map((r) => [r.token_hash, r.revoked]),
    [
      ['hash-a0', true],
      ['hash-a1', false],
    ],
  );
  t.match(after.session, { user_agent: 'agent/1', ip: '10.0.0.1' });
  t.ok(after.session.refreshed_at instanceof Date);
  const written = after.audits.slice(before.audits.length);
  const payload = (action: string) => ({
    payload: { actor_id: user.id, actor_via_sso: false, actor_username: user.phone, action, log_type: 'token', actor_name: 'Bo' },
    ip_address: '',
  });
  t.same(written.map((r) => r.payload.action).sort(), ['token_refreshed', 'token_revoked']);
  t.strictSame(
    written.sort((a, b) => a.payload.action.localeCompare(b.payload.action)),
    [payload('token_refreshed'), payload('token_revoked')],
    "the grant's two payloads, with no ip",
  );
});

t.test('an already revoked parent: null, and nothing written — no token, no session change, no audit row', async (t) => {
  const { user, session, parent } = await sessionWithToken('revoked@example.com', 'hash-b0');
  t.ok(await rotateRefreshToken(database.pool, parent.id, 'hash-b1', CLIENT, rotationAudit(CLIENT, user)));
  const before = await state(session.id);
  t.equal(
    await rotateRefreshToken(database.pool, parent.id, 'hash-b2', { userAgent: 'other', ip: '10.9.9.9' }, rotationAudit(CLIENT, user)),
    null,
  );
  t.strictSame(await state(session.id), before);
});

t.test('a failing rotation (the child hash is taken) leaves the database as it was', async (t) => {
  const { user, session, parent } = await sessionWithToken('fails@example.com', 'hash-c0');
  const before = await state(session.id);
  await t.rejects(rotateRefreshToken(database.pool, parent.id, 'hash-a1', CLIENT, rotationAudit(CLIENT, user)), { code: '23505' });
  t.strictSame(await state(session.id), before);
});
