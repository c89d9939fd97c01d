// src/db/user-session.ts, what bearer authentication reads: the user row exactly as findUserById gives
// it, the session as findSession finds it, and identities exactly as findIdentitiesByUser returns them
// (keys, order, values, Dates to the millisecond and the microseconds they keep), so userJson's output is
// byte-identical.
import t from 'tap';
import { findUserById } from '../dist/db/users.js';
import { findSession } from '../dist/db/sessions.js';
import { findIdentitiesByUser } from '../dist/db/identities.js';
import { findUserSession, findUserSessionIdentities } from '../dist/db/user-session.js';
import { userJson } from '../dist/server/users/user-json.js';
import { insertSessionRows, useMigratedDatabase } from './helpers/db.js';

const database = useMigratedDatabase(t);

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function newUser(email: string): Promise<string> {
  const { rows } = await database.pool.query(
    `insert into users (email, raw_user_meta_data) values ($1, '{"full_name":"Ann"}') returning id`,
    [email],
  );
  return rows[0].id;
}

/** Identity timestamps with fractions of several lengths (Postgres drops trailing zeros), sub-millisecond ones included. */
const STAMPS = [
  '2024-03-01 10:00:00.29+00',
  '2024-03-01 10:00:00.057+00',
  '2024-03-01 10:00:00.999999+00',
  '2024-03-01 10:00:00.000001+00',
  '2024-03-01 10:00:01+00',
  '2024-03-01 10:00:00.123456+00',
];

async function insertIdentity(
  userId: string,
  provider: string,
  createdAt: string,
  data: unknown,
  lastSignIn: string | null,
): Promise<void> {
  await database.pool.query(
    `insert into identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
                    values ($1, $2, $3, $4, $5, $6, $6::timestamptz + interval '0.000333 s')`,
    [`${provider}-${userId}`, userId, data, provider, lastSignIn, createdAt],
  );
}

const shape = (rows: object[]) => rows.map((r) => Object.entries(r).map(([k, v]) => [k, v instanceof Date ? `Date ${v.getTime()}` : v]));

t.test('identities come out exactly as findIdentitiesByUser returns them', async (t) => {
  const userId = await newUser('ids@example.com');
  const data = [{ email: 'IDS@example.com', sub: 'x', nested: { b: [1, 2.5, null], a: 'ü' } }, {}, { n: 1.0, big: 12345678901234567000 }];
  for (const [i, stamp] of STAMPS.entries()) {
    await insertIdentity(userId, `p${i}`, stamp, data[i % data.length], i % 2 ? null : STAMPS[(i + 1) % STAMPS.length]);
  }
  const session = (await insertSessionRows(database.pool, { userId, userAgent: 'test', ip: '127.0.0.1' })).session;
  const expected = await findIdentitiesByUser(database.pool, userId);
  const found = await findUserSessionIdentities(database.pool, userId, session.id);
  t.ok(found);
  t.strictSame(shape(found!.identities), shape(expected), 'same keys in the same order, same values, same Date instants');
  t.ok(found!.identities.every((i) => i.created_at instanceof Date && i.updated_at instanceof Date));
  const user = await findUserById(database.pool, userId);
  t.strictSame(shape([found!.user]), shape([user!]), 'the user row as findUserById returns it, nothing added');
  t.equal(JSON.stringify(userJson(found!.user, found!.identities)), JSON.stringify(userJson(user!, expected)), 'byte-identical user JSON');
  // Every stored digit reaches the JSON, in the original's shape (docs/users-and-audit.md#user-json).
  const { rows: stored } = await database.pool.query<{ created: string; updated: string }>(
    `select regexp_replace(to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\\.?0*$', '') || 'Z' as created,
            regexp_replace(to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\\.?0*$', '') || 'Z' as updated
     from identities where user_id = $1 order by created_at`,
    [userId],
  );
  const json = userJson(found!.user, found!.identities) as { identities: Array<{ created_at: string; updated_at: string }> };
  t.strictSame(
    json.identities.map((i) => [i.created_at, i.updated_at]),
    stored.map((r) => [r.created, r.updated]),
  );
  t.strictSame(
    json.identities.slice(0, 2).map((i) => [i.created_at, i.updated_at]),
    [
      ['2024-03-01T10:00:00.000001Z', '2024-03-01T10:00:00.000334Z'],
      ['2024-03-01T10:00:00.057Z', '2024-03-01T10:00:00.057333Z'],
    ],
    'oldest first, to the microsecond',
  );
  // Members in the original's order (its Identity struct); the optional ones absent when unset.
  const ORDER = ['identity_id', 'id', 'user_id', 'identity_data', 'provider', 'last_sign_in_at', 'created_at', 'updated_at', 'email'];
  for (const identity of json.identities) {
    t.strictSame(
      Object.keys(identity),
      ORDER.filter((k) => k in identity),
    );
  }
  t.ok(
    json.identities.some((i) => 'identity_data' in i && 'last_sign_in_at' in i && 'email' in i),
    'every optional member seen',
  );

  // In another session time zone the text carries another offset; the instants are the same.
  const client = await database.pool.connect();
  try {
    await client.query("set time zone 'Asia/Kathmandu'");
    const there = await findUserSessionIdentities(client, userId, session.id);
    t.strictSame(shape(there!.identities), shape(expected));
  } finally {
    await client.query('reset time zone');
    client.release();
  }
});

t.test('a user without identities has an empty list; the session is looked up by id only', async (t) => {
  const userId = await newUser('none@example.com');
  const other = await newUser('other@example.com');
  const session = (await insertSessionRows(database.pool, { userId, userAgent: 'test', ip: '127.0.0.1' })).session;
  const othersSession = (await insertSessionRows(database.pool, { userId: other, userAgent: 'test', ip: '127.0.0.1' })).session;

  const found = await findUserSessionIdentities(database.pool, userId, session.id);
  t.strictSame(found!.identities, []);
  t.strictSame(found!.session, { id: session.id });
  t.strictSame(await findUserSession(database.pool, userId, session.id), {
    user: found!.user,
    session: { id: session.id },
    sessionEnded: null,
  });
  // findSession never checked the session's owner, so neither does this.
  t.strictSame((await findUserSession(database.pool, userId, othersSession.id))!.session, {
    id: (await findSession(database.pool, othersSession.id))!.id,
  });
  t.equal((await findUserSession(database.pool, userId, session.id.toUpperCase()))!.session!.id, session.id, 'the stored id, lower case');
  t.equal((await findUserSession(database.pool, userId, UNKNOWN))!.session, null);
  t.equal((await findUserSession(database.pool, userId, null))!.session, null, 'null: no session looked up');
  t.equal(await findUserSession(database.pool, UNKNOWN, session.id), null);
  t.equal(await findUserSessionIdentities(database.pool, UNKNOWN, null), null);
  // Without a session policy only not_after ends a session, in the same statement.
  await database.pool.query(`update sessions set not_after = now() - interval '1 second' where id = $1`, [session.id]);
  t.equal((await findUserSession(database.pool, userId, session.id))!.sessionEnded, 'expired', 'past not_after');
  t.equal((await findUserSessionIdentities(database.pool, userId, session.id))!.sessionEnded, 'expired', 'with the identities too');
});
