// What an app and a consent page observe of the OAuth 2.1 server, pinned against the original
// (internal/api/oauthserver/*): which endpoint answers RFC 6749 bodies {error, error_description} and which
// the service's {code, error_code, msg}; client authentication's wording per method; PKCE with S256 and
// plain; the default scope; the token answer's and userinfo's members per scope (in the original's order:
// its encoder writes a map's keys sorted); ID token claims per scope; the admin client JSON; grants.
import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import {
  APP_REDIRECT,
  authorizationIdOf,
  authorize,
  basic,
  oauthServerEnv,
  registerClient,
  signedInUser,
  tokenRequest,
} from './helpers/oauth-server.js';

const api = await startTestService(oauthServerEnv());
t.teardown(() => api.stop());
const admin = await adminToken('service_role');

const VERIFIER = 'dBjftJeZ4CVP-mJ92K9ZJMZk3Q_dmZtN8o9xG5z7jW8Lx4R2Qb1sT';
const S256 = (v: string) => createHash('sha256').update(v).digest('base64url');

/** The user approves a request built by hand (any PKCE method, scope, nonce); the code and the user. */
async function approvedCode(clientId: string, params: Record<string, string>) {
  const user = await signedInUser(api);
  const url = `${api.url}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: APP_REDIRECT, ...params })}`;
  const started = await authorize(url);
  if (started.status !== 302) throw new Error(`authorize: ${started.status} ${JSON.stringify(started.body)}`);
  const id = authorizationIdOf(started.location);
  const details = await api.request('GET', `/oauth/authorizations/${id}`, { token: user.session.access_token });
  const approval = await api.request('POST', `/oauth/authorizations/${id}/consent`, {
    token: user.session.access_token,
    body: { action: 'approve' },
  });
  const code = new URL(approval.body.redirect_url).searchParams.get('code')!;
  return { user, details, code };
}

const exchange = (c: { client_id: string; client_secret?: string }, code: string, verifier = VERIFIER) =>
  tokenRequest(api, { grant_type: 'authorization_code', code, code_verifier: verifier }, basic(c.client_id, c.client_secret!));

/** POST /oauth/token answered raw, for the member order. */
async function rawToken(headers: Record<string, string>, form: Record<string, string>) {
  const res = await fetch(`${api.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, text: await res.text() };
}

t.test('client authentication failures are the service’s 400 invalid_credentials, worded per cause', async (t) => {
  const basicClient = await registerClient(api);
  const postClient = await registerClient(api, { token_endpoint_auth_method: 'client_secret_post' });
  const publicClient = await registerClient(api, { client_type: 'public' });
  const err = (msg: string) => ({ status: 400, body: { code: 400, error_code: 'invalid_credentials', msg } });
  const form = { grant_type: 'authorization_code', code: 'x' };
  const rows: Array<[Record<string, string>, Record<string, string>, unknown]> = [
    [form, {}, err('Invalid client credentials: client_id is required')],
    [{ ...form, client_id: 'app' }, {}, err('Invalid client_id format')],
    [{ ...form, client_id: '00000000-0000-4000-8000-000000000000' }, {}, err('Invalid client credentials')],
    [form, { authorization: 'Basic !!!' }, err('Invalid client credentials: invalid basic auth encoding')],
    [
      form,
      { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
      err('Invalid client credentials: invalid basic auth format'),
    ],
    [form, basic(basicClient.client_id, 'wrong'), err('invalid client credentials')],
    [form, basic(basicClient.client_id, ''), err('confidential clients must provide client_secret')],
    [
      { ...form, client_id: basicClient.client_id, client_secret: basicClient.client_secret! },
      {},
      err("invalid authentication method: client is registered for 'client_secret_basic' but 'client_secret_post' was used"),
    ],
    [
      form,
      basic(postClient.client_id, postClient.client_secret!),
      err("invalid authentication method: client is registered for 'client_secret_post' but 'client_secret_basic' was used"),
    ],
    [
      { ...form, client_id: publicClient.client_id, client_secret: 'anything' },
      {},
      err("invalid authentication method: client is registered for 'none' but 'client_secret_post' was used"),
    ],
  ];
  for (const [body, headers, expected] of rows) {
    t.strictSame(await tokenRequest(api, body, headers), expected, JSON.stringify([body, headers]));
  }
});

t.test('grant refusals after authentication are RFC 6749 bodies with status 400', async (t) => {
  const client = await registerClient(api);
  const codeOnly = await registerClient(api, { grant_types: ['authorization_code'] });
  const auth = basic(client.client_id, client.client_secret!);
  const oauth = (error: string, error_description: string) => ({ status: 400, body: { error, error_description } });
  const rows: Array<[Record<string, string>, Record<string, string>, unknown]> = [
    [{}, auth, oauth('invalid_request', 'grant_type is required')],
    [{ grant_type: 'password' }, auth, oauth('unsupported_grant_type', 'Client is not allowed to use grant type: password')],
    [
      { grant_type: 'client_credentials' },
      auth,
      oauth('unsupported_grant_type', 'Client is not allowed to use grant type: client_credentials'),
    ],
    [
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(codeOnly.client_id, codeOnly.client_secret!),
      oauth('unsupported_grant_type', 'Client is not allowed to use grant type: refresh_token'),
    ],
    [{ grant_type: 'authorization_code' }, auth, oauth('invalid_request', 'code is required for authorization_code grant')],
    [{ grant_type: 'refresh_token' }, auth, oauth('invalid_request', 'refresh_token is required for refresh_token grant')],
    [{ grant_type: 'authorization_code', code: 'no-such-code' }, auth, oauth('invalid_grant', 'Invalid authorization code')],
  ];
  for (const [body, headers, expected] of rows) {
    t.strictSame(await tokenRequest(api, body, headers), expected, JSON.stringify(body));
  }
  // an unknown refresh token is the refresh rotation's own error, in the service's shape, as the original's
  t.strictSame(await tokenRequest(api, { grant_type: 'refresh_token', refresh_token: 'nope' }, auth), {
    status: 400,
    body: { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' },
  });
});

t.test('PKCE: S256 and plain (any case) are accepted; a wrong verifier is invalid_grant', async (t) => {
  const client = await registerClient(api);
  for (const method of ['S256', 's256', 'plain', 'PLAIN']) {
    const challenge = method.toLowerCase() === 'plain' ? VERIFIER : S256(VERIFIER);
    const { code } = await approvedCode(client.client_id, { code_challenge: challenge, code_challenge_method: method, scope: 'email' });
    t.strictSame(await exchange(client, code, `${VERIFIER}x`), {
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'PKCE verification failed: code challenge does not match previously saved code verifier',
      },
    });
    t.strictSame(await exchange(client, code, ''), {
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'PKCE verification failed: code_verifier is required when PKCE challenge is present',
      },
    });
    t.equal((await exchange(client, code)).status, 200, method);
  }
});

t.test('the default scope is email; the consent details show the request', async (t) => {
  const client = await registerClient(api, { client_name: 'Scoped', logo_uri: 'https://app.example/logo.png' });
  const { details, user } = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256' });
  t.strictSame(details.body, {
    authorization_id: details.body.authorization_id,
    redirect_uri: APP_REDIRECT,
    client: { id: client.client_id, name: 'Scoped', logo_uri: 'https://app.example/logo.png' },
    user: { id: user.user.id, email: user.user.email },
    scope: 'email',
  });
});

t.test('the token answer: its members in the original’s order, no user, an ID token only for openid', async (t) => {
  const client = await registerClient(api);
  const { code } = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256', scope: 'openid' });
  const res = await rawToken(basic(client.client_id, client.client_secret!), {
    grant_type: 'authorization_code',
    code,
    code_verifier: VERIFIER,
  });
  t.equal(res.status, 200);
  const body = JSON.parse(res.text);
  t.strictSame(Object.keys(body), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'token_type']);
  t.equal(body.token_type, 'bearer');
  t.equal(body.expires_in, 3600);
  const refreshed = await rawToken(basic(client.client_id, client.client_secret!), {
    grant_type: 'refresh_token',
    refresh_token: body.refresh_token,
  });
  t.equal(refreshed.status, 200);
  t.strictSame(
    Object.keys(JSON.parse(refreshed.text)),
    ['access_token', 'expires_in', 'refresh_token', 'token_type'],
    'no ID token on refresh',
  );
  const access = decodeJwt(body.access_token);
  t.equal(access.client_id, client.client_id);
  t.equal(access.scope, 'openid');
});

t.test('an ID token is no bearer for the user endpoints, whatever audience the request names', async (t) => {
  const client = await registerClient(api);
  const { code, user } = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'openid email',
  });
  const { id_token: idToken, access_token: accessToken } = (await exchange(client, code)).body;
  const asClient = { 'x-jwt-aud': client.client_id };
  const refused = { code: 403, error_code: 'bad_jwt', msg: 'invalid JWT: an ID token is not an access token' };
  for (const [method, path, body] of [
    ['GET', '/user', undefined],
    ['POST', '/factors', { factor_type: 'totp' }],
    ['GET', '/user/oauth/grants', undefined],
  ] as const) {
    const res = await api.request(method, path, { token: idToken, headers: asClient, body });
    t.strictSame([res.status, res.body], [403, refused], `${method} ${path}`);
  }
  const update = await api.request('PUT', '/user', { token: idToken, headers: asClient, body: { data: { taken: true } } });
  t.strictSame([update.status, update.body], [403, refused], 'PUT /user');
  const { rows } = await api.db.query('select raw_user_meta_data from users where id = $1', [user.user.id]);
  t.notOk(rows[0].raw_user_meta_data?.taken, 'nothing changed');
  const factors = await api.db.query('select count(*)::int as n from mfa_factors where user_id = $1', [user.user.id]);
  t.equal(factors.rows[0].n, 0, 'no factor enrolled');
  t.equal((await api.request('GET', '/user', { token: accessToken })).status, 200, 'the app’s access token still works');
  t.equal((await api.request('GET', '/user', { token: user.session.access_token })).status, 200, 'and the user’s own');
});

t.test('ID token claims follow the scopes; email_verified and phone_number_verified are always there', async (t) => {
  const client = await registerClient(api);
  const openidOnly = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'openid',
    nonce: 'n-1',
  });
  const bare = decodeJwt((await exchange(client, openidOnly.code)).body.id_token);
  t.strictSame(Object.keys(bare), [
    'iss',
    'sub',
    'aud',
    'exp',
    'iat',
    'nonce',
    'auth_time',
    'email_verified',
    'phone_number_verified',
    'client_id',
  ]);
  t.strictSame(
    [bare.sub, bare.aud, bare.client_id, bare.nonce, bare.email_verified],
    [openidOnly.user.user.id, client.client_id, client.client_id, 'n-1', false],
  );
  t.equal((bare.exp as number) - (bare.iat as number), 3600);

  const full = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'openid email phone profile',
  });
  await api.db.query(
    `update users set phone = '15550001111', phone_confirmed_at = now(),
       raw_user_meta_data = '{"name":"Ada","avatar_url":"https://img.example/a.png","username":"ada"}' where id = $1`,
    [full.user.user.id],
  );
  const claims = decodeJwt((await exchange(client, full.code)).body.id_token);
  t.match(claims, {
    email: full.user.user.email,
    email_verified: true,
    phone_number: '15550001111',
    phone_number_verified: true,
    name: 'Ada',
    picture: 'https://img.example/a.png',
    preferred_username: 'ada',
    updated_at: Number,
  });
  t.notOk('nonce' in claims, 'no nonce when the request had none');
});

t.test('userinfo: sub, then the claims of each granted scope, keys sorted as the original writes them', async (t) => {
  const client = await registerClient(api);
  const granted = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'email phone profile',
  });
  await api.db.query(
    `update users set phone = '15550002222', phone_confirmed_at = null, email_confirmed_at = null,
       raw_user_meta_data = '{"picture":"https://img.example/p.png","preferred_username":"pu"}' where id = $1`,
    [granted.user.user.id],
  );
  const tokens = (await exchange(client, granted.code)).body;
  const res = await fetch(`${api.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  t.equal(res.status, 200);
  const info = JSON.parse(await res.text());
  t.strictSame(Object.keys(info), ['email', 'name', 'phone', 'picture', 'preferred_username', 'sub', 'updated_at', 'user_metadata']);
  t.match(info, {
    sub: granted.user.user.id,
    email: granted.user.user.email,
    name: granted.user.user.email, // no name in the metadata: the email stands in
    phone: '15550002222',
    picture: 'https://img.example/p.png',
    preferred_username: 'pu',
    user_metadata: { picture: 'https://img.example/p.png', preferred_username: 'pu' },
  });
  t.notOk('email_verified' in info || 'phone_verified' in info, 'unconfirmed: no verified flags at all');

  const emailOnly = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256', scope: 'email' });
  const second = (await exchange(client, emailOnly.code)).body;
  const only = await api.request('GET', '/oauth/userinfo', { token: second.access_token });
  t.strictSame(only.body, { email: emailOnly.user.user.email, email_verified: true, sub: emailOnly.user.user.id });
  t.equal(only.text, JSON.stringify({ email: emailOnly.user.user.email, email_verified: true, sub: emailOnly.user.user.id }));
});

t.test('the admin client JSON: empty descriptive fields left out; regenerate answers a new secret once', async (t) => {
  const created = await api.request('POST', '/admin/oauth/clients', { token: admin, body: { redirect_uris: ['https://a.example/cb'] } });
  t.equal(created.status, 201);
  t.strictSame(Object.keys(created.body), [
    'client_id',
    'client_secret',
    'client_type',
    'redirect_uris',
    'token_endpoint_auth_method',
    'grant_types',
    'response_types',
    'registration_type',
    'created_at',
    'updated_at',
  ]);
  const id = created.body.client_id;
  const regenerated = await api.request('POST', `/admin/oauth/clients/${id}/regenerate_secret`, { token: admin });
  t.equal(regenerated.status, 200);
  t.match(regenerated.body.client_secret, /^[A-Za-z0-9_-]{43}$/);
  t.not(regenerated.body.client_secret, created.body.client_secret);
  const old = await tokenRequest(api, { grant_type: 'authorization_code', code: 'x' }, basic(id, created.body.client_secret));
  t.strictSame(old.body, { code: 400, error_code: 'invalid_credentials', msg: 'invalid client credentials' }, 'the old secret is gone');
  const fresh = await tokenRequest(api, { grant_type: 'authorization_code', code: 'x' }, basic(id, regenerated.body.client_secret));
  t.strictSame(fresh.body, { error: 'invalid_grant', error_description: 'Invalid authorization code' }, 'the new one authenticates');
  const read = await api.request('GET', `/admin/oauth/clients/${id}`, { token: admin });
  t.notOk('client_secret' in read.body);
  const unknown = await api.request('POST', '/admin/oauth/clients/00000000-0000-4000-8000-000000000000/regenerate_secret', {
    token: admin,
  });
  t.strictSame([unknown.status, unknown.body], [404, { code: 404, error_code: 'oauth_client_not_found', msg: 'OAuth client not found' }]);
});

t.test('registration validation: the original’s messages, wrapped once ("400: …")', async (t) => {
  const uris = ['https://a.example/cb'];
  const rows: Array<[Record<string, unknown>, string]> = [
    [{ redirect_uris: uris, grant_types: ['implicit'] }, "400: grant_types must only contain 'authorization_code' and/or 'refresh_token'"],
    [
      { redirect_uris: uris, token_endpoint_auth_method: 'private_key_jwt' },
      '400: token_endpoint_auth_method must be one of: [none client_secret_basic client_secret_post]',
    ],
    [{ redirect_uris: uris, client_type: 'spa' }, "400: client_type must be 'public' or 'confidential'"],
    [{ redirect_uris: uris, client_name: 'n'.repeat(1025) }, '400: client_name cannot exceed 1024 characters'],
    [{ redirect_uris: uris, logo_uri: 'not a url' }, '400: logo_uri must be a valid URL'],
    [
      { redirect_uris: ['javascript://x/alert'] },
      "400: invalid redirect_uri 'javascript://x/alert': scheme 'javascript' is not allowed for security reasons",
    ],
    [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, '400: redirect_uris cannot exceed 10 items'],
  ];
  for (const [body, msg] of rows) {
    const res = await api.request('POST', '/admin/oauth/clients', { token: admin, body });
    t.strictSame([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg }], msg);
  }
  const bad = await api.request('POST', '/admin/oauth/clients', { token: admin, body: { redirect_uris: 'https://a.example/cb' } });
  t.strictSame([bad.status, bad.body], [400, { code: 400, error_code: 'bad_json', msg: 'Invalid JSON body' }]);
});

t.test('grants: listed with the client summary and scopes, revoked once', async (t) => {
  const client = await registerClient(api, { client_name: 'Granted', client_uri: 'https://granted.example' });
  const { user } = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'email profile',
  });
  const list = await api.request('GET', '/user/oauth/grants', { token: user.session.access_token });
  t.equal(list.status, 200);
  t.strictSame(list.body, [
    {
      client: { id: client.client_id, name: 'Granted', uri: 'https://granted.example' },
      scopes: ['email', 'profile'],
      granted_at: list.body[0].granted_at,
    },
  ]);
  const path = `/user/oauth/grants?client_id=${client.client_id}`;
  t.equal((await api.request('DELETE', path, { token: user.session.access_token })).status, 204);
  const again = await api.request('DELETE', path, { token: user.session.access_token });
  t.strictSame(
    [again.status, again.body],
    [404, { code: 404, error_code: 'oauth_consent_not_found', msg: 'No active grant found for this client' }],
  );
  t.strictSame((await api.request('GET', '/user/oauth/grants', { token: user.session.access_token })).body, []);
});

t.test('a client adopted with a script address: users are not shown it, admins are', async (t) => {
  const client = await registerClient(api, { client_name: 'Adopted', client_uri: 'https://adopted.example' });
  // As the original's database may hold them: it takes any scheme.
  const script = 'javascript:alert(document.cookie)';
  await api.db.query(`update oauth_clients set client_uri = $2, logo_uri = 'data:image/svg+xml,<svg onload=alert(1)>' where id = $1`, [
    client.client_id,
    script,
  ]);
  const { details, user } = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256' });
  t.strictSame(details.body.client, { id: client.client_id, name: 'Adopted' }, 'the consent page gets neither address');
  const grants = await api.request('GET', '/user/oauth/grants', { token: user.session.access_token });
  t.strictSame(grants.body[0]?.client, { id: client.client_id, name: 'Adopted' }, 'nor does the grants list');
  const stored = await api.request('GET', `/admin/oauth/clients/${client.client_id}`, { token: admin });
  t.equal(stored.body.client_uri, script, 'the admin sees what is stored, to mend it');
});

t.test('a scope naming the same scopes many times is approved, and the consent keeps each once', async (t) => {
  const client = await registerClient(api);
  // 3,000 characters: within the request's 4,096, beyond the stored consent's 2,048 if kept as written.
  const scope = Array.from({ length: 500 }, (_, i) => (i % 2 ? 'email' : 'profile')).join(' ');
  const { user, code } = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256', scope });
  t.ok(code, 'the approval redirects with a code');
  const list = await api.request('GET', '/user/oauth/grants', { token: user.session.access_token });
  t.strictSame(list.body[0]?.scopes, ['profile', 'email']);
  const tokens = await exchange(client, code);
  t.equal(tokens.status, 200, 'and the code is exchanged');
});

t.test('a JSON token request: the resource bound to the code must match; a banned user is access_denied', async (t) => {
  const client = await registerClient(api, { token_endpoint_auth_method: 'client_secret_post' });
  const { code, user } = await approvedCode(client.client_id, {
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    resource: 'https://api.example/v1',
  });
  const json = (body: Record<string, string>) =>
    api.request('POST', '/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        client_id: client.client_id,
        client_secret: client.client_secret,
        ...body,
      },
    });
  const other = await json({ resource: 'https://other.example/v1' });
  t.strictSame(
    [other.status, other.body],
    [400, { error: 'invalid_grant', error_description: 'Authorization code resource does not match the resource parameter' }],
  );
  await api.db.query(`update users set banned_until = now() + interval '1 hour' where id = $1`, [user.user.id]);
  const banned = await json({ resource: 'https://api.example/v1' });
  t.strictSame([banned.status, banned.body], [400, { error: 'access_denied', error_description: 'User is banned' }]);
  await api.db.query(`update users set banned_until = null where id = $1`, [user.user.id]);
  const ok = await json({ resource: 'https://api.example/v1' });
  t.equal(ok.status, 200, 'the refusals left the code usable');
});

t.test('a blank scope is refused back to the app; a decided request cannot be shown again', async (t) => {
  const client = await registerClient(api);
  const url = `${api.url}/oauth/authorize?${new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: APP_REDIRECT,
    scope: '  ',
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    state: 'st',
  })}`;
  const blank = await authorize(url);
  t.equal(blank.status, 302);
  t.strictSame(Object.fromEntries(new URL(blank.location!).searchParams), {
    error: 'invalid_request',
    error_description: 'scope parameter cannot be empty',
    state: 'st',
  });
  const { details, user } = await approvedCode(client.client_id, { code_challenge: S256(VERIFIER), code_challenge_method: 'S256' });
  const again = await api.request('GET', `/oauth/authorizations/${details.body.authorization_id}`, { token: user.session.access_token });
  t.strictSame(
    [again.status, again.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'authorization request cannot be processed' }],
  );
});

t.test('with an ES256 signing key the metadata offers openid and names that one algorithm', async (t) => {
  const res = await api.request('GET', '/.well-known/openid-configuration');
  t.strictSame(res.body.scopes_supported, ['openid', 'profile', 'email', 'phone', 'offline_access']);
  // ours: the algorithm ID tokens are signed with; the original always lists RS256, HS256, ES256 (docs/differences.md)
  t.strictSame(res.body.id_token_signing_alg_values_supported, ['ES256']);
  t.equal(res.body.registration_endpoint, undefined, 'dynamic registration is off');
});
