// An SSO provider's resource_id through the admin API, compared with the original (internal/api/ssoadmin.go,
// internal/models/sso.go): "" is a resource id it stores and answers, a PUT's "" clears it, and the listing's
// resource_id_prefix is a LIKE pattern, its `%`, `_` and `\` keeping their meaning. An original database's
// provider with "" keeps it when adopted.
import t, { type Test } from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { createOriginalDatabase } from './helpers/gotrue-db.js';
import { TestIdp, spPrivateKey } from './helpers/saml-idp.js';

const SAML = { AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey() };
const api = await startTestService(SAML);
t.teardown(() => api.stop());
const token = await adminToken();
const admin = (method: string, path: string, body?: unknown) => api.request(method, path, { token, ...(body ? { body } : {}) });
const stored = async (id: string) => (await api.db.query('select resource_id from sso_providers where id = $1', [id])).rows[0]?.resource_id;

/** A new provider with this resource_id (absent when undefined), deleted when the test ends. */
async function provider(t: Test, resourceId?: string | null) {
  const made = await admin('POST', '/admin/sso/providers', {
    type: 'saml',
    metadata_xml: new TestIdp().metadata(),
    ...(resourceId === undefined ? {} : { resource_id: resourceId }),
  });
  if (made.status !== 201) throw new Error(`create ${made.status} ${made.text}`);
  t.teardown(() => admin('DELETE', `/admin/sso/providers/${made.body.id}`));
  return made;
}

t.test('resource_id "" is stored and answered as given, and names the provider as resource_', async (t) => {
  const made = await provider(t, '');
  t.strictSame(Object.keys(made.body), ['id', 'resource_id', 'disabled', 'saml', 'domains', 'created_at', 'updated_at']);
  t.equal(made.body.resource_id, '', 'answered ""');
  t.equal(await stored(made.body.id), '', 'stored ""');
  t.equal((await admin('GET', `/admin/sso/providers/${made.body.id}`)).body.resource_id, '', 'read back ""');
  const named = await admin('GET', '/admin/sso/providers/resource_');
  t.strictSame([named.status, named.body.id, named.body.resource_id], [200, made.body.id, '']);
  const listed = (await admin('GET', '/admin/sso/providers')).body.items.find((p: { id: string }) => p.id === made.body.id);
  t.equal(listed.resource_id, '', 'listed with ""');

  // A resource_id is unique ignoring case, "" too: the original fails with a 500 (docs/errors.md `conflict`).
  const again = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: new TestIdp().metadata(), resource_id: '' });
  t.strictSame([again.status, again.body.error_code], [422, 'conflict'], 'a second "" is taken');
});

t.test('PUT: resource_id "" clears a stored one, "" included; absent or null keeps it', async (t) => {
  const made = await provider(t, 'put-1');
  const kept = await admin('PUT', `/admin/sso/providers/${made.body.id}`, { resource_id: null });
  t.equal(kept.body.resource_id, 'put-1', 'null keeps it');
  const cleared = await admin('PUT', `/admin/sso/providers/${made.body.id}`, { resource_id: '' });
  t.equal(cleared.status, 200);
  t.notOk('resource_id' in cleared.body, 'left out once cleared');
  t.equal(await stored(made.body.id), null);

  const empty = await provider(t, '');
  const emptied = await admin('PUT', `/admin/sso/providers/${empty.body.id}`, { resource_id: '' });
  t.notOk('resource_id' in emptied.body, 'a stored "" is cleared by "" as the original clears any');
  t.equal(await stored(empty.body.id), null);
  t.equal((await admin('GET', '/admin/sso/providers/resource_')).status, 404, 'no provider is resource_ any more');

  const none = await provider(t);
  t.notOk('resource_id' in none.body, 'absent: none');
  const unchanged = await admin('PUT', `/admin/sso/providers/${none.body.id}`, { resource_id: '' });
  t.strictSame([unchanged.body.updated_at, await stored(none.body.id)], [none.body.updated_at, null], '"" on none changes nothing');
});

t.test("PUT: another provider's resource_id, in any case, is the original's 422 conflict, and nothing changes", async (t) => {
  await provider(t, 'taken-1');
  const made = await provider(t, 'mine-1');
  const res = await admin('PUT', `/admin/sso/providers/${made.body.id}`, { resource_id: 'TAKEN-1', disabled: true });
  t.strictSame(
    [res.status, res.body],
    [422, { code: 422, error_code: 'conflict', msg: 'Updating SSO provider failed, likely due to a conflict. Try again?' }],
  );
  const now = (await admin('GET', `/admin/sso/providers/${made.body.id}`)).body;
  t.strictSame([now.resource_id, now.disabled], ['mine-1', null]);
});

t.test('GET resource_id_prefix: a LIKE pattern followed by %, as the original hands it to LIKE', async (t) => {
  const ids: Record<string, string> = {};
  for (const resourceId of ['acme-1', 'acmeX2', 'ac%me', 'a_b', 'ACME-3']) ids[resourceId] = (await provider(t, resourceId)).body.id;
  await provider(t, null);
  const list = async (prefix: string) => {
    const res = await admin('GET', `/admin/sso/providers?resource_id_prefix=${encodeURIComponent(prefix)}`);
    t.equal(res.status, 200, prefix);
    const found = new Set(res.body.items.map((p: { id: string }) => p.id));
    return Object.keys(ids)
      .filter((r) => found.has(ids[r]))
      .sort();
  };
  t.strictSame(await list('acme'), ['acme-1', 'acmeX2'], 'a plain prefix, compared exactly (case too)');
  t.strictSame(await list('acme_'), ['acme-1', 'acmeX2'], '_ is any one character');
  t.strictSame(await list('a%1'), ['acme-1'], '% is any text');
  t.strictSame(await list('%'), ['ACME-3', 'a_b', 'ac%me', 'acme-1', 'acmeX2'], '% alone: every provider with a resource_id');
  t.strictSame(await list('ac\\%'), ['ac%me'], '\\% is a %');
  t.strictSame(await list('a\\_'), ['a_b'], '\\_ is a _');
  t.strictSame(await list('acme\\'), [], 'a trailing \\ escapes the appended %, which then must be there');
  t.strictSame(await list("x' or '1'='1"), [], 'a parameter, never SQL');
  t.strictSame(await list(''), Object.keys(ids).sort(), 'empty: no filter');
});

t.test('an original database: a provider with resource_id "" keeps it when adopted', async (t) => {
  const PROVIDER_ID = 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee';
  const original = await createOriginalDatabase((c) =>
    c.query(`insert into auth.sso_providers (id, resource_id, created_at, updated_at) values ($1, '', now(), now())`, [PROVIDER_ID]),
  );
  t.teardown(() => original.drop());
  const adopted = await startTestService({ DATABASE_URL: original.url, ...SAML });
  t.teardown(() => adopted.stop());
  const { rows } = await adopted.db.query('select resource_id from sso_providers where id = $1', [PROVIDER_ID]);
  t.strictSame(rows, [{ resource_id: '' }]);
});
