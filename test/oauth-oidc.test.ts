// The OpenID Connect family against real oidc-provider instances: keycloak (realm URL, userinfo) and azure
// (tenant base, v2.0 paths) through /authorize and /callback, and POST /token?grant_type=id_token with every
// check the original makes (signature by the issuer's JWKS, iss, aud among the client ids, exp, nonce, at_hash).
import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { startTestService } from './helpers/server.js';
import { startKeycloakRealm, startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf } from './helpers/oauth.js';

const google = await startOidcProvider({ clientId: 'g-web' });
const appleIdp = await startOidcProvider({ clientId: 'apple-client' });
const keycloak = await startKeycloakRealm();
const azure = await startOidcProvider({
  clientId: 'az-client',
  issuerPath: '/v2.0',
  routes: { authorization: '/oauth2/v2.0/authorize', token: '/oauth2/v2.0/token', jwks: '/discovery/v2.0/keys' },
});
const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-web, g-ios', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  ...providerEnv('keycloak', { clientId: 'kc-client', secret: keycloak.clientSecret, redirectUri: REDIRECT_URI, url: keycloak.issuer }),
  ...providerEnv('apple', { clientId: 'apple-client', secret: appleIdp.clientSecret, redirectUri: REDIRECT_URI, url: appleIdp.issuer }),
  ...providerEnv('azure', { clientId: 'az-client', secret: azure.clientSecret, redirectUri: REDIRECT_URI, url: azure.base }),
});
t.teardown(async () => {
  await api.stop();
  await Promise.all([google.stop(), appleIdp.stop(), keycloak.stop(), azure.stop()]);
});

const nonce = 'raw-nonce-0123456789';
const nonceHash = createHash('sha256').update(nonce).digest('hex');
/** OIDC's at_hash of an access token for an RS256 id_token: the left half of its SHA-256, base64url. */
const atHashOf = (accessToken: string) => createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });

t.test('keycloak: the realm endpoints, the profile from userinfo, a session in the fragment', async (t) => {
  keycloak.accounts.set('kc-1', {
    sub: 'kc-1',
    email: 'kim@example.com',
    email_verified: true,
    name: 'Kim K',
    preferred_username: 'kim',
    picture: 'https://kc.example/kim.png',
  });
  const url = await authorizeUrl(api, 'provider=keycloak');
  t.equal(url.origin + url.pathname, `${keycloak.issuer}/protocol/openid-connect/auth`);
  t.equal(url.searchParams.get('scope'), 'profile email', "the original's scopes: no openid");
  const { location } = await callback(api, await keycloak.signIn(url.href, 'kc-1'));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'kim@example.com');
  // As the original lays it out: name, sub, email and both flags on top, every other claim under custom_claims.
  const layout = {
    iss: keycloak.issuer,
    sub: 'kc-1',
    name: 'Kim K',
    full_name: 'Kim K',
    provider_id: 'kc-1',
    email: 'kim@example.com',
    email_verified: true,
    phone_verified: false,
    custom_claims: { preferred_username: 'kim', picture: 'https://kc.example/kim.png' },
  };
  t.match(me.body.identities[0], { provider: 'keycloak', id: 'kc-1', identity_data: layout });
  t.strictSame(Object.keys(me.body.identities[0].identity_data).sort(), Object.keys(layout).sort(), 'nothing else on top');
  t.match(me.body.user_metadata, layout);
  for (const key of ['preferred_username', 'picture', 'avatar_url', 'user_name'])
    t.notOk(key in me.body.user_metadata, `no top-level ${key}`);
});

t.test('azure: the tenant base v2.0 endpoints, the id_token of issuer <base>/v2.0', async (t) => {
  azure.accounts.set('az-1', { sub: 'az-1', email: 'ari@example.com', email_verified: true, name: 'Ari A' });
  // `openid` alone by default, as the original: the address comes with the `email` scope the app asks for.
  const url = await authorizeUrl(api, 'provider=azure&scopes=email');
  t.equal(url.origin + url.pathname, `${azure.base}/oauth2/v2.0/authorize`);
  t.equal(url.searchParams.get('scope'), 'openid email');
  const { location } = await callback(api, await azure.signIn(url.href, 'az-1'));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'ari@example.com');
  t.equal(me.body.identities[0].identity_data.iss, `${azure.base}/v2.0`);
  // The original's layout: no top-level `name`; the token's other claims (the address too) under custom_claims.
  t.match(me.body.user_metadata, { email: 'ari@example.com', custom_claims: { email: 'ari@example.com' } });
  t.notOk('name' in me.body.user_metadata, 'no top-level name');
});

t.test('apple: response_mode=form_post, the callback POSTed as a form with the name in the `user` field', async (t) => {
  appleIdp.accounts.set('ap-1', { sub: 'ap-1', email: 'abe@privaterelay.example.com', email_verified: true });
  const url = await authorizeUrl(api, 'provider=apple&scopes=openid&login_hint=abe&prompt=consent');
  t.equal(url.searchParams.get('response_mode'), 'form_post');
  t.equal(url.searchParams.get('scope'), 'email name', "as the original: Apple's two scopes, whatever is requested");
  t.notOk(url.searchParams.has('login_hint') || url.searchParams.has('prompt'), 'and none of the query passed on');
  const form = await appleIdp.signIn(url.href, 'ap-1');
  t.ok(form.get('code') && form.get('state'), 'the provider posted code and state');
  form.set('user', JSON.stringify({ name: { firstName: 'Abe', lastName: 'Apple' }, email: 'abe@privaterelay.example.com' }));
  const { status, location } = await callback(api, form, 'POST');
  t.equal(status, 302);
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'abe@privaterelay.example.com');
  t.equal(me.body.user_metadata.full_name, 'Abe Apple');
});

t.test("apple: the address counts as verified even when the token's email_verified is false, as the original", async (t) => {
  appleIdp.accounts.set('ap-2', { sub: 'ap-2', email: 'bea@privaterelay.example.com', email_verified: false });
  const form = await appleIdp.signIn((await authorizeUrl(api, 'provider=apple')).href, 'ap-2');
  const { location } = await callback(api, form, 'POST');
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'bea@privaterelay.example.com');
  t.ok(me.body.email_confirmed_at, 'confirmed by the sign-in');
  t.equal(me.body.identities[0].identity_data.email_verified, true);
});

t.test("callback: an id_token whose at_hash is not its access token's is refused, as the original's parser refuses it", async (t) => {
  google.accounts.set('g-at', { sub: 'g-at', email: 'gat@example.com', email_verified: true });
  // oidc-provider leaves at_hash out of its token answers (OIDC makes it optional there; Google sends it):
  // the answer's id_token is signed again, by the same key, with the at_hash of `hashed`.
  const withAtHash = (hashed: (accessToken: string) => string) => async (answer: Record<string, unknown>) => {
    const { iss, aud, iat, exp, ...claims } = decodeJwt(String(answer.id_token));
    t.ok(iss && aud && iat && exp && claims.sub, 'the provider answered with an id_token');
    return { ...answer, id_token: await google.signIdToken({ ...claims, at_hash: atHashOf(hashed(String(answer.access_token))) }) };
  };
  t.teardown(() => (google.rewriteTokenAnswer = undefined));
  const signIn = async () => (await callback(api, await google.signIn((await authorizeUrl(api, 'provider=google')).href, 'g-at'))).location;

  google.rewriteTokenAnswer = withAtHash(() => 'an access token other than the one answered');
  const refused = await signIn();
  t.match(queryOf(refused), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user profile from external provider',
  });
  t.notOk(fragmentOf(refused).access_token, 'no session');
  const made = await api.db.query(`select count(*)::int as n from users where email = 'gat@example.com'`);
  t.equal(made.rows[0].n, 0, 'no account');

  google.rewriteTokenAnswer = withAtHash((accessToken) => accessToken);
  const me = await api.request('GET', '/user', { token: fragmentOf(await signIn()).access_token });
  t.equal(me.body.email, 'gat@example.com', 'the at_hash of the answered access token signs in');
});

t.test('id_token grant: a valid token with the hashed nonce signs in, creating the user', async (t) => {
  const token = await google.signIdToken({ sub: 'gid-1', email: 'gid@example.com', email_verified: true, nonce: nonceHash, name: 'Gid' });
  const res = await grant({ provider: 'google', id_token: token, nonce });
  t.equal(res.status, 200, res.text);
  t.ok(res.body.access_token && res.body.refresh_token);
  t.equal(res.body.user.email, 'gid@example.com');
  t.ok(res.body.user.email_confirmed_at);
  t.match(res.body.user.identities, [{ provider: 'google', id: 'gid-1' }]);
  const again = await grant({ provider: 'google', id_token: token, nonce });
  t.equal(again.body.user.id, res.body.user.id, 'the same identity signs in the same user');
});

t.test('id_token grant: every id of the comma list is an accepted audience; issuer + client_id find the provider', async (t) => {
  const token = await google.signIdToken({ sub: 'gid-2', email: 'gid2@example.com', email_verified: true }, { audience: 'g-ios' });
  const res = await grant({ client_id: 'g-ios', issuer: google.issuer, id_token: token });
  t.equal(res.status, 200, res.text);
  t.match(res.body.user.identities, [{ provider: 'google', id: 'gid-2' }]);
});

t.test('id_token grant: keycloak and azure tokens', async (t) => {
  const kc = await keycloak.signIdToken({ sub: 'kc-9', email: 'kc9@example.com', email_verified: true });
  t.equal((await grant({ provider: 'keycloak', id_token: kc })).status, 200);
  const az = await azure.signIdToken({ sub: 'az-9', email: 'az9@example.com', email_verified: true });
  t.equal((await grant({ provider: 'azure', id_token: az })).status, 200);
});

t.test('id_token grant refusals are OAuth-style 400s and create nothing', async (t) => {
  const before = (await api.db.query('select count(*)::int as n from users')).rows[0].n;
  const claims = { sub: 'bad-1', email: 'bad@example.com', email_verified: true };
  const bad = { error: 'invalid request', error_description: 'Bad ID token' };
  const wrongIssuer = await google.signIdToken(claims, { issuer: 'https://evil.example.test' });
  t.same((await grant({ provider: 'google', id_token: wrongIssuer })).body, bad, 'wrong issuer');
  const expired = await google.signIdToken(claims, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
  t.same((await grant({ provider: 'google', id_token: expired })).body, bad, 'expired');
  const noExp = await google.signIdToken(claims, { expiresIn: null });
  t.same((await grant({ provider: 'google', id_token: noExp })).body, bad, 'no exp: as long expired, never valid for ever');
  const { privateKey } = await generateKeyPair('RS256');
  const forged = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' })
    .setIssuer(google.issuer)
    .setAudience('g-web')
    .setExpirationTime('5m')
    .sign(privateKey);
  t.same((await grant({ provider: 'google', id_token: forged })).body, bad, 'signed with a key the issuer never published');
  const hs = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid: 'test-key-1' })
    .setIssuer(google.issuer)
    .setAudience('g-web')
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(google.clientSecret));
  t.same((await grant({ provider: 'google', id_token: hs })).body, bad, 'an HS256 token against an RSA key');

  const noSub = await google.signIdToken({ email: 'bad@example.com', email_verified: true });
  t.same((await grant({ provider: 'google', id_token: noSub })).body, {
    error: 'invalid request',
    error_description: 'Missing sub claim in id_token',
  });

  const wrongAud = await google.signIdToken(claims, { audience: 'someone-else' });
  const aud = await grant({ provider: 'google', id_token: wrongAud });
  t.equal(aud.status, 400);
  t.same(aud.body, { error: 'invalid request', error_description: 'Unacceptable audience in id_token: [someone-else]' });

  const withNonce = await google.signIdToken({ ...claims, nonce: nonceHash });
  t.same((await grant({ provider: 'google', id_token: withNonce, nonce: 'another-nonce' })).body, {
    error: 'invalid nonce',
    error_description: 'Nonces mismatch',
  });
  t.same((await grant({ provider: 'google', id_token: withNonce })).body, {
    error: 'invalid request',
    error_description: 'Passed nonce and nonce in id_token should either both exist or not.',
  });
  t.same(
    (await grant({ provider: 'google', id_token: withNonce, nonce: nonceHash })).body,
    { error: 'invalid nonce', error_description: 'Nonces mismatch' },
    "the token's own nonce read out of it and sent back is no raw nonce: a leaked token cannot be replayed so",
  );
  const atHash = await google.signIdToken({ ...claims, at_hash: 'AAAAAAAAAAAAAAAAAAAAAA' });
  t.same((await grant({ provider: 'google', id_token: atHash, access_token: 'ya29.token' })).body, {
    error: 'invalid request',
    error_description: 'Bad ID token',
  });
  t.same((await grant({ provider: 'google' })).body, { error: 'invalid request', error_description: 'id_token required' });
  const versioned = await api.request('POST', '/token?grant_type=id_token', {
    body: { provider: 'google' },
    headers: { 'X-Supabase-Api-Version': '2024-01-01' },
  });
  t.equal(
    versioned.headers.get('x-supabase-api-version'),
    '2024-01-01',
    'an OAuth-style refusal echoes the API version as other errors do',
  );
  t.same(versioned.body, { error: 'invalid request', error_description: 'id_token required' }, 'in its own shape');
  t.same((await grant({ id_token: withNonce })).body, {
    error: 'invalid request',
    error_description: 'provider or client_id and issuer required',
  });
  t.equal((await api.db.query('select count(*)::int as n from users')).rows[0].n, before, 'no user was created');
});

t.test("id_token grant: an nbf up to five minutes ahead of the service's clock passes, as the original allows", async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const soon = await google.signIdToken({ sub: 'gid-nbf', email: 'nbf@example.com', email_verified: true, nbf: now + 60 });
  t.equal((await grant({ provider: 'google', id_token: soon })).status, 200, 'a minute ahead: a clock a little behind the issuer');
  const later = await google.signIdToken({ sub: 'gid-nbf', email: 'nbf@example.com', email_verified: true, nbf: now + 400 });
  t.same((await grant({ provider: 'google', id_token: later })).body, { error: 'invalid request', error_description: 'Bad ID token' });
  const justExpired = await google.signIdToken({ sub: 'gid-nbf', email: 'nbf@example.com', email_verified: true }, { expiresIn: now - 2 });
  t.same(
    (await grant({ provider: 'google', id_token: justExpired })).body,
    { error: 'invalid request', error_description: 'Bad ID token' },
    'exp gets no such allowance',
  );
});

t.test('id_token grant: link_identity not a boolean is 400 bad_json, as the original cannot decode it; null is false', async (t) => {
  const before = (await api.db.query('select count(*)::int as n from users')).rows[0].n;
  const token = await google.signIdToken({ sub: 'gid-link', email: 'link@example.com', email_verified: true });
  for (const [value, kind] of [
    ['true', 'string'],
    [1, 'number'],
    [{}, 'object'],
    [[true], 'array'],
  ] as const) {
    const res = await grant({ provider: 'google', id_token: token, link_identity: value });
    t.same(
      [res.status, res.body],
      [
        400,
        {
          code: 400,
          error_code: 'bad_json',
          msg: `Could not parse request body as JSON: json: cannot unmarshal ${kind} into Go struct field IdTokenGrantParams.link_identity of type bool`,
        },
      ],
      JSON.stringify(value),
    );
  }
  t.equal((await api.db.query('select count(*)::int as n from users')).rows[0].n, before, 'nobody signed in, no user created');
  const plain = await grant({ provider: 'google', id_token: token, link_identity: null });
  t.equal(plain.status, 200, 'null: a plain sign-in');
});

t.test('id_token grant: a matching at_hash passes', async (t) => {
  const accessToken = 'ya29.a-real-looking-access-token';
  const token = await google.signIdToken({ sub: 'gid-at', email: 'at@example.com', email_verified: true, at_hash: atHashOf(accessToken) });
  t.equal((await grant({ provider: 'google', id_token: token, access_token: accessToken })).status, 200);
});

t.test('id_token grant: unknown and disabled providers', async (t) => {
  const token = await google.signIdToken({ sub: 'x' });
  const custom = await grant({ provider: 'myoidc', id_token: token });
  t.same(custom.body, { code: 400, error_code: 'validation_failed', msg: 'Custom OIDC provider "myoidc" not allowed' });
  // Not a provider of the original's grant, on or off (test/id-token-allowed-issuers.test.ts switches it on).
  const linkedin = await grant({ provider: 'linkedin_oidc', id_token: token });
  t.same(linkedin.body, { code: 400, error_code: 'validation_failed', msg: 'Custom OIDC provider "linkedin_oidc" not allowed' });
  // A switched-off provider is named by its issuer, as the original names it, whatever the request sent.
  const kakao = await grant({ provider: 'kakao', id_token: token });
  t.same(kakao.body, { code: 400, error_code: 'provider_disabled', msg: 'Provider (issuer "https://kauth.kakao.com") is not enabled' });
  const facebook = await grant({ provider: 'facebook', issuer: 'https://idp.example.test', client_id: 'x', id_token: token });
  t.same(facebook.body, { code: 400, error_code: 'provider_disabled', msg: 'Provider (issuer "https://www.facebook.com") is not enabled' });
});

t.test('id_token grant: an address the provider did not verify keeps the new account and answers 422 after mailing', async (t) => {
  const token = await google.signIdToken({ sub: 'gid-unverified', email: 'gid-unverified@example.com', email_verified: false });
  const res = await grant({ provider: 'google', id_token: token });
  t.equal(res.status, 422);
  t.same(res.body, {
    code: 422,
    error_code: 'provider_email_needs_verification',
    msg: 'Unverified email with google. A confirmation email has been sent to your google email',
  });
  const { rows } = await api.db.query('select email_confirmed_at, confirmation_sent_at from users where email = $1', [
    'gid-unverified@example.com',
  ]);
  t.equal(rows.length, 1, 'the account is committed with the refusal');
  t.equal(rows[0].email_confirmed_at, null);
  t.ok(rows[0].confirmation_sent_at, 'the confirmation went out');
});
