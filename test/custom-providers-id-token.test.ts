// The id_token a custom OIDC provider returns at /callback is verified before anyone is signed in
// (docs/custom-providers.md#signing-in): signature by a key of the issuer's JWKS with an algorithm its
// discovery document names (RS256 here; an ES256 key also in the JWKS must not pass), never HMAC or
// `none`; `iss` exactly the issuer; `aud` the client id or one of acceptable_client_ids; not expired.
// The provider is a small server in the OAuth 2.0 / OIDC wire format whose token answer carries an
// id_token the test makes, so forged ones can be handed over. Every refusal signs nobody in. The same
// checks hold at POST /token?grant_type=id_token with `provider: "custom:<id>"` (auth-js signInWithIdToken),
// which refuses switched-off, unknown, disabled and plain OAuth2 providers with the original's answers.
import t from 'tap';
import { createHash } from 'node:crypto';
import { SignJWT, generateKeyPair, type KeyLike } from 'jose';
import { startTestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf, queryOf } from './helpers/oauth.js';

const idp = await startOAuth2Server();
const api = await startTestService({
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
});
const token = await adminToken();
t.teardown(async () => {
  await api.stop();
  await idp.stop();
});

/** Why each forged token was refused: the log says, the redirect does not (checked once the log is complete). */
const refusalCauses: RegExp[] = [];

const created = await api.request('POST', '/admin/custom-providers', {
  token,
  body: {
    provider_type: 'oidc',
    identifier: 'custom:strict',
    name: 'Strict',
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    issuer: idp.base,
    pkce_enabled: false,
  },
});
if (created.status !== 201) throw new Error(created.text);

interface Forge {
  key?: KeyLike | Uint8Array;
  alg?: string;
  kid?: string;
  issuer?: string;
  /** null: no `aud` claim */
  audience?: string | string[] | null;
  /** null: no `exp` claim */
  expires?: string | number | null;
}

function mint(f: Forge = {}) {
  return (profile: Record<string, unknown>) => {
    const jwt = new SignJWT(profile)
      .setProtectedHeader({ alg: f.alg ?? 'RS256', kid: f.kid ?? 'rs' })
      .setIssuer(f.issuer ?? idp.base)
      .setIssuedAt();
    if (f.audience !== null) jwt.setAudience(f.audience ?? idp.clientId);
    if (f.expires !== null) jwt.setExpirationTime(f.expires ?? '5m');
    return jwt.sign(f.key ?? idp.keys.rs);
  };
}

async function signIn(sub: string, forge: Forge = {}) {
  idp.approveAs = { sub, email: `${sub}@example.com`, email_verified: true };
  idp.issueIdToken = mint(forge);
  const start = await api.request('GET', '/authorize?provider=custom:strict');
  if (start.status !== 302) throw new Error(start.text);
  const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  return (await callback(api, new URL(approved.headers.get('location')!).searchParams)).location;
}

const users = async () => (await api.db.query('select count(*)::int as n from users')).rows[0].n;

t.test('a token signed by the published RS256 key signs in, with its claims', async (t) => {
  const location = await signIn('good-1');
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'good-1@example.com');
  t.match(me.body.identities, [{ provider: 'custom:strict', id: 'good-1', identity_data: { iss: idp.base, sub: 'good-1' } }]);
});

t.test('forged, misdirected and expired tokens are refused, and nobody is signed in', async (t) => {
  const before = await users();
  const { privateKey: stranger } = await generateKeyPair('RS256');
  const causes: RegExp[] = [];
  const cases: [string, Forge, RegExp][] = [
    [
      'an ES256 key of the JWKS, an algorithm the discovery document does not name',
      { alg: 'ES256', kid: 'es', key: idp.keys.es },
      /signature algorithm not allowed/,
    ],
    [
      'HS256 keyed with the client secret',
      { alg: 'HS256', key: new TextEncoder().encode(idp.clientSecret) },
      /signature algorithm not allowed/,
    ],
    ['a key the issuer never published', { key: stranger }, /signature verification failed/],
    ['another issuer', { issuer: 'https://evil.example.test' }, /unexpected issuer/],
    ['another audience', { audience: 'someone-else' }, /unacceptable audience/],
    ['expired', { expires: Math.floor(Date.now() / 1000) - 60 }, /token is expired/],
    ['without exp', { expires: null }, /token has no exp claim/],
  ];
  for (const [name, forge, why] of cases) {
    const location = await signIn(`bad-${name.length}`, forge);
    const q = queryOf(location);
    t.match(q, { error: 'server_error', error_code: 'unexpected_failure' }, name);
    t.equal(q.error_description, 'Error getting user profile from external provider', `${name}: the cause is not in the URL`);
    causes.push(why);
    t.notOk(fragmentOf(location).access_token, `${name}: no session`);
  }
  t.equal(await users(), before, 'no user was created');
  refusalCauses.push(...causes);
});

t.test('acceptable_client_ids: an audience of another registered client id is accepted once listed', async (t) => {
  const refused = queryOf(await signIn('multi-1', { audience: 'ios-client' }));
  t.equal(refused.error_code, 'unexpected_failure', 'refused before it is listed');
  refusalCauses.push(/unacceptable audience/);
  const updated = await api.request('PUT', '/admin/custom-providers/custom:strict', {
    token,
    body: { acceptable_client_ids: ['ios-client'] },
  });
  t.same(updated.body.acceptable_client_ids, ['ios-client']);
  const location = await signIn('multi-1', { audience: 'ios-client' });
  t.ok(fragmentOf(location).access_token, location.href);
});

t.test('without an id_token, the userinfo endpoint; an answer over 1 MiB is refused', async (t) => {
  idp.issueIdToken = undefined;
  idp.approveAs = { sub: 'info-1', email: 'info-1@example.com', email_verified: true };
  const start = await api.request('GET', '/authorize?provider=custom:strict');
  let approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  let { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'info-1@example.com');

  idp.approveAs = { sub: 'info-2', email: 'info-2@example.com', padding: 'x'.repeat(1_100_000) };
  const again = await api.request('GET', '/authorize?provider=custom:strict');
  approved = await fetch(again.headers.get('location')!, { redirect: 'manual' });
  ({ location } = await callback(api, new URL(approved.headers.get('location')!).searchParams));
  t.match(queryOf(location), { error_code: 'unexpected_failure', error_description: 'Error getting user profile from external provider' });
  refusalCauses.push(/answered more than 1048576 bytes/);
  t.equal((await api.db.query('select count(*)::int as n from users where email = $1', ['info-2@example.com'])).rows[0].n, 0);
});

t.test("attribute_mapping on an id_token: the address is the token's own, the mapped sub names the identity", async (t) => {
  const mapping = async (attribute_mapping: Record<string, unknown>) => {
    const res = await api.request('PUT', '/admin/custom-providers/custom:strict', { token, body: { attribute_mapping } });
    if (res.status !== 200) throw new Error(res.text);
  };
  await mapping({ email: 'nickname', sub: 'preferred_username' });
  t.teardown(() => mapping({}));
  idp.approveAs = {
    sub: 'map-1',
    email: 'map-1@example.com',
    email_verified: true,
    nickname: 'other@example.com',
    preferred_username: 'mapped-1',
  };
  idp.issueIdToken = mint();
  const start = await api.request('GET', '/authorize?provider=custom:strict');
  const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  const { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'map-1@example.com', "a mapped email does not change the user's address");
  t.match(me.body.identities, [
    {
      provider: 'custom:strict',
      id: 'mapped-1',
      identity_data: { sub: 'mapped-1', email: 'map-1@example.com', nickname: 'other@example.com' },
    },
  ]);
});

const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });
const nonce = 'raw-nonce-0123456789';
const nonceHash = createHash('sha256').update(nonce).digest('hex');

t.test('id_token grant: signInWithIdToken with custom:strict signs in with identity provider custom:strict', async (t) => {
  const client = authClient(api.url);
  const token = await mint()({ sub: 'grant-1', email: 'grant-1@example.com', email_verified: true, nonce: nonceHash, team: 'blue' });
  const { data, error } = await client.signInWithIdToken({ provider: 'custom:strict', token, nonce });
  t.error(error);
  t.ok(data.session?.access_token && data.session.refresh_token, 'a session');
  t.equal(data.user?.email, 'grant-1@example.com');
  t.ok(data.user?.email_confirmed_at, 'the provider verified the address');
  t.match(data.user?.identities, [
    { provider: 'custom:strict', id: 'grant-1', identity_data: { iss: idp.base, sub: 'grant-1', email: 'grant-1@example.com' } },
  ]);
  t.notOk(data.user?.identities?.[0].identity_data?.custom_claims, 'claims outside the standard set are not kept, as the original');
  t.equal(data.user?.app_metadata.provider, 'custom:strict');

  const again = await grant({ provider: 'custom:strict', id_token: token, nonce });
  t.equal(again.body.user.id, data.user?.id, 'the same identity signs in the same user');
  const ios = await grant({ provider: 'custom:strict', id_token: await mint({ audience: 'ios-client' })({ sub: 'grant-1' }) });
  t.equal(ios.status, 200, 'an audience of acceptable_client_ids passes');
});

t.test('id_token grant: forged, misdirected and expired tokens are refused, and nobody is signed in', async (t) => {
  const before = await users();
  const { privateKey: stranger } = await generateKeyPair('RS256');
  const claims = { sub: 'grant-bad', email: 'grant-bad@example.com', email_verified: true };
  const bad = { error: 'invalid request', error_description: 'Bad ID token' };
  const cases: [string, Forge][] = [
    ['an ES256 key of the JWKS, an algorithm the discovery document does not name', { alg: 'ES256', kid: 'es', key: idp.keys.es }],
    ['HS256 keyed with the client secret', { alg: 'HS256', key: new TextEncoder().encode(idp.clientSecret) }],
    ['a key the issuer never published', { key: stranger }],
    ['another issuer', { issuer: 'https://evil.example.test' }],
    ['expired', { expires: Math.floor(Date.now() / 1000) - 60 }],
    ['without exp', { expires: null }],
  ];
  for (const [name, forge] of cases) {
    const res = await grant({ provider: 'custom:strict', id_token: await mint(forge)(claims) });
    t.same([res.status, res.body], [400, bad], name);
  }
  const aud = await grant({ provider: 'custom:strict', id_token: await mint({ audience: 'someone-else' })(claims) });
  t.same(
    [aud.status, aud.body],
    [400, { error: 'invalid request', error_description: 'Unacceptable audience in id_token: [someone-else]' }],
  );
  t.equal(await users(), before, 'no user was created');
});

t.test("id_token grant: no sub, and an aud naming none of the clients, are refused in the original's words and order", async (t) => {
  const before = await users();
  const refusal = (error_description: string) => [400, { error: 'invalid request', error_description }];
  const anonymous = { email: 'no-sub@example.com', email_verified: true };
  const cases: [string, Record<string, unknown>, Forge, string][] = [
    ['no sub', anonymous, {}, 'Missing sub claim in id_token'],
    ['an empty sub', { ...anonymous, sub: '' }, {}, 'Missing sub claim in id_token'],
    ['no sub, another audience: sub is checked first', anonymous, { audience: 'someone-else' }, 'Missing sub claim in id_token'],
    ['no aud', { ...anonymous, sub: 'grant-aud' }, { audience: null }, 'Unacceptable audience in id_token: []'],
    ['two others', { ...anonymous, sub: 'grant-aud' }, { audience: ['web', 'ios'] }, 'Unacceptable audience in id_token: [web ios]'],
  ];
  for (const [name, claims, forge, description] of cases) {
    const res = await grant({ provider: 'custom:strict', id_token: await mint(forge)(claims) });
    t.same([res.status, res.body], refusal(description), name);
  }
  t.equal(await users(), before, 'no user was created');
});

t.test('id_token grant: the nonce is checked unless the row skips it; email is required unless optional', async (t) => {
  const token = await mint()({ sub: 'grant-2', email: 'grant-2@example.com', email_verified: true });
  const refused = await grant({ provider: 'custom:strict', id_token: token, nonce });
  t.same(refused.body, {
    error: 'invalid request',
    error_description: 'Passed nonce and nonce in id_token should either both exist or not.',
  });
  const noEmail = await mint()({ sub: 'grant-3' });
  t.match((await grant({ provider: 'custom:strict', id_token: noEmail })).body, {
    code: 500,
    error_code: 'unexpected_failure',
    msg: 'Error getting user email from external provider',
  });

  const updated = await api.request('PUT', '/admin/custom-providers/custom:strict', {
    token: await adminToken(),
    body: { skip_nonce_check: true, email_optional: true },
  });
  t.equal(updated.status, 200, updated.text);
  t.equal((await grant({ provider: 'custom:strict', id_token: token, nonce })).status, 200, 'skip_nonce_check');
  const withoutEmail = await grant({ provider: 'custom:strict', id_token: noEmail });
  t.equal(withoutEmail.status, 200, 'email_optional');
  t.equal(withoutEmail.body.user.email, '');
});

t.test('id_token grant: unknown, disabled and OAuth2 custom providers get the original answers', async (t) => {
  const admin = await adminToken();
  const create = async (body: Record<string, unknown>) => {
    const res = await api.request('POST', '/admin/custom-providers', { token: admin, body });
    if (res.status !== 201) throw new Error(res.text);
  };
  await create({
    provider_type: 'oidc',
    identifier: 'custom:off',
    name: 'Off',
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    issuer: idp.base,
    enabled: false,
  });
  await create({
    provider_type: 'oauth2',
    identifier: 'custom:plain',
    name: 'Plain',
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    authorization_url: `${idp.base}/oauth/authorize`,
    token_url: `${idp.base}/oauth/token`,
    userinfo_url: `${idp.base}/api/me`,
  });
  const token = await mint()({ sub: 'grant-4', email: 'grant-4@example.com', email_verified: true });
  const answer = async (provider: string) => {
    const res = await grant({ provider, id_token: token });
    return [res.status, res.body];
  };
  t.same(await answer('custom:nobody'), [
    400,
    { code: 400, error_code: 'validation_failed', msg: 'Custom provider "custom:nobody" not found' },
  ]);
  t.same(await answer('custom:off'), [
    400,
    { code: 400, error_code: 'provider_disabled', msg: 'Custom provider "custom:off" is disabled' },
  ]);
  t.same(await answer('custom:plain'), [
    400,
    { code: 400, error_code: 'validation_failed', msg: 'Provider "custom:plain" is not an OIDC provider' },
  ]);
  t.equal((await api.db.query('select count(*)::int as n from users where email = $1', ['grant-4@example.com'])).rows[0].n, 0);
});

t.test('id_token grant: with CUSTOM_OAUTH_ENABLED off, custom providers are refused', async (t) => {
  const off = await startTestService({
    AUTH_CUSTOM_OAUTH_ENABLED: 'false',
    AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
    DATABASE_URL: (api.db as unknown as { options: { connectionString: string } }).options.connectionString,
  });
  t.teardown(() => off.stop());
  const token = await mint()({ sub: 'grant-5', email: 'grant-5@example.com', email_verified: true });
  const res = await off.request('POST', '/token?grant_type=id_token', { body: { provider: 'custom:strict', id_token: token } });
  t.same([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Custom OAuth providers are disabled' }]);
});

t.test("a row the original stored (no algorithm list in its copy): the issuer's live list counts", async (t) => {
  // The original keeps no id_token_signing_alg_values_supported in cached_discovery; its verifier reads
  // the list from the issuer's discovery. An issuer that signs ES256 must keep signing its users in.
  const es = await startOAuth2Server();
  t.teardown(() => es.stop());
  es.signingAlgorithms = ['ES256'];
  const created = await api.request('POST', '/admin/custom-providers', {
    token: await adminToken(),
    body: { provider_type: 'oidc', identifier: 'custom:es', name: 'ES', client_id: es.clientId, client_secret: 'x', issuer: es.base },
  });
  if (created.status !== 201) throw new Error(created.text);
  await api.db.query(
    `update custom_oauth_providers set cached_discovery = cached_discovery - 'id_token_signing_alg_values_supported'
      where identifier = 'custom:es'`,
  );
  const sign = (claims: Record<string, unknown>, alg: 'ES256' | 'RS256') =>
    new SignJWT(claims)
      .setProtectedHeader({ alg, kid: alg === 'ES256' ? 'es' : 'rs' })
      .setIssuer(es.base)
      .setAudience(es.clientId)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(alg === 'ES256' ? es.keys.es : es.keys.rs);
  const before = es.discoveryRequests;
  const claims = { sub: 'es-1', email: 'es-1@example.com', email_verified: true };
  const res = await grant({ provider: 'custom:es', id_token: await sign(claims, 'ES256') });
  t.equal(res.status, 200, 'an ES256 token signs in');
  t.equal(res.body.user?.email, 'es-1@example.com');
  const again = await grant({ provider: 'custom:es', id_token: await sign(claims, 'ES256') });
  t.equal(again.status, 200, 'and again');
  t.equal(es.discoveryRequests, before + 1, 'the live document is fetched once, then cached');
  const rs = await grant({ provider: 'custom:es', id_token: await sign(claims, 'RS256') });
  t.same([rs.status, rs.body], [400, { error: 'invalid request', error_description: 'Bad ID token' }], 'RS256 is not in its list');
});

t.test("each refusal's cause is in the service's log", async (t) => {
  await api.stop();
  const logged = api
    .logs()
    .filter((l) => l.msg === 'OAuth provider call failed')
    .map((l) => String(l.cause));
  t.ok(refusalCauses.length > 0);
  for (const why of refusalCauses)
    t.ok(
      logged.some((cause) => why.test(cause)),
      `logged: ${why}`,
    );
});
