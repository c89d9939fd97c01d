// POST /token?grant_type=id_token driven as auth-js drives it (signInWithIdToken: {provider, id_token,
// access_token, nonce, gotrue_meta_security}; linkIdentity adds link_identity: true and the user's bearer),
// against real oidc-provider instances standing in for Google, Apple and a Keycloak realm. Each answer is
// the original's (internal/api/token_oidc.go and provider/oidc.go): which checks come first, how the
// claims' JSON types are read, and the session's shape.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { startKeycloakRealm, startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';

const google = await startOidcProvider({ clientId: 'g-web' });
const appleIdp = await startOidcProvider({ clientId: 'apple-client' });
const keycloak = await startKeycloakRealm();
const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-web,g-ios', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  ...providerEnv('keycloak', { clientId: 'kc-client', secret: keycloak.clientSecret, redirectUri: REDIRECT_URI, url: keycloak.issuer }),
  ...providerEnv('apple', { clientId: 'apple-client', secret: appleIdp.clientSecret, redirectUri: REDIRECT_URI, url: appleIdp.issuer }),
});
const skipping = await startTestService({
  ...providerEnv('google', { clientId: 'g-web', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  AUTH_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK: 'true',
  // A signup answers a session here, for linkIdentity's signed-in user.
  AUTH_MAILER_AUTOCONFIRM: 'true',
});
t.teardown(async () => {
  await Promise.all([api.stop(), skipping.stop()]);
  await Promise.all([google.stop(), appleIdp.stop(), keycloak.stop()]);
});

const nonce = 'raw-nonce-behaviour';
const nonceHash = createHash('sha256').update(nonce).digest('hex');
const atHashOf = (accessToken: string) => createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
/** auth-js signInWithIdToken's body: captcha_token undefined serialises to an empty object. */
const signIn = (service: typeof api, credentials: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.request('POST', '/token?grant_type=id_token', { body: { ...credentials, gotrue_meta_security: {} }, headers });
const grant = (credentials: Record<string, unknown>) => signIn(api, credentials);
const oauth = (description: string) => ({ error: 'invalid request', error_description: description });
const BAD = oauth('Bad ID token');
/** A short assertion message: the body only when the answer is a refusal. */
const status = (res: { status: number; text: string }) => (res.status === 200 ? 'signed in' : res.text);
const userCount = async () => (await api.db.query('select count(*)::int as n from users')).rows[0].n as number;

t.test('a sign-in answers the session and the user as the original does', async (t) => {
  const token = await google.signIdToken({ sub: 'beh-1', email: 'beh1@example.com', email_verified: true, nonce: nonceHash, name: 'Beh' });
  const res = await grant({ provider: 'google', id_token: token, nonce });
  t.equal(res.status, 200, status(res));
  t.match(res.body, {
    access_token: String,
    token_type: 'bearer',
    expires_in: Number,
    expires_at: Number,
    refresh_token: String,
    user: {
      email: 'beh1@example.com',
      app_metadata: { provider: 'google', providers: ['google'] },
      identities: [{ provider: 'google', id: 'beh-1' }],
    },
  });
  t.notOk('provider_token' in res.body, 'no provider token: the app holds it');
  t.ok(res.body.user.email_confirmed_at, 'the provider verified the address');
  t.equal(res.body.user.user_metadata.name, 'Beh');
});

t.test("every id of EXTERNAL_GOOGLE_CLIENT_ID is an audience; another is refused printing the token's", async (t) => {
  const ios = await google.signIdToken({ sub: 'beh-ios', email: 'ios@example.com', email_verified: true }, { audience: 'g-ios' });
  t.equal((await grant({ provider: 'google', id_token: ios })).status, 200);
  const other = await google.signIdToken({ sub: 'beh-other', email: 'other@example.com', email_verified: true }, { audience: 'g-android' });
  t.same((await grant({ provider: 'google', id_token: other })).body, oauth('Unacceptable audience in id_token: [g-android]'));
});

t.test('email_verified decodes as the original decodes it: a JSON boolean, else the whole token is refused', async (t) => {
  const before = await userCount();
  for (const [service, idp, provider] of [
    [api, google, 'google'],
    [api, keycloak, 'keycloak'],
  ] as const) {
    const stringTrue = await idp.signIdToken({ sub: `str-${provider}`, email: `str-${provider}@example.com`, email_verified: 'true' });
    const res = await signIn(service, { provider, id_token: stringTrue });
    t.same([res.status, res.body], [400, BAD], `${provider}: "true" is no boolean`);
  }
  const verifiedEmailString = await google.signIdToken({ sub: 'str-ve', email: 've@example.com', verified_email: 'true' });
  t.same((await grant({ provider: 'google', id_token: verifiedEmailString })).body, BAD, "google's verified_email too");
  const numericName = await keycloak.signIdToken({ sub: 'str-name', email: 'name@example.com', email_verified: true, name: 42 });
  t.same((await grant({ provider: 'keycloak', id_token: numericName })).body, BAD, 'a name that is not a string');
  t.equal(await userCount(), before, 'nobody was created');

  // Apple's reader has no email_verified field: whatever it holds, an Apple address is verified.
  const apple = await appleIdp.signIdToken({
    sub: 'apple-str',
    email: 'apple-str@example.com',
    email_verified: 'false',
    is_private_email: 'true',
  });
  const ok = await grant({ provider: 'apple', id_token: apple });
  t.equal(ok.status, 200, status(ok));
  t.ok(ok.body.user.email_confirmed_at);
  t.equal(ok.body.user.identities[0].identity_data.custom_claims.is_private_email, true);
  const unreadable = await appleIdp.signIdToken({ sub: 'apple-bad', email: 'apple-bad@example.com', is_private_email: 'yes' });
  t.same(
    (await grant({ provider: 'apple', id_token: unreadable })).body,
    BAD,
    'is_private_email neither a boolean nor a Go boolean string',
  );

  // null is a field's zero value: missing, as far as the reader is concerned.
  const nullVerified = await google.signIdToken({ sub: 'null-ev', email: 'null-ev@example.com', email_verified: null });
  t.equal((await grant({ provider: 'google', id_token: nullVerified })).status, 422, 'unverified: the confirmation path');
});

t.test('a nonce claim that is not a string fails the token, though the request sent none', async (t) => {
  const token = await google.signIdToken({ sub: 'beh-nonce-num', email: 'nn@example.com', email_verified: true, nonce: 12345 });
  t.same((await grant({ provider: 'google', id_token: token })).body, BAD);
});

t.test("the token's claims and at_hash are read before its sub and aud, as the original orders them", async (t) => {
  const wrongAudAndAtHash = await google.signIdToken(
    { sub: 'beh-order', email: 'order@example.com', email_verified: true, at_hash: 'AAAAAAAAAAAAAAAAAAAAAA' },
    { audience: 'someone-else' },
  );
  t.same((await grant({ provider: 'google', id_token: wrongAudAndAtHash, access_token: 'ya29.x' })).body, BAD, 'at_hash before aud');
  t.same(
    (await grant({ provider: 'google', id_token: wrongAudAndAtHash })).body,
    oauth('Unacceptable audience in id_token: [someone-else]'),
    'without an access token the at_hash is not compared',
  );
  const noSubStringFlag = await google.signIdToken({ email: 'nosub@example.com', email_verified: 'true' });
  t.same((await grant({ provider: 'google', id_token: noSubStringFlag })).body, BAD, 'the claims before the missing sub');
});

t.test('an empty at_hash is no at_hash: the access token sent alongside is not compared', async (t) => {
  const token = await google.signIdToken({ sub: 'beh-empty-at', email: 'emptyat@example.com', email_verified: true, at_hash: '' });
  const res = await grant({ provider: 'google', id_token: token, access_token: 'ya29.whatever' });
  t.equal(res.status, 200, status(res));
  const matching = await google.signIdToken({
    sub: 'beh-empty-at',
    email: 'emptyat@example.com',
    email_verified: true,
    at_hash: atHashOf('ya29.real'),
  });
  t.equal((await grant({ provider: 'google', id_token: matching, access_token: 'ya29.real' })).status, 200);
  t.same((await grant({ provider: 'google', id_token: matching, access_token: 'ya29.other' })).body, BAD);
});

t.test('the nonce: the token holds the SHA-256 hex of the raw one; EXTERNAL_GOOGLE_SKIP_NONCE_CHECK skips it all', async (t) => {
  const claims = { sub: 'beh-nonce', email: 'nonce@example.com', email_verified: true };
  const hashed = await google.signIdToken({ ...claims, nonce: nonceHash });
  const raw = await google.signIdToken({ ...claims, nonce });
  const none = await google.signIdToken(claims);
  t.equal((await grant({ provider: 'google', id_token: hashed, nonce })).status, 200);
  t.same(
    (await grant({ provider: 'google', id_token: raw, nonce })).body,
    { error: 'invalid nonce', error_description: 'Nonces mismatch' },
    'a raw nonce in the token',
  );
  const both = oauth('Passed nonce and nonce in id_token should either both exist or not.');
  t.same((await grant({ provider: 'google', id_token: hashed })).body, both, 'in the token only');
  t.same((await grant({ provider: 'google', id_token: none, nonce })).body, both, 'in the request only');
  for (const [token, sent] of [
    [hashed, undefined],
    [none, nonce],
    [raw, 'another'],
  ] as const) {
    const res = await signIn(skipping, { provider: 'google', id_token: token, nonce: sent });
    t.equal(res.status, 200, `skipped: ${status(res)}`);
  }
});

t.test('unknown, disabled and issuer-found providers', async (t) => {
  const token = await google.signIdToken({ sub: 'beh-prov', email: 'prov@example.com', email_verified: true });
  t.same((await grant({ provider: 'gitlab', id_token: token })).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Custom OIDC provider "gitlab" not allowed',
  });
  t.same(
    (await grant({ provider: 'azure', id_token: token })).body,
    {
      code: 400,
      error_code: 'validation_failed',
      msg: 'Detected ID token issuer is not an Azure ID token issuer',
    },
    "azure's token issuer is read before its switch",
  );
  t.same((await grant({ provider: 'vercel_marketplace', id_token: token })).body, {
    code: 400,
    error_code: 'provider_disabled',
    msg: 'Provider (issuer "https://marketplace.vercel.com") is not enabled',
  });
  const kc = await keycloak.signIdToken({ sub: 'beh-kc', email: 'kc@example.com', email_verified: true });
  const byIssuer = await grant({ client_id: 'kc-client', issuer: keycloak.issuer, id_token: kc });
  t.equal(byIssuer.status, 200, status(byIssuer));
  t.equal(byIssuer.body.user.identities[0].provider, 'keycloak');
});

t.test('expired and wrongly issued tokens are Bad ID token', async (t) => {
  const claims = { sub: 'beh-exp', email: 'exp@example.com', email_verified: true };
  const expired = await google.signIdToken(claims, { expiresIn: Math.floor(Date.now() / 1000) - 30 });
  t.same((await grant({ provider: 'google', id_token: expired })).body, BAD);
  const keycloakToken = await keycloak.signIdToken(claims, { audience: 'g-web' });
  t.same((await grant({ provider: 'google', id_token: keycloakToken })).body, BAD, "another issuer's token");
});

t.test('linkIdentity with an id_token links to the signed-in user; without a bearer it is refused', async (t) => {
  const signup = await skipping.request('POST', '/signup', { body: { email: 'linker@example.com', password: 'a-strong-password-1' } });
  t.equal(signup.status, 200, 'signed up');
  const token = await google.signIdToken({ sub: 'beh-link', email: 'linked-elsewhere@example.com', email_verified: true });
  t.same(
    (await signIn(skipping, { provider: 'google', id_token: token, link_identity: true })).body,
    oauth('Linking requires a valid user access token in Authorization'),
  );
  const res = await signIn(
    skipping,
    { provider: 'google', id_token: token, link_identity: true },
    { authorization: `Bearer ${signup.body.access_token}` },
  );
  t.equal(res.status, 200, status(res));
  t.equal(res.body.user.id, signup.body.user.id, "the signed-in user's session");
  t.same(res.body.user.identities.map((i: { provider: string }) => i.provider).sort(), ['email', 'google']);
});

t.test('a NUL or a lone surrogate in a claim: U+FFFD in a name, a sub or email with a NUL refused as a bad token', async (t) => {
  // PostgreSQL stores neither; passed on raw, the sign-in failed as a 500 Database error saving new user.
  const named = await keycloak.signIdToken({
    sub: 'nul-name',
    email: 'nul-name@example.com',
    email_verified: true,
    name: 'a\u0000b',
    nickname: 'lone\ud800',
  });
  const res = await grant({ provider: 'keycloak', id_token: named });
  t.equal(res.status, 200, status(res));
  t.equal(res.body.user.user_metadata.name, 'a\ufffdb');
  t.equal(res.body.user.user_metadata.nickname, 'lone\ufffd');

  const before = await userCount();
  for (const claims of [
    { sub: 'nul\u0000sub', email: 'nul-sub@example.com', email_verified: true },
    { sub: 'nul-email', email: 'nul\u0000email@example.com', email_verified: true },
  ]) {
    const res = await grant({ provider: 'keycloak', id_token: await keycloak.signIdToken(claims) });
    t.same([res.status, res.body], [400, BAD], JSON.stringify(claims));
  }
  t.equal(await userCount(), before, 'nobody was created');
});
