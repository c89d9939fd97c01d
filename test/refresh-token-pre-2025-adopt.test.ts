// Adopting a database of the original from before its v2.171 (April 2025), which issued refresh tokens
// as 16 random bytes in base64url, 22 characters, instead of today's 12 (docs/adopting-gotrue.md). Its
// clients hold such tokens, and adoption hashes them like any other: they must keep refreshing, and a
// client that lost the answer of its first refresh here is answered as for any previous token.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { BOB, createOriginalDatabase } from './helpers/gotrue-db.js';

const SESSION = 'e3e3e3e3-e3e3-43e3-83e3-e3e3e3e3e3e3';
/** The base64url of 16 random bytes, as the original's SecureToken made them; one revoked, its child active. */
const OLD = randomBytes(16).toString('base64url');
const ACTIVE = randomBytes(16).toString('base64url');

t.test("a refresh token in the original's format before v2.171 keeps refreshing after adoption", async (t) => {
  t.equal(ACTIVE.length, 22);
  const original = await createOriginalDatabase(async (c) => {
    await c.query(
      `insert into auth.sessions (id, user_id, created_at, updated_at, aal, refreshed_at, user_agent, ip)
       values ($1, $2, now() - interval '1 day', now(), 'aal1', now() at time zone 'UTC' - interval '1 hour', 'old-app', '203.0.113.9')`,
      [SESSION, BOB.id],
    );
    await c.query(
      `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id) values
       ('00000000-0000-0000-0000-000000000000', $1, $3, true, now() - interval '1 day', now() - interval '1 hour', null, $4),
       ('00000000-0000-0000-0000-000000000000', $2, $3, false, now() - interval '1 hour', now() - interval '1 hour', $1, $4)`,
      [OLD, ACTIVE, BOB.id, SESSION],
    );
  });
  t.teardown(() => original.drop());
  const api = await startTestService({ DATABASE_URL: original.url, AUTH_SITE_URL: 'http://localhost:3000' });
  t.teardown(() => api.stop());
  const refresh = (token: string) => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: token } });

  const first = await refresh(ACTIVE);
  t.equal(first.status, 200, 'the token the client holds refreshes');
  if (first.status !== 200) return;
  t.equal(first.body.user.id, BOB.id);
  t.equal(decodeJwt(first.body.access_token).session_id, SESSION, 'in its session');
  t.match(first.body.refresh_token, /^[a-z2-7]{12}$/, 'its successor in the format issued here');

  const again = await refresh(ACTIVE);
  t.equal(again.status, 200, 'presented again, as by a client that lost the answer');
  t.equal(again.body.refresh_token, first.body.refresh_token, 'it gets the same successor');
  t.equal((await refresh(first.body.refresh_token)).status, 200, 'which refreshes in turn');

  const unknown = await refresh(randomBytes(16).toString('base64url'));
  t.equal(unknown.status, 400);
  t.equal(unknown.body.error_code, 'refresh_token_not_found', 'a token of that shape no session holds is unknown, not malformed');
  const malformed = await refresh(`${ACTIVE.slice(0, 21)}=`);
  t.equal(malformed.body.error_code, 'validation_failed', 'a text of that length outside base64url is still malformed');

  const reused = await refresh(OLD);
  t.equal(reused.status, 400);
  t.equal(reused.body.error_code, 'refresh_token_already_used', 'the revoked parent is a reuse, as for any older token');
});
