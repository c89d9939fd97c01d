// Adopting a GoTrue database that ran with SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2
// (docs/adopting-gotrue.md): its v2 sessions keep their signing key and counter, so the tokens clients
// hold, minted in the original's format, keep refreshing: a key the original stored in clear (and sealed
// here at the next refresh) and one it sealed with its SECURITY_DB_ENCRYPTION key.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { ALICE, ORIGINAL_KEY, createOriginalDatabase, sealLikeOriginal, withClient } from './helpers/gotrue-db.js';
import { decodeV2, mintV2 } from './helpers/refresh-v2.js';

const CLEAR = { id: 'c1c1c1c1-c1c1-41c1-81c1-c1c1c1c1c1c1', key: randomBytes(32), counter: 41 };
const SEALED = { id: 'd2d2d2d2-d2d2-42d2-82d2-d2d2d2d2d2d2', key: randomBytes(32), counter: 3 };

t.test("the original's v2 sessions keep refreshing after adoption, from the token the client holds", async (t) => {
  const original = await createOriginalDatabase(async (c) => {
    await c.query(
      `insert into auth.sessions (id, user_id, created_at, updated_at, aal, refreshed_at, user_agent, ip, refresh_token_hmac_key, refresh_token_counter)
       values ($1, $3, now() - interval '1 day', now(), 'aal1', now() at time zone 'UTC' - interval '1 hour', 'v2-app', '203.0.113.9', $2, $4),
              ($5, $3, now() - interval '1 day', now(), 'aal1', now() at time zone 'UTC' - interval '1 hour', 'v2-app', '203.0.113.9', $6, $7)`,
      [
        CLEAR.id,
        CLEAR.key.toString('base64url'),
        ALICE.id,
        CLEAR.counter,
        SEALED.id,
        sealLikeOriginal(SEALED.id, SEALED.key.toString('base64url')),
        SEALED.counter,
      ],
    );
    await c.query(
      `insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method)
       values (gen_random_uuid(), $1, now(), now(), 'password'), (gen_random_uuid(), $2, now(), now(), 'password')`,
      [CLEAR.id, SEALED.id],
    );
  });
  t.teardown(() => original.drop());
  const api = await startTestService({
    DATABASE_URL: original.url,
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `${ORIGINAL_KEY.id}:${ORIGINAL_KEY.key}`,
  });
  t.teardown(() => api.stop());
  t.ok(
    api.logs().some((l) => String(l.msg).includes('v2 refresh-token keys kept for migration 00013: 2 rows')),
    'the adoption says what it kept',
  );
  const stored = await withClient(
    original.url,
    async (c) =>
      (
        await c.query(
          'select id, refresh_token_hmac_key as key, refresh_token_counter::int as counter from auth.sessions where id = any($1) order by id',
          [[CLEAR.id, SEALED.id]],
        )
      ).rows,
  );
  t.strictSame(
    stored.map((r) => r.counter),
    [CLEAR.counter, SEALED.counter],
    'the counters are carried over',
  );
  t.equal(stored[0].key, CLEAR.key.toString('base64url'), 'the key in clear, as it was');
  t.equal(JSON.parse(stored[1].key).key_id, ORIGINAL_KEY.id, "the original's envelope, as it was");
  const tables = await withClient(
    original.url,
    async (c) => (await c.query(`select to_regclass('auth.gotrue_session_refresh_keys') as t`)).rows[0].t,
  );
  t.equal(tables, null, 'the table kept aside is gone');

  for (const s of [CLEAR, SEALED]) {
    const res = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: mintV2(s.id, s.counter, s.key) } });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.id, ALICE.id);
    t.equal(decodeJwt(res.body.access_token).session_id, s.id);
    const next = decodeV2(res.body.refresh_token);
    t.strictSame({ sessionId: next.sessionId, counter: next.counter }, { sessionId: s.id, counter: s.counter + 1 });
    t.equal(res.body.refresh_token, mintV2(s.id, s.counter + 1, s.key), "signed with the session's own key");
  }
  const resealed = await withClient(
    original.url,
    async (c) => (await c.query('select refresh_token_hmac_key as key from auth.sessions where id = $1', [CLEAR.id])).rows[0].key,
  );
  t.match(JSON.parse(resealed), { alg: 'aes-gcm-hkdf' }, 'the key in clear is sealed at its first refresh');
});
