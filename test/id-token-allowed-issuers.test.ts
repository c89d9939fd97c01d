// EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS (docs/oauth.md#the-id_token-grant): POST /token?grant_type=id_token
// with `issuer` and `client_id` and no known provider takes a token of a listed issuer, as the original's
// deprecated form does: the keys from the issuer's own discovery document, `aud` the client_id sent, the
// nonce checked, an email required, and the identity stored with the issuer URL as its provider. An issuer
// not listed is refused in the original's words, and the issuers of built-in providers stay theirs.
// The issuer is a small OIDC-format server (discovery, JWKS) whose keys the test signs with. LinkedIn
// (OIDC) is switched on with that issuer as its own: the original's grant does not take linkedin_oidc,
// so neither its name nor its issuer leads to it. An issuer, or a built-in provider asked whether it owns
// the issuer, that never answers ends the grant before the request's deadline, as an unreachable one does.
import t from 'tap';
import http from 'node:http';
import type net from 'node:net';
import { createHash } from 'node:crypto';
import { SignJWT, generateKeyPair, type KeyLike } from 'jose';
import { startTestService } from './helpers/server.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { providerEnv } from './helpers/oauth.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';

const idp = await startOAuth2Server();
// The same server by another name: its discovery document names 127.0.0.1, not this one.
const alias = idp.base.replace('127.0.0.1', 'localhost');
const api = await startTestService({
  AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: `${idp.base},https://accounts.google.com,${alias}`,
  ...providerEnv('linkedin_oidc', { clientId: 'mobile-app', secret: idp.clientSecret, redirectUri: REDIRECT_URI, url: idp.base }),
});
t.teardown(async () => {
  await api.stop();
  await idp.stop();
});

const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });
const users = async () => (await api.db.query('select count(*)::int as n from users')).rows[0].n;
const nonce = 'raw-nonce-0123456789';
const nonceHash = createHash('sha256').update(nonce).digest('hex');

function sign(claims: Record<string, unknown>, o: { audience?: string; issuer?: string; key?: KeyLike } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'rs' })
    .setIssuer(o.issuer ?? idp.base)
    .setAudience(o.audience ?? 'mobile-app')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(o.key ?? idp.keys.rs);
}

t.test('a listed issuer with the client_id sent signs in; the identity is stored under the issuer URL', async (t) => {
  const token = await sign({ sub: 'iss-1', email: 'iss-1@example.com', email_verified: true, nonce: nonceHash, team: 'blue' });
  const res = await grant({ id_token: token, issuer: idp.base, client_id: 'mobile-app', nonce });
  t.equal(res.status, 200, res.text);
  t.ok(res.body.access_token && res.body.refresh_token);
  t.equal(res.body.user.email, 'iss-1@example.com');
  t.match(res.body.user.identities, [{ provider: idp.base, id: 'iss-1', identity_data: { iss: idp.base, sub: 'iss-1' } }]);
  t.notOk(res.body.user.identities[0].identity_data.custom_claims, 'only the standard claims, as the original reads them');
  t.equal(res.body.user.app_metadata.provider, idp.base);
  const { rows } = await api.db.query('select provider from identities where provider_id = $1', ['iss-1']);
  t.same(rows, [{ provider: idp.base }]);

  // The original's own test names the issuer as the provider too: an unknown provider name falls to the list.
  const named = await grant({ provider: idp.base, id_token: token, issuer: idp.base, client_id: 'mobile-app', nonce });
  t.equal(named.body.user?.id, res.body.user.id, named.text);
});

t.test('an issuer not listed is refused naming the provider sent, before any call to it', async (t) => {
  const token = await sign({ sub: 'iss-2', email: 'iss-2@example.com' }, { issuer: 'https://idp.example.test' });
  const res = await grant({ id_token: token, issuer: 'https://idp.example.test', client_id: 'mobile-app' });
  t.same([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Custom OIDC provider "" not allowed' }]);
  const named = await grant({ provider: 'myoidc', id_token: token, issuer: 'https://idp.example.test', client_id: 'mobile-app' });
  t.same(named.body, { code: 400, error_code: 'validation_failed', msg: 'Custom OIDC provider "myoidc" not allowed' });
});

t.test('linkedin_oidc, switched on, is no provider of the grant: refused as an unknown one, as the original', async (t) => {
  const before = await users();
  const token = await sign({ sub: 'li-1', email: 'li-1@example.com', email_verified: true });
  const res = await grant({ provider: 'linkedin_oidc', id_token: token });
  t.same(
    [res.status, res.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'Custom OIDC provider "linkedin_oidc" not allowed' }],
  );
  t.equal(await users(), before, 'nobody signed in');
  // Its issuer, listed, is an allowed issuer like any other (the first test): the identity is the URL's.
  const listed = await grant({ provider: 'linkedin_oidc', id_token: token, issuer: idp.base, client_id: 'mobile-app' });
  t.match(listed.body.user?.identities, [{ provider: idp.base, id: 'li-1' }], listed.text);
});

t.test("a built-in provider's issuer stays that provider's, though listed: google is off here", async (t) => {
  const token = await sign({ sub: 'iss-3' }, { issuer: 'https://accounts.google.com' });
  const res = await grant({ id_token: token, issuer: 'https://accounts.google.com', client_id: 'mobile-app' });
  t.same(
    [res.status, res.body],
    [400, { code: 400, error_code: 'provider_disabled', msg: 'Provider (issuer "https://accounts.google.com") is not enabled' }],
  );
});

t.test('tokens for another audience, issuer or key, without the nonce or the email are refused; nobody signs in', async (t) => {
  const before = await users();
  const claims = { sub: 'iss-4', email: 'iss-4@example.com', email_verified: true };
  const aud = await grant({ id_token: await sign(claims, { audience: 'web-app' }), issuer: idp.base, client_id: 'mobile-app' });
  t.same([aud.status, aud.body], [400, { error: 'invalid request', error_description: 'Unacceptable audience in id_token: [web-app]' }]);

  const bad = { error: 'invalid request', error_description: 'Bad ID token' };
  const { privateKey: stranger } = await generateKeyPair('RS256');
  const forged = await grant({ id_token: await sign(claims, { key: stranger }), issuer: idp.base, client_id: 'mobile-app' });
  t.same(forged.body, bad, 'a key the issuer never published');
  const otherIss = await grant({ id_token: await sign(claims, { issuer: alias }), issuer: idp.base, client_id: 'mobile-app' });
  t.same(otherIss.body, bad, 'iss is not the issuer sent');

  const withNonce = await sign({ ...claims, nonce: nonceHash });
  t.same((await grant({ id_token: withNonce, issuer: idp.base, client_id: 'mobile-app' })).body, {
    error: 'invalid request',
    error_description: 'Passed nonce and nonce in id_token should either both exist or not.',
  });
  const noEmail = await grant({ id_token: await sign({ sub: 'iss-5' }), issuer: idp.base, client_id: 'mobile-app' });
  t.same([noEmail.status, noEmail.body.msg], [500, 'Error getting user email from external provider'], 'email is not optional');
  t.equal(await users(), before);
});

t.test("an issuer whose discovery document names another issuer is not that issuer's", async (t) => {
  // Reachable under that name, with the right keys: only the document's `issuer` tells it apart.
  t.equal((await fetch(`${alias}/.well-known/openid-configuration`)).status, 200);
  const token = await sign({ sub: 'iss-6', email: 'iss-6@example.com', email_verified: true }, { issuer: alias });
  const res = await grant({ id_token: token, issuer: alias, client_id: 'mobile-app' });
  t.same([res.status, res.body], [400, { error: 'invalid request', error_description: 'Bad ID token' }]);
});

t.test('an issuer or a built-in provider slower than the request deadline: the grant answers before it, no 504', async (t) => {
  // Under /silent nothing is ever answered; under /keyless the discovery document is, its key set never.
  const stall = http.createServer((req, res) => {
    if (req.url !== '/keyless/.well-known/openid-configuration') return;
    const issuer = `http://${req.headers.host}/keyless`;
    const doc = { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  const stallBase = `http://127.0.0.1:${(stall.address() as net.AddressInfo).port}`;
  // Every bound of the calls far past the request's: without the cap the deadline's 504 always came first.
  // Google, switched on, is asked for its discovery document whenever an issuer is sent: it never answers.
  const hurried = await startTestService({
    AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: `${idp.base},${stallBase}/silent,${stallBase}/keyless`,
    ...providerEnv('google', { clientId: 'g', secret: 'g-secret', redirectUri: REDIRECT_URI, url: `${stallBase}/silent` }),
    AUTH_API_MAX_REQUEST_DURATION: '2',
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
  });
  t.teardown(async () => {
    await hurried.stop();
    stall.closeAllConnections();
    stall.close();
  });
  const hurriedGrant = (body: Record<string, unknown>) => hurried.request('POST', '/token?grant_type=id_token', { body });
  const claims = { sub: 'slow-1', email: 'slow-1@example.com', email_verified: true };
  const bad = [400, { error: 'invalid request', error_description: 'Bad ID token' }];

  for (const issuer of [`${stallBase}/silent`, `${stallBase}/keyless`]) {
    const res = await hurriedGrant({ id_token: await sign(claims, { issuer }), issuer, client_id: 'mobile-app' });
    t.same([res.status, res.body], bad, issuer);
  }
  t.equal((await hurried.db.query(`select 1 from users where email = 'slow-1@example.com'`)).rowCount, 0, 'nobody signed in');

  // Google owns no issuer while it does not answer: a listed issuer's token still signs in, in time.
  const listed = await hurriedGrant({ id_token: await sign(claims), issuer: idp.base, client_id: 'mobile-app' });
  t.equal(listed.status, 200, listed.text);
  t.equal(listed.body.user?.email, 'slow-1@example.com');
});
