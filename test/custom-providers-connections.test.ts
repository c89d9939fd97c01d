// A custom provider's calls reach public addresses only, checked on the address each connection is made to
// (docs/custom-providers.md#urls), not just when the admin API saved the URL: a name that resolves to a
// loopback address by the time of a sign-in (here `localhost`, standing for a record changed after saving
// or DNS rebinding) is never called, nor is a stored loopback literal. Two instances share one database: one
// with CUSTOM_OAUTH_ALLOW_PRIVATE_URLS, which saves the providers and shows the same sign-ins work there, and
// one without, as production runs.
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf } from './helpers/oauth.js';

const idp = await startOidcProvider({ clientId: 'guarded-client' });
const plain = await startOAuth2Server();
const database = await createTestDatabase();
const env = {
  DATABASE_URL: database.url,
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_MAILER_AUTOCONFIRM: 'true',
};
const open = await startTestService({ ...env, AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true' });
const guarded = await startTestService(env);
t.teardown(async () => {
  await Promise.all([open.stop(), guarded.stop()]);
  await database.drop();
  await Promise.all([idp.stop(), plain.stop()]);
});

const admin = new GoTrueAdminApi({ url: open.url, headers: { Authorization: `Bearer ${await adminToken()}` } });
// Saved through the instance that allows private addresses: by name (resolved at each connection) …
const byName = plain.base.replace('127.0.0.1', 'localhost');
const savedPlain = await admin.customProviders.createProvider({
  provider_type: 'oauth2',
  identifier: 'custom:renamed',
  name: 'Renamed',
  client_id: plain.clientId,
  client_secret: plain.clientSecret,
  authorization_url: `${byName}/oauth/authorize`,
  token_url: `${byName}/oauth/token`,
  userinfo_url: `${byName}/api/me`,
  scopes: ['email'],
});
if (savedPlain.error) throw savedPlain.error;
// … and by a loopback literal (an OIDC issuer whose discovery names 127.0.0.1 endpoints).
const savedOidc = await admin.customProviders.createProvider({
  provider_type: 'oidc',
  identifier: 'custom:literal',
  name: 'Literal',
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  issuer: idp.issuer,
  scopes: ['email'],
});
if (savedOidc.error) throw savedOidc.error;
idp.accounts.set('lit-1', { sub: 'lit-1', email: 'literal@example.com', email_verified: true });

/** /authorize on `api` for `provider`, the provider's approval, and the callback's redirect to the app. */
async function signIn(api: typeof open, provider: string, approve: (providerUrl: URL) => Promise<URLSearchParams>) {
  const start = await fetch(`${api.url}/authorize?provider=${provider}&redirect_to=https://app.example.test/done`, { redirect: 'manual' });
  const location = start.headers.get('location');
  if (start.status !== 302 || !location) throw new Error(`/authorize answered ${start.status}: ${await start.text()}`);
  return (await callback(api, await approve(new URL(location)))).location;
}
const plainApproves = async (providerUrl: URL) => {
  const res = await fetch(providerUrl.href.replace('localhost', '127.0.0.1'), { redirect: 'manual' });
  return new URL(res.headers.get('location')!).searchParams;
};
const idpApproves = async (providerUrl: URL) => idp.signIn(providerUrl.href, 'lit-1');

t.test('a stored name that resolves to loopback: the token endpoint is never called', async (t) => {
  plain.approveAs = { sub: 'renamed-1', email: 'renamed@example.com', email_verified: true };
  const before = plain.tokenRequests.length;
  const refused = fragmentOf(await signIn(guarded, 'custom:renamed', plainApproves));
  t.equal(refused.error, 'server_error');
  t.match(refused.error_description, /^Unable to exchange external code/);
  t.equal(plain.tokenRequests.length, before, 'no connection reached the provider');
  t.equal((await guarded.db.query(`select 1 from users where email = 'renamed@example.com'`)).rowCount, 0);

  plain.approveAs = { sub: 'renamed-1', email: 'renamed@example.com', email_verified: true };
  const allowed = fragmentOf(await signIn(open, 'custom:renamed', plainApproves));
  t.ok(allowed.access_token, 'with CUSTOM_OAUTH_ALLOW_PRIVATE_URLS the same sign-in completes');
  t.equal(plain.tokenRequests.length, before + 1);
});

t.test('a stored loopback literal: refused before any connection', async (t) => {
  const refused = fragmentOf(await signIn(guarded, 'custom:literal', idpApproves));
  t.equal(refused.error, 'server_error');
  t.match(refused.error_description, /^Unable to exchange external code/);
  t.equal((await guarded.db.query(`select 1 from users where email = 'literal@example.com'`)).rowCount, 0);
  const allowed = fragmentOf(await signIn(open, 'custom:literal', idpApproves));
  t.ok(allowed.access_token, 'with CUSTOM_OAUTH_ALLOW_PRIVATE_URLS the same sign-in completes');
});
