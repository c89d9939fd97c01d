// Outbound calls through an egress proxy (docs/settings.md#outbound-proxy), as a deployment that may reach the
// internet only through one runs: a real forward proxy with Basic credentials, and identity providers under
// names only that proxy resolves (test/helpers/forward-proxy.ts), so every call that succeeds went through it.
// Covered: fetch's calls (discovery, token exchange, userinfo), jose's key-set fetch (its own HTTP agent),
// AWS KMS signing (the SDK's own HTTP agent), the proxy's credentials, loopback and NO_PROXY going direct, and a custom provider's restricted calls,
// which are checked before they leave, as the proxy resolves their names out of the service's sight.
// Two instances share one database: `open` (HTTP_PROXY, custom providers may be private) and `guarded`
// (the lower-case spelling, NO_PROXY naming one provider host, custom providers restricted as in production).
import t from 'tap';
import { decodeProtectedHeader } from 'jose';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { mobileIdToken, startOAuth2Server } from './helpers/oauth2-server.js';
import { startForwardProxy } from './helpers/forward-proxy.js';
import { startFakeKms } from './helpers/kms-fake.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf } from './helpers/oauth.js';

const proxy = await startForwardProxy({ credentials: ['egress:s3cr@t', 'apikey123:'] });
const proxyWithCredentials = proxy.url.replace('://', '://egress:s3cr%40t@');
// An issuer reachable through the proxy only, one on loopback, and an OAuth2 provider for a custom provider.
const remote = await startOAuth2Server();
const remoteHost = `idp.proxied.test:${new URL(remote.base).port}`;
remote.base = `http://${remoteHost}`;
const local = await startOAuth2Server();
const custom = await startOAuth2Server();
const customHost = `custom.proxied.test:${new URL(custom.base).port}`;
const customLoopback = custom.base;
custom.base = `http://${customHost}`;

const database = await createTestDatabase();
const shared = {
  DATABASE_URL: database.url,
  AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: `${remote.base},${local.base}`,
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_MAILER_AUTOCONFIRM: 'true',
};
const open = await startTestService({
  ...shared,
  HTTP_PROXY: proxyWithCredentials,
  // https calls would take this one, which refuses every connection: none is made here.
  HTTPS_PROXY: 'http://127.0.0.1:1',
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
});
const guarded = await startTestService({ ...shared, http_proxy: proxyWithCredentials, no_proxy: `idp.proxied.test` });
t.teardown(async () => {
  await Promise.all([open.stop(), guarded.stop()]);
  await database.drop();
  await Promise.all([remote.stop(), local.stop(), custom.stop(), proxy.stop()]);
});

const idToken = (issuer: string, sub: string) => mobileIdToken(issuer === remote.base ? remote : local, issuer, sub);
const grant = (api: typeof open, issuer: string, sub: string) =>
  idToken(issuer, sub).then((token) =>
    api.request('POST', '/token?grant_type=id_token', { body: { id_token: token, issuer, client_id: 'mobile-app' } }),
  );

t.test('an issuer only the proxy reaches: discovery by fetch and keys by jose go through it, with its credentials', async (t) => {
  const before = proxy.seen.length;
  const res = await grant(open, remote.base, 'through-proxy');
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user?.email, 'through-proxy@example.com');
  t.equal(remote.discoveryRequests, 1);
  const calls = proxy.seen.slice(before);
  // As the original's client sends an http:// target: a plain request in absolute form, not a CONNECT tunnel.
  t.same(
    calls.map((c) => `${c.method} ${c.target}`),
    [`GET ${remote.base}/.well-known/openid-configuration`, `GET ${remote.base}/jwks`],
    'discovery and the key set, none to the unused HTTPS_PROXY',
  );
  t.ok(
    calls.every((c) => c.proxyAuthorization === `Basic ${Buffer.from('egress:s3cr@t').toString('base64')}`),
    "the proxy URL's user info is sent as its Basic credentials, decoded",
  );
});

t.test('a proxy URL with a user name alone sends it as credentials, as the original does', async (t) => {
  const tokenOnly = await startTestService({ ...shared, HTTP_PROXY: proxy.url.replace('://', '://apikey123@') });
  t.teardown(() => tokenOnly.stop());
  const before = proxy.seen.length;
  const res = await grant(tokenOnly, remote.base, 'token-only');
  t.equal(res.status, 200, res.text);
  const calls = proxy.seen.slice(before);
  t.ok(calls.length >= 1);
  t.ok(calls.every((c) => c.proxyAuthorization === `Basic ${Buffer.from('apikey123:').toString('base64')}`));
});

t.test('loopback goes direct: the proxy sees nothing of it', async (t) => {
  const before = proxy.seen.length;
  const res = await grant(open, local.base, 'loopback');
  t.equal(res.status, 200, res.text);
  t.equal(local.discoveryRequests, 1);
  t.same(proxy.seen.slice(before), []);
});

t.test('NO_PROXY names a host: its calls go direct, where its name does not resolve', async (t) => {
  const before = proxy.seen.length;
  const discoveries = remote.discoveryRequests;
  const res = await grant(guarded, remote.base, 'not-through-proxy');
  t.not(res.status, 200, 'the issuer is out of reach without the proxy');
  t.equal(remote.discoveryRequests, discoveries);
  t.same(proxy.seen.slice(before), [], 'the proxy was not asked');
  const rows = await guarded.db.query(`select 1 from users where email = 'not-through-proxy@example.com'`);
  t.equal(rows.rowCount, 0);
});

const admin = new GoTrueAdminApi({ url: open.url, headers: { Authorization: `Bearer ${await adminToken()}` } });
const saved = await admin.customProviders.createProvider({
  provider_type: 'oauth2',
  identifier: 'custom:egress',
  name: 'Egress',
  client_id: custom.clientId,
  client_secret: custom.clientSecret,
  authorization_url: `${custom.base}/oauth/authorize`,
  token_url: `${custom.base}/oauth/token`,
  userinfo_url: `${custom.base}/api/me`,
  scopes: ['email'],
});
if (saved.error) throw saved.error;

/** /authorize on `api`, the provider's approval (the test's browser reaches it on loopback), and the callback. */
async function signIn(api: typeof open) {
  const start = await fetch(`${api.url}/authorize?provider=custom:egress&redirect_to=https://app.example.test/done`, {
    redirect: 'manual',
  });
  const location = start.headers.get('location');
  if (start.status !== 302 || !location) throw new Error(`/authorize answered ${start.status}: ${await start.text()}`);
  const approval = await fetch(location.replace(custom.base, customLoopback), { redirect: 'manual' });
  const params = new URL(approval.headers.get('location')!).searchParams;
  return fragmentOf((await callback(api, params)).location);
}

t.test("a custom provider's calls through the proxy: made where allowed, refused before leaving where not", async (t) => {
  custom.approveAs = { sub: 'egress-1', email: 'egress@example.com', email_verified: true };
  const before = proxy.seen.length;
  const refused = await signIn(guarded);
  t.equal(refused.error, 'server_error');
  t.match(refused.error_description, /^Unable to exchange external code/);
  t.equal(custom.tokenRequests.length, 0, 'no request reached the provider');
  t.same(proxy.seen.slice(before), [], 'its name does not resolve here, so nothing was sent to the proxy');

  const allowed = await signIn(open);
  t.ok(allowed.access_token, 'with CUSTOM_OAUTH_ALLOW_PRIVATE_URLS the sign-in completes through the proxy');
  t.equal(custom.tokenRequests.length, 1);
  t.ok(proxy.seenFor(customHost).length >= 1, 'token and userinfo calls tunnelled to the provider');
});

t.test("AWS KMS signing goes through the proxy too, as the original's AWS SDK does", async (t) => {
  const kms = await startFakeKms('eu-west-1');
  const kmsHost = `kms.proxied.test:${new URL(kms.url).port}`;
  const signing = await startTestService({
    HTTP_PROXY: proxyWithCredentials,
    AUTH_JWT_KEYS: JSON.stringify([kms.jwk]),
    AWS_ENDPOINT_URL_KMS: `http://${kmsHost}`,
    AWS_ACCESS_KEY_ID: 'AKIAPORTCULLISTEST01',
    AWS_SECRET_ACCESS_KEY: 'fake-secret-access-key-for-the-test',
    AUTH_JWT_KMS_TIMEOUT: '5s',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  });
  t.teardown(async () => {
    await signing.stop();
    await kms.stop();
  });
  const res = await signing.request('POST', '/signup', { body: {} });
  t.equal(res.status, 200, res.text);
  t.equal(decodeProtectedHeader(res.body.access_token).kid, kms.jwk.kid, 'signed by the KMS key');
  t.ok(kms.requests.length >= 1);
  t.ok(proxy.seenFor(kmsHost).length >= 1, 'the Sign call reached KMS through the proxy (its name resolves nowhere else)');
});
