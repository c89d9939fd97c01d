// Concurrent writes of /admin/custom-providers answer as the same requests one after another would: creates
// never take the number of providers past CUSTOM_OAUTH_MAX_PROVIDERS (the excess is refused as a sequential
// create past the quota is), and concurrent PUTs changing different fields each keep their change. The
// interleaving is forced, not hoped for: the test holds a lock that lets every request's reads through but
// makes its write wait, starts the requests, and lets them go only once all of them wait on a lock
// (pg_stat_activity). Without serialization every request is then past its reads and about to write.
import t from 'tap';
import type pg from 'pg';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { holdLock, inOrderBehind } from './helpers/row-lock.js';

const LIMIT = 3;
const CREATES = 8;

const open = { AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true', AUTH_CUSTOM_OAUTH_EXTERNAL_URL: 'https://app.example.test/auth/v1' };
// Every racing request holds a connection while it waits on the lock: room for all of them.
const pool = { AUTH_DB_MAX_POOL_SIZE: String(3 * CREATES) };
const limited = await startTestService({ ...open, ...pool, AUTH_CUSTOM_OAUTH_MAX_PROVIDERS: String(LIMIT) });
const api = await startTestService({ ...open, ...pool });
const token = await adminToken();
t.teardown(async () => {
  await Promise.all([limited.stop(), api.stop()]);
});

const oauth2Body = (identifier: string, over: Record<string, unknown> = {}) => ({
  provider_type: 'oauth2',
  identifier,
  name: 'Acme OAuth',
  client_id: 'oa-client',
  client_secret: 'oa-secret',
  authorization_url: 'http://127.0.0.1:9/auth',
  token_url: 'http://127.0.0.1:9/token',
  userinfo_url: 'http://127.0.0.1:9/me',
  ...over,
});

/** `requests` queued in order behind the lock `sql` takes in a transaction of the test's own, then let go. */
const behindLock = async (db: pg.Pool, sql: string, params: unknown[], requests: Array<() => Promise<Reply>>) =>
  inOrderBehind(await holdLock(db, sql, params), requests);

t.test('concurrent creates never exceed CUSTOM_OAUTH_MAX_PROVIDERS; the excess is refused as past the quota', async (t) => {
  // SHARE ROW EXCLUSIVE lets the count and the identifier look-up through but makes the insert wait: without
  // serialization every create has counted none before any of them inserts.
  const replies = await behindLock(
    limited.db,
    'lock table custom_oauth_providers in share row exclusive mode',
    [],
    Array.from(
      { length: CREATES },
      (_, i) => () => limited.request('POST', '/admin/custom-providers', { token, body: oauth2Body(`custom:race-${i}`) }),
    ),
  );
  const { rows } = await limited.db.query('select count(*)::int as n from custom_oauth_providers');
  t.equal(rows[0].n, LIMIT, 'exactly the quota of providers exist');
  const created = replies.filter((r) => r.status === 201);
  const refused = replies.filter((r) => r.status !== 201);
  t.equal(created.length, LIMIT, replies.map((r) => r.status).join(' '));
  for (const r of refused) {
    t.same(r.body, { code: 400, error_code: 'over_custom_provider_quota', msg: 'Maximum number of custom OAuth/OIDC providers reached' });
  }
  // One at a time afterwards: still the documented refusal.
  const after = await limited.request('POST', '/admin/custom-providers', { token, body: oauth2Body('custom:after') });
  t.equal(after.status, 400);
  t.equal(after.body.error_code, 'over_custom_provider_quota');
});

t.test('concurrent PUTs changing different fields each keep their change', async (t) => {
  const identifier = 'custom:race-update';
  const created = await api.request('POST', '/admin/custom-providers', {
    token,
    body: oauth2Body(identifier, { name: 'Before', scopes: ['profile'], enabled: true }),
  });
  t.equal(created.status, 201, created.text);
  const path = `/admin/custom-providers/${identifier}`;
  // The provider's row lock lets each PUT read the row but makes its write wait: without serialization every
  // PUT has merged its change onto the same row before any of them writes it back.
  const [renamed, rescoped, disabled] = await behindLock(
    api.db,
    'select 1 from custom_oauth_providers where identifier = $1 for update',
    [identifier],
    [
      () => api.request('PUT', path, { token, body: { name: 'After' } }),
      () => api.request('PUT', path, { token, body: { scopes: ['email', 'openid'] } }),
      () => api.request('PUT', path, { token, body: { enabled: false } }),
    ],
  );
  for (const r of [renamed, rescoped, disabled]) t.equal(r.status, 200, r.text);
  // Each answer shows its own change. The first to write goes first; the others, finding the row changed
  // since they merged, merge again onto the newer one, in whatever order they come back.
  t.match(renamed.body, { name: 'After' });
  t.match(rescoped.body, { scopes: ['email', 'openid'] });
  t.match(disabled.body, { enabled: false });
  const read = await api.request('GET', path, { token });
  t.match(read.body, { name: 'After', scopes: ['email', 'openid'], enabled: false });
  const { rows } = await api.db.query('select name, scopes, enabled from custom_oauth_providers where identifier = $1', [identifier]);
  t.same(rows, [{ name: 'After', scopes: ['email', 'openid'], enabled: false }]);
});

t.test('a PUT queued behind a DELETE of its provider answers 404 custom_provider_not_found', async (t) => {
  const identifier = 'custom:race-delete';
  t.equal((await api.request('POST', '/admin/custom-providers', { token, body: oauth2Body(identifier) })).status, 201);
  const path = `/admin/custom-providers/${identifier}`;
  const [deleted, changed] = await behindLock(
    api.db,
    'select 1 from custom_oauth_providers where identifier = $1 for update',
    [identifier],
    [() => api.request('DELETE', path, { token }), () => api.request('PUT', path, { token, body: { name: 'Gone' } })],
  );
  t.equal(deleted.status, 204, deleted.text);
  t.equal(changed.status, 404, changed.text);
  t.equal(changed.body.error_code, 'custom_provider_not_found');
  const { rows } = await api.db.query('select 1 from custom_oauth_providers where identifier = $1', [identifier]);
  t.equal(rows.length, 0);
});
