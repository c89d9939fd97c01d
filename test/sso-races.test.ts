// SSO providers changed and used concurrently, in a forced interleaving: the test holds a lock on the provider
// (its row `for update`, or an uncommitted deletion of it) until every request has made its own look-ups and
// waits on it, as PostgreSQL reports in pg_stat_activity, then lets them go. Each must then answer as if made
// after the others (docs/sso-saml.md#identity-providers): POST /sso of a provider deleted meanwhile is the 404
// of a deleted provider, of concurrent DELETEs one deletes and the rest 404 as a repeat, and concurrent PUTs
// of different fields keep both changes.
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { holdLock, inOrderBehind } from './helpers/row-lock.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, spPrivateKey } from './helpers/saml-idp.js';

const api = await startTestService({ AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey() });
t.teardown(() => api.stop());
const token = await adminToken();
const admin = (method: string, path: string, body?: unknown) => api.request(method, path, { token, ...(body ? { body } : {}) });

const NOT_FOUND = [404, { code: 404, error_code: 'sso_provider_not_found', msg: 'SSO Identity Provider not found' }];

let made = 0;
async function newProvider(idp = new TestIdp()): Promise<{ id: string; domain: string; idp: TestIdp }> {
  const domain = `races-${++made}.example.test`;
  const res = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: idp.metadata(), domains: [domain] });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return { id: res.body.id, domain, idp };
}

const holdProviderRow = (id: string) => holdLock(api.db, 'select 1 from sso_providers where id = $1 for update', [id]);
const answer = (r: Reply) => [r.status, r.body];
/** Answers as [status, body], in an order independent of which request won. */
const unordered = (answers: unknown[][]) => answers.map((a) => JSON.stringify(a)).sort();

for (const by of ['provider_id', 'domain'] as const) {
  t.test(`POST /sso by ${by} while its provider is deleted: the 404 of a request after the deletion`, async (t) => {
    const { id, domain } = await newProvider();
    const body = { skip_http_redirect: true, ...(by === 'provider_id' ? { provider_id: id } : { domain }) };
    // The deletion is made but not committed: the request still finds the provider, and its relay state's
    // insert waits on the deletion (the foreign key's check) until it commits.
    const deletion = await holdLock(api.db, 'delete from sso_providers where id = $1', [id]);
    const [during] = await inOrderBehind(deletion, [() => api.request('POST', '/sso', { body })]);
    const after = await api.request('POST', '/sso', { body });
    t.equal(after.status, 404);
    t.strictSame(answer(during), answer(after), 'answered as a request made after the deletion');
    const { rows } = await api.db.query('select count(*)::int as n from saml_relay_states where sso_provider_id = $1', [id]);
    t.equal(rows[0].n, 0, 'no relay state kept');
  });
}

t.test('concurrent DELETEs of one provider: one 200 with the provider, the others the 404 of a repeat', async (t) => {
  const { id, domain } = await newProvider();
  const before = await admin('GET', `/admin/sso/providers/${id}`);
  const held = await holdProviderRow(id);
  const del = () => admin('DELETE', `/admin/sso/providers/${id}`);
  const replies = await inOrderBehind(held, [del, del, del]);
  t.strictSame(unordered(replies.map(answer)), unordered([[200, before.body], NOT_FOUND, NOT_FOUND]));
  t.strictSame(answer(await del()), NOT_FOUND, 'as a sequential repeat answers');
  const { rows } = await api.db.query('select count(*)::int as n from sso_domains where domain = $1', [domain]);
  t.equal(rows[0].n, 0);
});

t.test('a DELETE answers the provider as it deleted it, with a PUT committed meanwhile', async (t) => {
  const { id } = await newProvider();
  const held = await holdProviderRow(id);
  const [put, del] = await inOrderBehind(held, [
    () => admin('PUT', `/admin/sso/providers/${id}`, { disabled: true }),
    () => admin('DELETE', `/admin/sso/providers/${id}`),
  ]);
  t.equal(put.status, 200);
  t.equal(del.status, 200);
  t.equal(del.body.disabled, true, 'the row deleted, with the PUT');
  t.strictSame(del.body, put.body);
});

t.test('a PUT of a provider deleted meanwhile is the 404 of a PUT after the deletion', async (t) => {
  const { id } = await newProvider();
  const held = await holdProviderRow(id);
  const [del, put] = await inOrderBehind(held, [
    () => admin('DELETE', `/admin/sso/providers/${id}`),
    () => admin('PUT', `/admin/sso/providers/${id}`, { disabled: true }),
  ]);
  t.equal(del.status, 200);
  t.strictSame(answer(put), NOT_FOUND);
  t.strictSame(answer(await admin('PUT', `/admin/sso/providers/${id}`, { disabled: true })), NOT_FOUND);
});

t.test('concurrent PUTs of disabled and resource_id: both changes kept', async (t) => {
  const { id } = await newProvider();
  const resourceId = `res-${id}`;
  const held = await holdProviderRow(id);
  const replies = await inOrderBehind(held, [
    () => admin('PUT', `/admin/sso/providers/${id}`, { disabled: true }),
    () => admin('PUT', `/admin/sso/providers/${id}`, { resource_id: resourceId }),
  ]);
  t.strictSame(
    replies.map((r) => r.status),
    [200, 200],
  );
  const now = await admin('GET', `/admin/sso/providers/${id}`);
  t.equal(now.body.disabled, true, 'the first PUT kept');
  t.equal(now.body.resource_id, resourceId, 'the second PUT kept');
  t.strictSame(replies[1].body, now.body, 'the second answers what both made');
});

t.test('concurrent PUTs of metadata and attribute_mapping: both changes kept', async (t) => {
  const { id, idp } = await newProvider();
  const rekeyed = new TestIdp(idp.entityId);
  const mapping = { keys: { full_name: { name: 'displayName' } } };
  const held = await holdProviderRow(id);
  const replies = await inOrderBehind(held, [
    () => admin('PUT', `/admin/sso/providers/${id}`, { attribute_mapping: mapping }),
    () => admin('PUT', `/admin/sso/providers/${id}`, { metadata_xml: rekeyed.metadata() }),
  ]);
  t.strictSame(
    replies.map((r) => r.status),
    [200, 200],
  );
  const now = await admin('GET', `/admin/sso/providers/${id}`);
  t.strictSame(now.body.saml.attribute_mapping, mapping, 'the first PUT kept');
  t.equal(now.body.saml.metadata_xml, rekeyed.metadata(), 'the second PUT kept');
});

t.test('a PUT of a domain another PUT takes meanwhile: refused, the domain stays unique', async (t) => {
  const a = await newProvider();
  const b = await newProvider();
  const domain = `contested-${a.id}.example.test`;
  const held = await holdProviderRow(a.id);
  let first: Promise<Reply>;
  try {
    first = admin('PUT', `/admin/sso/providers/${a.id}`, { domains: [domain] });
    await held.waiters(1);
    const second = await admin('PUT', `/admin/sso/providers/${b.id}`, { domains: [domain] });
    t.equal(second.status, 200, 'the other provider takes it while the first PUT waits');
  } finally {
    await held.release();
  }
  const refused = await first;
  t.equal(refused.status, 400);
  t.equal(refused.body.error_code, 'sso_domain_already_exists');
  const again = await admin('PUT', `/admin/sso/providers/${a.id}`, { domains: [domain] });
  t.strictSame(answer(refused), answer(again), 'as a PUT made after the other answers');
  const { rows } = await api.db.query('select sso_provider_id from sso_domains where domain = $1', [domain]);
  t.strictSame(
    rows.map((r: any) => r.sso_provider_id),
    [b.id],
  );
});
