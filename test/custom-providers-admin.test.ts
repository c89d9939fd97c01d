// /admin/custom-providers against a real oidc-provider (its discovery document fetched at create time):
// create, list, read, change and delete; the original's validation messages; the URL rules (https, no
// loopback or private address unless CUSTOM_OAUTH_ALLOW_PRIVATE_URLS); the discovery checks (issuer,
// required fields, size cap); the client secret sealed at rest and never shown; the quota and the switch.
import t from 'tap';
import http from 'node:http';
import type net from 'node:net';
import { startTestService, type TestService } from './helpers/server.js';
import { startOidcProvider } from './helpers/oidc-provider.js';
import { adminToken } from './helpers/admin.js';

const idp = await startOidcProvider({ clientId: 'cp-client' });
// Discovery documents the service must refuse: one without endpoints, one over 1 MiB.
const odd = http.createServer((req, res) => {
  const base = `http://127.0.0.1:${(odd.address() as net.AddressInfo).port}`;
  res.setHeader('content-type', 'application/json');
  if (req.url?.startsWith('/bare/')) return res.end(JSON.stringify({ issuer: `${base}/bare` }));
  if (req.url?.startsWith('/huge/')) return res.end(JSON.stringify({ issuer: `${base}/huge`, padding: 'x'.repeat(1_100_000) }));
  if (req.url?.startsWith('/ftp/')) {
    const at = (path: string) => `ftp://files.example.test/${path}`;
    return res.end(
      JSON.stringify({ issuer: `${base}/ftp`, authorization_endpoint: `${base}/auth`, token_endpoint: at('token'), jwks_uri: at('jwks') }),
    );
  }
  res.writeHead(404).end('{}');
});
await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
const oddBase = `http://127.0.0.1:${(odd.address() as net.AddressInfo).port}`;

const open = { AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true', AUTH_CUSTOM_OAUTH_EXTERNAL_URL: 'https://app.example.test/auth/v1' };
const api = await startTestService(open);
const strict = await startTestService();
const limited = await startTestService({ ...open, AUTH_CUSTOM_OAUTH_MAX_PROVIDERS: '1' });
const disabled = await startTestService({ ...open, AUTH_CUSTOM_OAUTH_ENABLED: 'false' });
const token = await adminToken();
t.teardown(async () => {
  await Promise.all([api.stop(), strict.stop(), limited.stop(), disabled.stop(), idp.stop()]);
  await new Promise<void>((resolve) => odd.close(() => resolve()));
});

const call = (svc: TestService, method: string, path: string, body?: unknown) => svc.request(method, path, { token, body });
const oidcBody = (over: Record<string, unknown> = {}) => ({
  provider_type: 'oidc',
  identifier: 'custom:acme-oidc',
  name: 'Acme OIDC',
  client_id: 'cp-client',
  client_secret: idp.clientSecret,
  issuer: idp.issuer,
  ...over,
});
const oauth2BodyOpen = (over: Record<string, unknown> = {}) => ({
  provider_type: 'oauth2',
  identifier: 'custom:acme-oauth',
  name: 'Acme OAuth',
  client_id: 'oa-client',
  client_secret: 'oa-secret',
  authorization_url: `${idp.base}/auth`,
  token_url: `${idp.base}/token`,
  userinfo_url: `${idp.base}/me`,
  ...over,
});
const refusal = (msg: string, code = 'validation_failed', status = 400) => ({ code: status, error_code: code, msg });

t.test('an OIDC provider: created with its discovery document, read, listed, changed, deleted', async (t) => {
  const created = await call(
    api,
    'POST',
    '/admin/custom-providers',
    oidcBody({ scopes: ['email'], attribute_mapping: { nickname: 'name' } }),
  );
  t.equal(created.status, 201, created.text);
  t.match(created.body, {
    provider_type: 'oidc',
    identifier: 'custom:acme-oidc',
    name: 'Acme OIDC',
    client_id: 'cp-client',
    acceptable_client_ids: [],
    scopes: ['openid', 'email'],
    pkce_enabled: true,
    attribute_mapping: { nickname: 'name' },
    custom_claims_allowlist: [],
    authorization_params: {},
    enabled: true,
    email_optional: false,
    issuer: idp.issuer,
    skip_nonce_check: false,
    discovery_document: { issuer: idp.issuer, authorization_endpoint: `${idp.base}/auth`, jwks_uri: `${idp.base}/jwks` },
  });
  t.notOk('client_secret' in created.body, 'the secret is never shown');
  t.notOk('authorization_url' in created.body, 'OAuth2 fields are absent on an OIDC provider');
  t.ok(idp.hits.get('/.well-known/openid-configuration'), 'discovery was fetched');

  const { rows } = await api.db.query('select client_secret from custom_oauth_providers where identifier = $1', ['custom:acme-oidc']);
  t.match(JSON.parse(rows[0].client_secret), { alg: 'aes-gcm-hkdf', key_id: 'portcullis-jwt-secret' }, 'sealed at rest');
  t.notMatch(rows[0].client_secret, idp.clientSecret);

  const read = await call(api, 'GET', '/admin/custom-providers/custom:acme-oidc');
  t.same(read.body, created.body);
  const list = await call(api, 'GET', '/admin/custom-providers?type=oidc');
  t.same(list.body, { providers: [created.body] });
  t.same((await call(api, 'GET', '/admin/custom-providers?type=oauth2')).body, { providers: [] });

  const changed = await call(api, 'PUT', '/admin/custom-providers/custom:acme-oidc', {
    name: 'Acme 2',
    enabled: false,
    scopes: ['profile'],
  });
  t.equal(changed.status, 200, changed.text);
  t.match(changed.body, { name: 'Acme 2', enabled: false, scopes: ['openid', 'profile'], client_id: 'cp-client', issuer: idp.issuer });
  t.ok(new Date(changed.body.updated_at) >= new Date(created.body.updated_at));

  const deleted = await call(api, 'DELETE', '/admin/custom-providers/custom:acme-oidc');
  t.equal(deleted.status, 204);
  t.same(
    (await call(api, 'GET', '/admin/custom-providers/custom:acme-oidc')).body,
    refusal('Custom OAuth provider not found', 'custom_provider_not_found', 404),
  );
  t.same(
    (await call(api, 'DELETE', '/admin/custom-providers/custom:acme-oidc')).body,
    refusal('Custom OAuth provider not found', 'custom_provider_not_found', 404),
  );
});

t.test('an OAuth2 provider: its endpoints stored as given, defaults filled, a duplicate refused', async (t) => {
  const created = await call(
    api,
    'POST',
    '/admin/custom-providers',
    oauth2BodyOpen({ pkce_enabled: false, authorization_params: { prompt: 'consent' } }),
  );
  t.equal(created.status, 201, created.text);
  t.match(created.body, {
    provider_type: 'oauth2',
    scopes: [],
    pkce_enabled: false,
    authorization_params: { prompt: 'consent' },
    authorization_url: `${idp.base}/auth`,
    token_url: `${idp.base}/token`,
    userinfo_url: `${idp.base}/me`,
  });
  t.notOk('issuer' in created.body);
  const again = await call(api, 'POST', '/admin/custom-providers', oauth2BodyOpen());
  t.same(again.body, refusal('A custom OAuth provider with this identifier already exists', 'conflict'));
  const secret = await call(api, 'PUT', '/admin/custom-providers/custom:acme-oauth', { client_secret: 'rotated' });
  t.equal(secret.status, 200);
  const { rows } = await api.db.query('select client_secret from custom_oauth_providers where identifier = $1', ['custom:acme-oauth']);
  t.notMatch(rows[0].client_secret, 'rotated');
  t.equal((await call(api, 'DELETE', '/admin/custom-providers/custom:acme-oauth')).status, 204);
});

t.test("create: the original's checks and messages, in its order; nothing is stored", async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ ...oidcBody(), provider_type: 'saml' }, "provider_type must be either 'oauth2' or 'oidc'"],
    [oidcBody({ identifier: '' }), 'identifier is required'],
    [oidcBody({ identifier: 'acme' }), "identifier must start with 'custom:' prefix, e.g. 'custom:acme'"],
    [
      oidcBody({ identifier: 'custom:Acme!' }),
      "identifier must be 2 to 50 lowercase letters, digits, '-' or ':', starting and ending with a letter or digit",
    ],
    [oidcBody({ name: '' }), 'name is required'],
    [oidcBody({ name: 'n'.repeat(101) }), 'name must be at most 100 characters'],
    [oidcBody({ client_id: '' }), 'client_id is required'],
    [oidcBody({ client_secret: '' }), 'client_secret is required'],
    [oidcBody({ issuer: '' }), 'issuer is required for OIDC providers'],
    [oauth2BodyOpen({ token_url: '' }), 'token_url is required for OAuth2 providers'],
    [
      oidcBody({ authorization_params: { redirect_uri: 'https://evil.example' } }),
      'Cannot override reserved OAuth parameter: redirect_uri',
    ],
    [oidcBody({ authorization_params: { nonce: 'fixed' } }), 'Cannot override reserved OAuth parameter: nonce'],
    [oidcBody({ authorization_params: { prompt: 1 } }), 'Authorization parameter "prompt" must be a string'],
    [oidcBody({ attribute_mapping: { role: 'groups' } }), 'Cannot map to protected system field: role'],
    [oidcBody({ custom_claims_allowlist: ['groups', ' '] }), 'custom_claims_allowlist entries must be non-empty strings'],
    [oidcBody({ issuer: 'not a url' }), 'Invalid URL format'],
    // What a WHATWG parser would silently rewrite (here, back into the working issuer) is refused, unfetched.
    [oidcBody({ issuer: `${idp.issuer}\t` }), 'Invalid URL format'],
    [oauth2BodyOpen({ token_url: `${idp.issuer}\\token` }), 'Invalid URL format'],
    [
      oidcBody({ issuer: `${idp.issuer}/elsewhere` }),
      `OIDC discovery from "${idp.issuer}/elsewhere/.well-known/openid-configuration" failed: oidc: discovery request to ${idp.issuer}/elsewhere/.well-known/openid-configuration returned 404 Not Found`,
    ],
    [
      oidcBody({ discovery_url: `${idp.issuer}/.well-known/openid-configuration`, issuer: 'http://127.0.0.1:1/other' }),
      `OIDC discovery from "${idp.issuer}/.well-known/openid-configuration" failed: oidc: issuer mismatch, expected "http://127.0.0.1:1/other" got "${idp.issuer}"`,
    ],
    [
      oidcBody({ issuer: `${oddBase}/bare` }),
      'OIDC discovery document is missing required fields: authorization_endpoint, token_endpoint, jwks_uri',
    ],
    [
      oidcBody({ issuer: `${oddBase}/huge` }),
      `OIDC discovery from "${oddBase}/huge/.well-known/openid-configuration" failed: the document is larger than 1048576 bytes`,
    ],
    // The endpoints a discovery document names are held to the URL rules too.
    [oidcBody({ issuer: `${oddBase}/ftp` }), 'URL must use HTTPS'],
    [
      oidcBody({ issuer: 'http://127.0.0.1:1' }),
      'OIDC discovery from "http://127.0.0.1:1/.well-known/openid-configuration" failed: the host is unreachable',
    ],
  ];
  for (const [body, msg] of cases) {
    const res = await call(api, 'POST', '/admin/custom-providers', body);
    t.same(res.body, refusal(msg), msg);
  }
  t.same((await api.db.query('select count(*)::int as n from custom_oauth_providers')).rows, [{ n: 0 }]);
});

t.test('the URL rules without CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: https only, no loopback or private address', async (t) => {
  // Public literal addresses for the fields a case does not test: no DNS lookup, no call made.
  const publicUrls = { authorization_url: 'https://1.1.1.1/auth', token_url: 'https://1.1.1.1/token', userinfo_url: 'https://1.1.1.1/me' };
  const oauth2Body = (over: Record<string, unknown>) => ({ ...oauth2BodyOpen(publicUrls), ...over });
  const cases: [Record<string, unknown>, string][] = [
    [oidcBody({ issuer: 'http://idp.example.com' }), 'URL must use HTTPS'],
    [oidcBody({ issuer: 'https://localhost/realm' }), 'URL cannot point to localhost or loopback addresses'],
    [oidcBody({ issuer: 'https://127.0.0.1:8443' }), 'URL cannot point to localhost or loopback addresses'],
    [oauth2Body({ userinfo_url: 'https://10.1.2.3/me' }), 'URL cannot resolve to private network addresses'],
    [oauth2Body({ token_url: 'https://169.254.169.254/latest' }), 'URL cannot resolve to link-local addresses'],
    [oauth2Body({ token_url: 'https://[::ffff:192.168.1.1]/token' }), 'URL cannot resolve to private network addresses'],
    [oauth2Body({ authorization_url: 'https://[fd00::1]/auth' }), 'URL cannot resolve to private network addresses'],
    [oauth2Body({ authorization_url: 'https://no-such-host.invalid/auth' }), 'Unable to resolve hostname'],
    [oauth2Body({ token_url: 'https://1.1.1.1\\token' }), 'Invalid URL format'],
    [oauth2Body({ userinfo_url: 'https://1.1.1.1/m\ne' }), 'Invalid URL format'],
  ];
  for (const [body, msg] of cases) {
    const res = await call(strict, 'POST', '/admin/custom-providers', body);
    t.same(res.body, refusal(msg), msg);
  }
  // As the original: the URLs are checked before the identifier is looked up.
  const taken = await call(strict, 'POST', '/admin/custom-providers', oauth2Body({ identifier: 'custom:taken' }));
  t.equal(taken.status, 201, 'created');
  const again = await call(
    strict,
    'POST',
    '/admin/custom-providers',
    oauth2Body({ identifier: 'custom:taken', authorization_url: 'http://x' }),
  );
  t.same(again.body, refusal('URL must use HTTPS'), 'a taken identifier with a bad URL: the URL is named');
  await call(strict, 'DELETE', '/admin/custom-providers/custom:taken');
});

t.test('update: path checks, unknown provider, bad fields refused before anything changes', async (t) => {
  t.equal((await call(api, 'POST', '/admin/custom-providers', oauth2BodyOpen({ identifier: 'custom:upd' }))).status, 201);
  t.same(
    (await call(api, 'PUT', '/admin/custom-providers/upd', { name: 'x' })).body,
    refusal("identifier must start with 'custom:' prefix, e.g. 'custom:upd'"),
  );
  t.same(
    (await call(api, 'GET', '/admin/custom-providers/upd')).body,
    refusal("identifier must start with 'custom:' prefix, e.g. 'custom:upd'"),
  );
  t.same(
    (await call(api, 'PUT', '/admin/custom-providers/custom:nope', { name: 'x' })).body,
    refusal('Custom OAuth provider not found', 'custom_provider_not_found', 404),
  );
  const bad = await call(api, 'PUT', '/admin/custom-providers/custom:upd', { name: 'changed', token_url: 'ftp://x' });
  t.same(bad.body, refusal('URL must use HTTPS'));
  t.same(
    (await call(api, 'PUT', '/admin/custom-providers/custom:upd', { attribute_mapping: { app_metadata: 'x' } })).body,
    refusal('Cannot map to protected system field: app_metadata'),
  );
  t.equal((await call(api, 'GET', '/admin/custom-providers/custom:upd')).body.name, 'Acme OAuth', 'nothing changed');
  t.same((await call(api, 'GET', '/admin/custom-providers?type=saml')).body, refusal("type must be either 'oauth2' or 'oidc'"));
  await call(api, 'DELETE', '/admin/custom-providers/custom:upd');
});

t.test('admins only; bad JSON and wrong types are 400s', async (t) => {
  const anon = await api.request('GET', '/admin/custom-providers');
  t.equal(anon.status, 401);
  const user = await api.request('GET', '/admin/custom-providers', { token: await adminToken('authenticated') });
  t.equal(user.status, 403);
  const broken = await api.request('POST', '/admin/custom-providers', {
    token,
    raw: '{"provider_type":',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(broken.status, 400);
  t.equal(broken.body.error_code, 'bad_json');
  // A member of the wrong JSON type fails the original's decoding, named in Go's words, before any other check.
  const struct = 'Go struct field AdminCustomOAuthProviderParams';
  for (const [body, words] of [
    [{ provider_type: 7 }, `number into ${struct}.provider_type of type string`],
    [oidcBody({ scopes: 'openid email' }), `string into ${struct}.scopes of type []string`],
    [oidcBody({ scopes: ['openid', 5] }), `number into ${struct}.scopes of type string`],
    [oidcBody({ enabled: 'yes' }), `string into ${struct}.enabled of type bool`],
    [oidcBody({ authorization_params: [] }), `array into ${struct}.authorization_params of type map[string]interface {}`],
  ] as const) {
    const wrong = await call(api, 'POST', '/admin/custom-providers', body);
    t.same(wrong.body, refusal(`Could not parse request body as JSON: json: cannot unmarshal ${words}`, 'bad_json'), words);
  }
});

t.test('CUSTOM_OAUTH_MAX_PROVIDERS: past the quota, 400 over_custom_provider_quota', async (t) => {
  t.equal((await call(limited, 'POST', '/admin/custom-providers', oauth2BodyOpen())).status, 201);
  const over = await call(limited, 'POST', '/admin/custom-providers', oauth2BodyOpen({ identifier: 'custom:second' }));
  t.same(over.body, refusal('Maximum number of custom OAuth/OIDC providers reached', 'over_custom_provider_quota'));
});

t.test('CUSTOM_OAUTH_ENABLED=false: every route answers 404 feature_disabled, once the admin guard has passed', async (t) => {
  const userToken = await adminToken('authenticated', { sub: crypto.randomUUID() });
  for (const [method, path] of [
    ['GET', '/admin/custom-providers'],
    ['POST', '/admin/custom-providers'],
    ['GET', '/admin/custom-providers/custom:x'],
    ['PUT', '/admin/custom-providers/custom:x'],
    ['DELETE', '/admin/custom-providers/custom:x'],
  ]) {
    const body = method === 'POST' || method === 'PUT' ? {} : undefined;
    const res = await call(disabled, method, path, body);
    t.same(res.body, refusal('Custom OAuth providers are disabled', 'feature_disabled', 404), `${method} ${path}`);
    const none = await disabled.request(method, path, { body });
    t.same(
      [none.status, none.body],
      [401, { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' }],
      `${method} ${path} without a token`,
    );
    const user = await disabled.request(method, path, { body, token: userToken });
    t.same([user.status, user.body], [403, { code: 403, error_code: 'not_admin', msg: 'User not allowed' }], `${method} ${path} user role`);
  }
  const signIn = await disabled.request('GET', '/authorize?provider=custom:acme-oidc');
  t.same(signIn.body, refusal('Unsupported provider: custom OAuth providers are disabled'), 'and /authorize refuses custom: providers');
});

t.test('hostile values in every field, on create and update, and odd provider names at /authorize: 4xx JSON, never 5xx', async (t) => {
  const fields = [
    ...Object.keys(oidcBody()),
    ...Object.keys(oauth2BodyOpen()),
    'scopes',
    'acceptable_client_ids',
    'custom_claims_allowlist',
    'pkce_enabled',
    'attribute_mapping',
    'authorization_params',
    'enabled',
    'email_optional',
    'discovery_url',
    'skip_nonce_check',
    'jwks_uri',
  ];
  const values: unknown[] = [
    null,
    0,
    -1,
    1e308,
    true,
    [],
    [1, 'a'],
    ['', ' '],
    {},
    { a: { b: [null] } },
    '',
    ' ',
    'x'.repeat(5000),
    '\uFFFF\uD800',
    '../../etc/passwd',
    "' or 1=1 --",
    'custom:',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'http://[::1',
    'https://user:pw@',
    'custom:a'.repeat(10),
  ];
  const failures: string[] = [];
  const check = (what: string, res: { status: number; body: any; text: string }) => {
    if (res.status >= 500 || (res.status >= 400 && typeof res.body?.error_code !== 'string'))
      failures.push(`${what} → ${res.status} ${res.text.slice(0, 120)}`);
  };
  t.equal((await call(api, 'POST', '/admin/custom-providers', oauth2BodyOpen({ identifier: 'custom:target' }))).status, 201);
  for (const field of new Set(fields)) {
    for (const value of values) {
      const base = field in oidcBody() ? oidcBody({ identifier: 'custom:hostile' }) : oauth2BodyOpen({ identifier: 'custom:hostile' });
      check(
        `POST ${field}=${JSON.stringify(value).slice(0, 40)}`,
        await call(api, 'POST', '/admin/custom-providers', { ...base, [field]: value }),
      );
      await call(api, 'DELETE', '/admin/custom-providers/custom:hostile');
      check(
        `PUT ${field}=${JSON.stringify(value).slice(0, 40)}`,
        await call(api, 'PUT', '/admin/custom-providers/custom:target', { [field]: value }),
      );
    }
  }
  for (const name of [
    'custom:',
    'custom:%00',
    'custom:x%27%20or%201%3D1',
    `custom:${'a'.repeat(5000)}`,
    'CUSTOM:TARGET',
    'custom:target%2F..%2F',
    'custom:target',
  ]) {
    check(`/authorize?provider=${name.slice(0, 40)}`, await api.request('GET', `/authorize?provider=${name}`));
    check(
      `GET /admin/custom-providers/${name.slice(0, 40)}`,
      await call(api, 'GET', `/admin/custom-providers/${encodeURIComponent(name)}`),
    );
  }
  t.same(failures, []);
  t.equal((await api.request('GET', '/health')).status, 200, 'still healthy');
  await call(api, 'DELETE', '/admin/custom-providers/custom:target');
});

t.test('an issuer that never answers: create and update answer the discovery refusal before the deadline, no 504', async (t) => {
  // The fetch's own bound (10 s) is far past this deadline: without the cap the deadline's 504 always came first.
  const silent = http.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentIssuer = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const hurried = await startTestService({ ...open, AUTH_API_MAX_REQUEST_DURATION: '1' });
  t.teardown(async () => {
    await hurried.stop();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
  const late = refusal(
    `OIDC discovery from "${silentIssuer}/.well-known/openid-configuration" failed: no answer before the request deadline`,
  );
  const created = await call(hurried, 'POST', '/admin/custom-providers', oidcBody({ identifier: 'custom:silent', issuer: silentIssuer }));
  t.same([created.status, created.body], [400, late], 'create');
  t.same((await hurried.db.query('select count(*)::int as n from custom_oauth_providers')).rows, [{ n: 0 }], 'nothing stored');

  const made = await call(hurried, 'POST', '/admin/custom-providers', oidcBody({ identifier: 'custom:moving' }));
  t.equal(made.status, 201, made.text);
  const moved = await call(hurried, 'PUT', '/admin/custom-providers/custom:moving', { issuer: silentIssuer });
  t.same([moved.status, moved.body], [400, late], 'update');
  const kept = await hurried.db.query(`select issuer from custom_oauth_providers where identifier = 'custom:moving'`);
  t.same(kept.rows, [{ issuer: idp.issuer }], 'the row is as it was');
});
