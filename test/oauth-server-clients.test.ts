// The OAuth 2.1 server's client management and discovery (docs/oauth-server.md#clients, #discovery): an
// operator registers, lists, reads, changes, deletes clients and regenerates a secret (stored hashed); the
// metadata documents name what is built; the whole feature answers 404 while OAUTH_SERVER_ENABLED is off.
import t from 'tap';
import { createHash } from 'node:crypto';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_OAUTH_SERVER_ENABLED: 'true', AUTH_OAUTH_SERVER_AUTHORIZATION_PATH: '/consent' });
const off = await startTestService();
t.teardown(() => Promise.all([api.stop(), off.stop()]));
const admin = await adminToken('service_role');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const create = (body: unknown) => api.request('POST', '/admin/oauth/clients', { token: admin, body });

t.test('registering a confidential client: its secret is answered once and stored as its SHA-256', async (t) => {
  const res = await create({ client_name: 'Acme', redirect_uris: ['https://acme.example/cb'], client_uri: 'https://acme.example' });
  t.equal(res.status, 201);
  const { client_id, client_secret, created_at, updated_at, ...rest } = res.body;
  t.match(client_id, UUID);
  t.match(client_secret, /^[A-Za-z0-9_-]{43}$/);
  t.ok(Date.parse(created_at) && Date.parse(updated_at));
  t.strictSame(rest, {
    client_type: 'confidential',
    redirect_uris: ['https://acme.example/cb'],
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_name: 'Acme',
    client_uri: 'https://acme.example',
    registration_type: 'manual',
  });
  const { rows } = await api.db.query('select client_secret_hash from oauth_clients where id = $1', [client_id]);
  t.equal(rows[0].client_secret_hash, createHash('sha256').update(client_secret).digest('base64url'));
  const read = await api.request('GET', `/admin/oauth/clients/${client_id}`, { token: admin });
  t.equal(read.status, 200);
  t.notOk('client_secret' in read.body, 'never shown again');
  t.equal(read.body.client_name, 'Acme');
});

t.test('a public client: auth method none, no secret', async (t) => {
  const res = await create({ redirect_uris: ['myapp://callback'], client_type: 'public' });
  t.equal(res.status, 201);
  t.equal(res.body.client_type, 'public');
  t.equal(res.body.token_endpoint_auth_method, 'none');
  t.notOk('client_secret' in res.body);
  const again = await api.request('POST', `/admin/oauth/clients/${res.body.client_id}/regenerate_secret`, { token: admin });
  t.equal(again.status, 400);
  t.strictSame(again.body, { code: 400, error_code: 'validation_failed', msg: 'Cannot regenerate secret for public client' });
});

t.test('registration refusals carry the original wording, wrapped as it wraps them', async (t) => {
  const rows: Array<[unknown, number, string, string]> = [
    [{}, 400, 'validation_failed', '400: redirect_uris is required'],
    [
      { redirect_uris: ['http://evil.example/cb'] },
      400,
      'validation_failed',
      "400: invalid redirect_uri 'http://evil.example/cb': HTTP scheme only allowed for localhost",
    ],
    [
      { redirect_uris: ['https://a.example/cb#x'] },
      400,
      'validation_failed',
      "400: invalid redirect_uri 'https://a.example/cb#x': fragment not allowed in redirect URI",
    ],
    [
      { redirect_uris: ['javascript://x/alert(1)'] },
      400,
      'validation_failed',
      "400: invalid redirect_uri 'javascript://x/alert(1)': scheme 'javascript' is not allowed for security reasons",
    ],
    [
      { redirect_uris: ['https://a.example/cb'], grant_types: ['password'] },
      400,
      'validation_failed',
      "400: grant_types must only contain 'authorization_code' and/or 'refresh_token'",
    ],
    [
      { redirect_uris: ['https://a.example/cb'], client_type: 'public', token_endpoint_auth_method: 'client_secret_post' },
      400,
      'validation_failed',
      "400: client_type 'public' is inconsistent with token_endpoint_auth_method 'client_secret_post' (expected client_type 'confidential')",
    ],
    [{ redirect_uris: 'https://a.example/cb' }, 400, 'bad_json', 'Invalid JSON body'],
  ];
  for (const [body, status, code, msg] of rows) {
    const res = await create(body);
    t.strictSame([res.status, res.body], [status, { code: status, error_code: code, msg }], JSON.stringify(body));
  }
  const garbage = await api.request('POST', '/admin/oauth/clients', {
    token: admin,
    raw: '{"redirect_uris": [',
    headers: { 'content-type': 'application/json' },
  });
  t.strictSame(garbage.body, { code: 400, error_code: 'bad_json', msg: 'Invalid JSON body' });
  const { rows: count } = await api.db.query(
    `select count(*)::int as n from oauth_clients where client_name is null and redirect_uris like '%a.example%'`,
  );
  t.equal(count[0].n, 0, 'nothing written by a refused registration');
});

t.test("redirect URIs are read as the original's parser reads them, refused with its reasons", async (t) => {
  const accepted = [
    'https://example.com/callback',
    'https://example.com:8443/callback',
    'https://example.com/callback?foo=bar',
    'http://localhost:3000/callback',
    'http://localhost/callback',
    'http://127.0.0.1:8080/callback',
    'http://[::1]:8080/callback',
    'http://localhost:/callback',
    'myapp://callback',
    'com.example.app://oauth/callback',
    'myapp://localhost:8080/callback',
    'https://example.com/callback#',
    'https://user:p%40ss@example.com/callback',
  ];
  for (const uri of accepted) t.equal((await create({ redirect_uris: [uri] })).status, 201, uri);
  const refused: Array<[string, string]> = [
    ['http://example.com/callback', 'HTTP scheme only allowed for localhost'],
    ['http://192.168.1.1/callback', 'HTTP scheme only allowed for localhost'],
    ['http://LOCALHOST/callback', 'HTTP scheme only allowed for localhost'],
    ['http://127.1/callback', 'HTTP scheme only allowed for localhost'],
    ['http://0x7f000001/callback', 'HTTP scheme only allowed for localhost'],
    ['https://example.com/callback#fragment', 'fragment not allowed in redirect URI'],
    ['myapp://callback#fragment', 'fragment not allowed in redirect URI'],
    ['example.com/callback', 'must have scheme and host'],
    ['https:///callback', 'must have scheme and host'],
    ['not-a-uri', 'must have scheme and host'],
    ['https:example.com/callback', 'must have scheme and host'],
    ['http:///localhost/callback', 'must have scheme and host'],
    ['javascript:alert(1)', 'must have scheme and host'],
    ['javascript://example.com/alert(1)', "scheme 'javascript' is not allowed for security reasons"],
    ['data://text/html,<script>alert(1)</script>', "scheme 'data' is not allowed for security reasons"],
    ['file://localhost/etc/passwd', "scheme 'file' is not allowed for security reasons"],
    ['vbscript://example.com/malicious', "scheme 'vbscript' is not allowed for security reasons"],
    ['about://blank', "scheme 'about' is not allowed for security reasons"],
    ['blob://example.com/something', "scheme 'blob' is not allowed for security reasons"],
    ['JAVASCRIPT://example.com/alert(1)', "scheme 'javascript' is not allowed for security reasons"],
    ['https://exa mple.com/callback', 'invalid URL format'],
    ['https://example.com/%zz', 'invalid URL format'],
    ['http://localhost:3000:80/callback', 'invalid URL format'],
    ['https://[127.0.0.1]/callback', 'invalid URL format'],
    [' https://example.com/callback', 'invalid URL format'],
    // ours: the original's parser takes these, no browser can open them (docs/differences.md)
    ['https://example.com:99999/callback', 'invalid URL format'],
    ['https://a<b.example/callback', 'invalid URL format'],
  ];
  for (const [uri, reason] of refused) {
    const res = await create({ redirect_uris: [uri] });
    const msg = `400: invalid redirect_uri '${uri}': ${reason}`;
    t.strictSame([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg }], uri);
  }
  const made = (await create({ redirect_uris: ['https://example.com/callback'] })).body;
  const update = await api.request('PUT', `/admin/oauth/clients/${made.client_id}`, {
    token: admin,
    body: { redirect_uris: ['https:///callback'] },
  });
  t.strictSame(update.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: "invalid redirect_uri 'https:///callback': must have scheme and host",
  });
});

t.test('the length limits count UTF-8 bytes, as the original counts them', async (t) => {
  const uri = 'https://a.example/cb';
  const long = await create({ client_name: '漢'.repeat(400), redirect_uris: [uri] });
  t.strictSame(
    [long.status, long.body],
    [400, { code: 400, error_code: 'validation_failed', msg: '400: client_name cannot exceed 1024 characters' }],
    '400 characters, 1200 bytes',
  );
  t.equal((await create({ client_name: '漢'.repeat(341), redirect_uris: [uri] })).status, 201, '1023 bytes');
  const longUri = await create({ client_uri: `https://a.example/${'é'.repeat(1020)}`, redirect_uris: [uri] });
  t.strictSame(longUri.body, { code: 400, error_code: 'validation_failed', msg: '400: client_uri cannot exceed 2048 characters' });
  const made = (await create({ redirect_uris: [uri] })).body;
  const update = await api.request('PUT', `/admin/oauth/clients/${made.client_id}`, {
    token: admin,
    body: { logo_uri: `https://a.example/${'é'.repeat(1020)}` },
  });
  t.strictSame(update.body, { code: 400, error_code: 'validation_failed', msg: 'logo_uri cannot exceed 2048 characters' });
});

t.test('client_uri and logo_uri are read as the original reads them (a request URI, as Go parses it)', async (t) => {
  const uri = 'https://a.example/cb';
  for (const bad of ['https://a.example/\tx', ' https://a.example', 'https://a.example/%zz', 'a.example/home']) {
    const res = await create({ client_uri: bad, redirect_uris: [uri] });
    t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg: '400: client_uri must be a valid URL' }, JSON.stringify(bad));
  }
  for (const good of ['https://a.example:99999/home', 'https://*.a.example/', '/relative/logo.png', 'HTTP://a.example/logo.png']) {
    t.equal((await create({ logo_uri: good, redirect_uris: [uri] })).status, 201, JSON.stringify(good));
  }
  // Shown on the consent page: an address that runs script there is refused, though the original takes it.
  for (const key of ['client_uri', 'logo_uri']) {
    for (const script of ['javascript:alert(document.cookie)', 'JavaScript://a.example/%0aalert(1)', 'data:text/html,<script>1</script>']) {
      const res = await create({ [key]: script, redirect_uris: [uri] });
      t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg: `400: ${key} must be an http or https URL` }, script);
    }
  }
  const made = (await create({ redirect_uris: [uri] })).body;
  const update = await api.request('PUT', `/admin/oauth/clients/${made.client_id}`, {
    token: admin,
    body: { client_uri: 'vbscript:msgbox(1)' },
  });
  t.strictSame(
    update.body,
    { code: 400, error_code: 'validation_failed', msg: 'client_uri must be an http or https URL' },
    'on update too',
  );
  const { rows } = await api.db.query(
    `select count(*)::int as n from oauth_clients where concat(client_uri, ' ', logo_uri) ~* '(javascript|data|vbscript):'`,
  );
  t.equal(rows[0].n, 0, 'none was stored');
});

t.test('update, list, regenerate, delete', async (t) => {
  const made = (await create({ client_name: 'Before', redirect_uris: ['https://b.example/cb'] })).body;
  const path = `/admin/oauth/clients/${made.client_id}`;
  const empty = await api.request('PUT', path, { token: admin, body: {} });
  t.strictSame(empty.body, { code: 400, error_code: 'validation_failed', msg: 'No fields provided for update' });
  const wrongMethod = await api.request('PUT', path, { token: admin, body: { token_endpoint_auth_method: 'none' } });
  t.strictSame(wrongMethod.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: "token_endpoint_auth_method 'none' is not valid for client_type 'confidential'; valid methods: [client_secret_basic client_secret_post]",
  });
  const updated = await api.request('PUT', path, {
    token: admin,
    body: {
      client_name: 'After',
      client_uri: 'https://b.example/about',
      redirect_uris: ['https://b.example/cb', 'http://localhost:8080/cb'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  });
  t.equal(updated.status, 200);
  t.equal(updated.body.client_name, 'After');
  t.equal(updated.body.client_uri, 'https://b.example/about');
  t.strictSame(updated.body.redirect_uris, ['https://b.example/cb', 'http://localhost:8080/cb']);
  t.equal(updated.body.token_endpoint_auth_method, 'client_secret_post');
  const cleared = await api.request('PUT', path, { token: admin, body: { client_uri: '' } });
  t.equal(cleared.status, 200);
  const stored = (await api.db.query('select client_name, client_uri from oauth_clients where id = $1', [made.client_id])).rows[0];
  t.strictSame(stored, { client_name: 'After', client_uri: null }, "an empty URI is stored NULL, as the original's update stores it");

  const list = await api.request('GET', '/admin/oauth/clients', { token: admin });
  t.equal(list.status, 200);
  t.ok(list.body.clients.some((c: any) => c.client_id === made.client_id && c.client_name === 'After'));

  // Any spelling the original's UUID reading takes names the client.
  const bare = await api.request('GET', `/admin/oauth/clients/${made.client_id.replace(/-/g, '').toUpperCase()}`, { token: admin });
  t.strictSame([bare.status, bare.body.client_id], [200, made.client_id]);
  const urn = await api.request('GET', `/admin/oauth/clients/urn:uuid:${made.client_id}`, { token: admin });
  t.strictSame([urn.status, urn.body.client_id], [200, made.client_id]);

  const regenerated = await api.request('POST', `${path}/regenerate_secret`, { token: admin });
  t.equal(regenerated.status, 200);
  t.not(regenerated.body.client_secret, made.client_secret);
  const { rows } = await api.db.query('select client_secret_hash from oauth_clients where id = $1', [made.client_id]);
  t.equal(rows[0].client_secret_hash, createHash('sha256').update(regenerated.body.client_secret).digest('base64url'));

  t.equal((await api.request('DELETE', path, { token: admin })).status, 204);
  const gone = await api.request('GET', path, { token: admin });
  t.strictSame([gone.status, gone.body], [404, { code: 404, error_code: 'oauth_client_not_found', msg: 'OAuth client not found' }]);
  const badId = await api.request('GET', '/admin/oauth/clients/not-a-uuid', { token: admin });
  t.strictSame([badId.status, badId.body], [400, { code: 400, error_code: 'validation_failed', msg: 'invalid client_id format' }]);
});

t.test("through auth-js's admin API: create, list, read, update, regenerate the secret, delete", async (t) => {
  const js = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${admin}` } });
  const made = await js.oauth.createClient({ client_name: 'Via JS', redirect_uris: ['https://js.example/cb'] });
  t.equal(made.error, null);
  const id = made.data!.client_id;
  t.match(made.data, { client_name: 'Via JS', client_type: 'confidential', client_secret: /.{32,}/ });
  // listClients sends `page=&per_page=` when given no page: the list comes back whole, as the original's.
  const listed = await js.oauth.listClients();
  t.equal(listed.error, null);
  t.ok(
    listed.data.clients.some((c) => c.client_id === id),
    'the new client is listed',
  );
  t.match((await js.oauth.getClient(id)).data, { client_id: id, client_name: 'Via JS' });
  t.match((await js.oauth.updateClient(id, { client_name: 'Via JS 2' })).data, { client_id: id, client_name: 'Via JS 2' });
  const regenerated = await js.oauth.regenerateClientSecret(id);
  t.ok(regenerated.data?.client_secret && regenerated.data.client_secret !== made.data!.client_secret, 'a new secret');
  t.strictSame(await js.oauth.deleteClient(id), { data: null, error: null });
  t.match((await js.oauth.getClient(id)).error, { status: 404, code: 'oauth_client_not_found' });
});

t.test('only admins manage clients', async (t) => {
  const res = await api.request('GET', '/admin/oauth/clients', { token: await adminToken('authenticated') });
  t.equal(res.status, 403);
  t.equal(res.body.error_code, 'not_admin');
});

t.test('dynamic registration is refused unless switched on', async (t) => {
  const res = await api.request('POST', '/oauth/clients/register', { body: { redirect_uris: ['https://d.example/cb'] } });
  t.strictSame(
    [res.status, res.body],
    [403, { code: 403, error_code: 'oauth_dynamic_client_registration_disabled', msg: 'Dynamic client registration is not enabled' }],
  );
});

t.test('the metadata document names the endpoints, our JWKS and what is supported', async (t) => {
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const res = await api.request('GET', path);
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'public, max-age=600');
    t.strictSame(res.body, {
      issuer: api.url,
      authorization_endpoint: `${api.url}/oauth/authorize`,
      token_endpoint: `${api.url}/oauth/token`,
      jwks_uri: `${api.url}/.well-known/jwks.json`,
      userinfo_endpoint: `${api.url}/oauth/userinfo`,
      // JWT_SECRET only: ID tokens are never HS256, so openid is not offered
      scopes_supported: ['profile', 'email', 'phone', 'offline_access'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      claims_supported: [
        'sub',
        'aud',
        'iss',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'email',
        'email_verified',
        'phone_number',
        'phone_number_verified',
        'name',
        'picture',
        'preferred_username',
        'updated_at',
      ],
      code_challenge_methods_supported: ['S256', 'plain'],
    });
  }
});

t.test('with OAUTH_SERVER_ENABLED off every OAuth server route is 404 feature_disabled', async (t) => {
  const disabled = { code: 404, error_code: 'feature_disabled', msg: 'OAuth server is disabled' };
  const calls: Array<[string, string, Record<string, unknown>]> = [
    ['GET', '/.well-known/oauth-authorization-server', {}],
    ['GET', '/admin/oauth/clients', { token: admin }],
    ['POST', '/admin/oauth/clients', { token: admin, body: { redirect_uris: ['https://x.example/cb'] } }],
    ['POST', '/oauth/clients/register', { body: {} }],
    ['GET', '/oauth/authorize?client_id=x&redirect_uri=y', {}],
    ['POST', '/oauth/token', { body: { grant_type: 'authorization_code' } }],
    ['GET', '/oauth/authorizations/abc', { token: admin }],
    ['GET', '/oauth/userinfo', { token: admin }],
  ];
  for (const [method, path, options] of calls) {
    const res = await off.request(method, path, options);
    t.strictSame([res.status, res.body], [404, disabled], `${method} ${path}`);
  }
  t.equal(
    (await off.request('GET', '/.well-known/openid-configuration')).status,
    200,
    'the OpenID document answers regardless, as the original',
  );
  // as the original, the admin and /user routes check the bearer before the switch
  for (const path of ['/admin/oauth/clients', '/user/oauth/grants']) {
    const res = await off.request('GET', path);
    t.strictSame(
      [res.status, res.body],
      [401, { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' }],
      path,
    );
  }
});
