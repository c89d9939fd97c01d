// Custom OAuth2/OIDC providers as the original's clients and operators observe them, pinned black-box:
// the exact JSON of a provider (its fields in the original's order, the discovery document as the original
// stores it, never the secret), list order and filters, what a PUT may change and what it ignores, when a
// PUT fetches the discovery document again, the 404s, and at sign-in the scopes a request names, the
// identity (provider name, identity_data), the email rules, and a provider disabled or changed mid-flow.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf, queryOf } from './helpers/oauth.js';

// One small provider plays both kinds: its endpoints for oauth2 rows, its discovery document (which, as
// real issuers' do, lists id_token_signing_alg_values_supported) for oidc rows; it issues no id_token, so
// an oidc sign-in reads its userinfo endpoint.
const idp = await startOAuth2Server();
const api = await startTestService({
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_MAILER_AUTOCONFIRM: 'true',
});
const token = await adminToken();
t.teardown(async () => {
  await api.stop();
  await idp.stop();
});

const call = (method: string, path: string, body?: unknown) => api.request(method, path, { token, body });
const refusal = (msg: string, code = 'validation_failed', status = 400) => ({ code: status, error_code: code, msg });
const oauth2 = (identifier: string, over: Record<string, unknown> = {}) => ({
  provider_type: 'oauth2',
  identifier,
  name: `Provider ${identifier}`,
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  authorization_url: `${idp.base}/oauth/authorize`,
  token_url: `${idp.base}/oauth/token`,
  userinfo_url: `${idp.base}/api/me`,
  ...over,
});
const oidc = (identifier: string, over: Record<string, unknown> = {}) => ({
  provider_type: 'oidc',
  identifier,
  name: `Provider ${identifier}`,
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  issuer: idp.base,
  ...over,
});
async function create(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await call('POST', '/admin/custom-providers', body);
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return res.body;
}
async function removeAll(): Promise<void> {
  await api.db.query('delete from custom_oauth_providers');
}

/** The service's /authorize redirect to the provider, then the provider approving as `profile`: the callback's Location. */
async function signIn(query: string, profile: Record<string, unknown>): Promise<{ providerUrl: URL; location: URL }> {
  const started = await api.request('GET', `/authorize?${query}`);
  if (started.status !== 302) throw new Error(`/authorize answered ${started.status}: ${started.text}`);
  const providerUrl = new URL(started.headers.get('location')!);
  idp.approveAs = profile;
  const approved = await fetch(providerUrl, { redirect: 'manual' });
  const { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  return { providerUrl, location };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const COMMON_HEAD = [
  'id',
  'provider_type',
  'identifier',
  'name',
  'client_id',
  'acceptable_client_ids',
  'scopes',
  'pkce_enabled',
  'attribute_mapping',
  'custom_claims_allowlist',
  'authorization_params',
  'enabled',
  'email_optional',
];

t.test("a provider's JSON: the original's fields in its order, no secret, the discovery document as it stores it", async (t) => {
  t.teardown(removeAll);
  const made = await create(oidc('custom:shape-oidc'));
  t.same(Object.keys(made), [...COMMON_HEAD, 'issuer', 'skip_nonce_check', 'discovery_document', 'created_at', 'updated_at']);
  // The original stores the discovery document's endpoints and its four *_supported lists (when set); the
  // signing algorithms the issuer lists are not among them, so they are not shown.
  t.strictSame(made.discovery_document, {
    issuer: idp.base,
    authorization_endpoint: `${idp.base}/oauth/authorize`,
    token_endpoint: `${idp.base}/oauth/token`,
    userinfo_endpoint: `${idp.base}/api/me`,
    jwks_uri: `${idp.base}/jwks`,
  });
  t.match(made, { id: /^[0-9a-f-]{36}$/, created_at: ISO, updated_at: ISO, scopes: ['openid'], skip_nonce_check: false });

  const plain = await create(oauth2('custom:shape-oauth2', { jwks_uri: `${idp.base}/jwks`, discovery_url: `${idp.base}/x` }));
  t.same(Object.keys(plain), [
    ...COMMON_HEAD,
    'skip_nonce_check',
    'authorization_url',
    'token_url',
    'userinfo_url',
    'jwks_uri',
    'created_at',
    'updated_at',
  ]);
  t.equal(plain.skip_nonce_check, false, 'shown on an oauth2 provider too, false');

  // The same shape when read, listed and changed; the secret is nowhere.
  for (const [what, body] of [
    ['get', (await call('GET', '/admin/custom-providers/custom:shape-oidc')).body],
    ['list', (await call('GET', '/admin/custom-providers?type=oidc')).body.providers[0]],
    ['put', (await call('PUT', '/admin/custom-providers/custom:shape-oidc', { name: 'renamed' })).body],
  ] as const) {
    t.same(Object.keys(body), Object.keys(made), `${what}: same fields`);
    t.strictSame(body.discovery_document, made.discovery_document, `${what}: same discovery document`);
    t.notMatch(JSON.stringify(body), idp.clientSecret, `${what}: no secret`);
  }
});

t.test('list: newest first, an empty ?type= lists all, no pagination; an empty list is []', async (t) => {
  t.teardown(removeAll);
  t.strictSame((await call('GET', '/admin/custom-providers')).body, { providers: [] });
  for (const id of ['custom:first', 'custom:second', 'custom:third']) await create(oauth2(id));
  await create(oidc('custom:fourth'));
  const names = (body: { providers: { identifier: string }[] }) => body.providers.map((p) => p.identifier);
  t.same(names((await call('GET', '/admin/custom-providers')).body), ['custom:fourth', 'custom:third', 'custom:second', 'custom:first']);
  t.same(names((await call('GET', '/admin/custom-providers?type=')).body), [
    'custom:fourth',
    'custom:third',
    'custom:second',
    'custom:first',
  ]);
  t.same(names((await call('GET', '/admin/custom-providers?type=oauth2')).body), ['custom:third', 'custom:second', 'custom:first']);
  t.same(names((await call('GET', '/admin/custom-providers?page=2&per_page=1')).body).length, 4, 'page and per_page are not read');
  t.same((await call('GET', '/admin/custom-providers?type=OIDC')).body, refusal("type must be either 'oauth2' or 'oidc'"));
});

t.test('PUT: changes what the body sets; type, identifier and the other kind’s fields are ignored', async (t) => {
  t.teardown(removeAll);
  const made = await create(
    oauth2('custom:upd', { scopes: ['a', 'b'], acceptable_client_ids: ['x'], attribute_mapping: { nickname: 'login' } }),
  );
  const res = await call('PUT', '/admin/custom-providers/custom:upd', {
    provider_type: 'oidc',
    identifier: 'custom:renamed',
    name: '',
    client_id: '',
    client_secret: '',
    issuer: 'https://issuer.example.com',
    skip_nonce_check: true,
    scopes: [],
    acceptable_client_ids: ['y', 'z'],
    attribute_mapping: {},
    authorization_params: { prompt: 'login' },
    pkce_enabled: false,
    email_optional: true,
  });
  t.equal(res.status, 200, res.text);
  t.match(res.body, {
    provider_type: 'oauth2',
    identifier: 'custom:upd',
    name: made.name,
    client_id: made.client_id,
    skip_nonce_check: false,
    scopes: [],
    acceptable_client_ids: ['y', 'z'],
    attribute_mapping: {},
    authorization_params: { prompt: 'login' },
    pkce_enabled: false,
    email_optional: true,
    created_at: made.created_at,
  });
  t.notOk('issuer' in res.body);
  t.ok(new Date(res.body.updated_at as string) > new Date(made.updated_at as string), 'updated_at moves on');
  t.same(
    (await call('GET', '/admin/custom-providers/custom:renamed')).body,
    refusal('Custom OAuth provider not found', 'custom_provider_not_found', 404),
  );

  // Nulls leave values as they are; an OIDC provider's scopes always keep openid.
  t.match((await call('PUT', '/admin/custom-providers/custom:upd', { scopes: null, acceptable_client_ids: null })).body, {
    scopes: [],
    acceptable_client_ids: ['y', 'z'],
  });
  await create(oidc('custom:upd-oidc', { scopes: ['email'] }));
  t.match((await call('PUT', '/admin/custom-providers/custom:upd-oidc', { scopes: [] })).body, { scopes: ['openid'] });
  t.match((await call('PUT', '/admin/custom-providers/custom:upd-oidc', { scopes: ['profile', 'openid'] })).body, {
    scopes: ['profile', 'openid'],
  });
});

t.test('PUT on an OIDC provider: a discovery_url sent, even empty, fetches the discovery document again', async (t) => {
  t.teardown(removeAll);
  await create(oidc('custom:rediscover'));
  const fetched = () => idp.discoveryRequests;
  const before = fetched();
  await call('PUT', '/admin/custom-providers/custom:rediscover', { name: 'no refetch' });
  await call('PUT', '/admin/custom-providers/custom:rediscover', { discovery_url: null });
  t.equal(fetched(), before, 'a name, or a null discovery_url, fetches nothing');
  const res = await call('PUT', '/admin/custom-providers/custom:rediscover', { discovery_url: '' });
  t.equal(res.status, 200, res.text);
  t.equal(fetched(), before + 1, 'an empty discovery_url fetched the document again');
  t.notOk('discovery_url' in res.body, 'and stored none');
  // The fetched document is checked as at create: an issuer now down refuses the PUT and changes nothing.
  idp.discoveryDown = true;
  t.teardown(() => void (idp.discoveryDown = false));
  const down = await call('PUT', '/admin/custom-providers/custom:rediscover', { discovery_url: '', name: 'not saved' });
  const url = `${idp.base}/.well-known/openid-configuration`;
  t.same(down.body, refusal(`OIDC discovery from "${url}" failed: oidc: discovery request to ${url} returned 503 Service Unavailable`));
  t.equal((await call('GET', '/admin/custom-providers/custom:rediscover')).body.name, 'no refetch');
});

t.test('the path identifier: the prefix checked first, then 404 in the same words for GET, PUT and DELETE', async (t) => {
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const body = method === 'PUT' ? { name: 'x' } : undefined;
    t.same(
      (await call(method, '/admin/custom-providers/github', body)).body,
      refusal("identifier must start with 'custom:' prefix, e.g. 'custom:github'"),
    );
    t.same(
      (await call(method, '/admin/custom-providers/custom:none', body)).body,
      refusal('Custom OAuth provider not found', 'custom_provider_not_found', 404),
      method,
    );
  }
  // The lookup is exact: identifiers are stored in lower case, and an upper-case one names no provider.
  await create(oauth2('custom:lower'));
  t.teardown(removeAll);
  t.equal((await call('GET', '/admin/custom-providers/custom:LOWER')).status, 404);
});

t.test('sign-in: scopes a request names are space-separated; a comma belongs to a scope', async (t) => {
  t.teardown(removeAll);
  await create(oauth2('custom:scopes', { scopes: ['default'] }));
  await create(oidc('custom:scopes-oidc', { scopes: ['default'] }));
  const scopeOf = async (query: string) => {
    const res = await api.request('GET', `/authorize?${query}`);
    return new URL(res.headers.get('location')!).searchParams.get('scope');
  };
  t.equal(await scopeOf('provider=custom:scopes'), 'default');
  t.equal(await scopeOf('provider=custom:scopes&scopes=read%20write'), 'read write');
  t.equal(await scopeOf('provider=custom:scopes&scopes=read,write'), 'read,write');
  t.equal(await scopeOf('provider=custom:scopes-oidc'), 'openid default');
  t.equal(await scopeOf('provider=custom:scopes-oidc&scopes=email%20profile'), 'openid email profile');
  // Provider names are matched in any case, as the original lower-cases them.
  t.equal(await scopeOf('provider=CUSTOM:Scopes'), 'default');
});

t.test('the authorization URL: no PKCE challenge when pkce_enabled is off; stored parameters win over the request', async (t) => {
  t.teardown(removeAll);
  await create(oauth2('custom:nopkce', { pkce_enabled: false, authorization_params: { prompt: 'consent', hd: 'example.com' } }));
  const res = await api.request('GET', '/authorize?provider=custom:nopkce&prompt=none&login_hint=ada');
  const sent = new URL(res.headers.get('location')!).searchParams;
  t.notOk(sent.has('code_challenge'));
  t.notOk(sent.has('code_challenge_method'));
  t.match(Object.fromEntries(sent), {
    prompt: 'consent',
    hd: 'example.com',
    login_hint: 'ada',
    client_id: idp.clientId,
    response_type: 'code',
  });
  t.equal(sent.get('redirect_uri'), REDIRECT_URI);
  // Without PKCE the token request carries no verifier, and the sign-in completes.
  idp.approveAs = { sub: 'p-1', email: 'p@example.com', email_verified: true };
  const approved = await fetch(res.headers.get('location')!, { redirect: 'manual' });
  const { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  t.ok(fragmentOf(location).access_token, location.href);
  t.notOk(idp.tokenRequests.at(-1)!.has('code_verifier'));
});

t.test('sign-in: the identity is named custom:<id>; identity_data holds the claim set with both flags', async (t) => {
  t.teardown(removeAll);
  await create(oauth2('custom:who'));
  const { location } = await signIn('provider=custom:who', {
    sub: 'w-1',
    email: 'who@example.com',
    email_verified: false,
    name: 'Who',
    login: 'not-a-claim',
  });
  const session = fragmentOf(location);
  t.ok(session.access_token, location.href);
  const me = (await api.request('GET', '/user', { token: session.access_token })).body;
  t.match(me, { email: 'who@example.com', app_metadata: { provider: 'custom:who', providers: ['custom:who'] } });
  t.equal(me.identities.length, 1);
  t.match(me.identities[0], { provider: 'custom:who', id: 'w-1', email: 'who@example.com' });
  t.strictSame(me.identities[0].identity_data, {
    sub: 'w-1',
    name: 'Who',
    email: 'who@example.com',
    email_verified: false,
    phone_verified: false,
  });
  // The account was confirmed at once (AUTOCONFIRM), which marks its metadata verified, as the original's Confirm does.
  t.match(me.user_metadata, { sub: 'w-1', name: 'Who', email_verified: true });
  t.ok(me.email_confirmed_at);

  // The same subject again is the same user, its identity_data refreshed from the new answer.
  const again = await signIn('provider=custom:who', { sub: 'w-1', email: 'who@example.com', email_verified: true });
  const second = (await api.request('GET', '/user', { token: fragmentOf(again.location).access_token })).body;
  t.equal(second.id, me.id);
  t.strictSame(second.identities[0].identity_data, { sub: 'w-1', email: 'who@example.com', email_verified: true, phone_verified: false });
});

t.test('sign-in without an email: refused unless email_optional, as the flow started', async (t) => {
  t.teardown(removeAll);
  await create(oauth2('custom:noemail'));
  const refused = await signIn('provider=custom:noemail', { sub: 'n-1' });
  t.match(queryOf(refused.location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user email from external provider',
  });

  // email_optional is read when the sign-in starts: one turned on meanwhile does not rescue it.
  const started = await api.request('GET', '/authorize?provider=custom:noemail');
  t.equal((await call('PUT', '/admin/custom-providers/custom:noemail', { email_optional: true })).status, 200);
  idp.approveAs = { sub: 'n-1' };
  const approved = await fetch(started.headers.get('location')!, { redirect: 'manual' });
  const late = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  t.match(queryOf(late.location), { error_code: 'unexpected_failure' });

  const allowed = await signIn('provider=custom:noemail', { sub: 'n-1' });
  const session = fragmentOf(allowed.location);
  t.ok(session.access_token, allowed.location.href);
  const me = (await api.request('GET', '/user', { token: session.access_token })).body;
  t.equal(me.email, '');
  t.strictSame(me.identities[0].identity_data, { sub: 'n-1', email_verified: false, phone_verified: false });
});

t.test('a provider disabled mid-flow: the callback refuses with the reason, and no user is made', async (t) => {
  t.teardown(removeAll);
  await create(oauth2('custom:midway'));
  const started = await api.request('GET', '/authorize?provider=custom:midway');
  t.equal(started.status, 302);
  t.equal((await call('PUT', '/admin/custom-providers/custom:midway', { enabled: false })).status, 200);
  idp.approveAs = { sub: 'm-1', email: 'midway@example.com', email_verified: true };
  const approved = await fetch(started.headers.get('location')!, { redirect: 'manual' });
  const { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  t.match(queryOf(location), {
    error: 'invalid_request',
    error_code: 'oauth_provider_not_supported',
    error_description: 'Unsupported provider: custom provider custom:midway is disabled',
  });
  const { rows } = await api.db.query("select count(*)::int as n from identities where provider = 'custom:midway'");
  t.same(rows, [{ n: 0 }]);
});
