// Linking domains (docs/oauth.md#linking-domains): EXPERIMENTAL_PROVIDER_LINKING_DOMAINS and the deprecated
// EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN decide which accounts a provider's verified address may link
// to. Real OpenID Connect providers (oidc-provider) play google, keycloak and a custom provider `custom:acme`
// registered through the admin API; the GitHub fake plays a provider the settings do not name. One service
// runs without the settings (everything links by verified email, as before), one with
//   google=social, custom:acme=social  and the legacy list  keycloak, custom:acme
// so that keycloak has a domain of its own and custom:acme, in both, shows the map winning.
import t from 'tap';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { startTestService, type TestService } from './helpers/server.js';
import { startKeycloakRealm, startOidcProvider, REDIRECT_URI, type OidcServer } from './helpers/oidc-provider.js';
import { startGithubFake } from './helpers/github.js';
import { adminToken } from './helpers/admin.js';
import { confirmedUser, PASSWORD } from './helpers/users.js';
import { signIn as passwordSignIn } from './helpers/accounts.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, githubEnv } from './helpers/oauth.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { linkingDomainOf } from '../dist/server/oauth/linking-domains.js';

const google = await startOidcProvider({ clientId: 'g-client' });
const acme = await startOidcProvider({ clientId: 'acme-client' });
const keycloak = await startKeycloakRealm();
const gh = await startGithubFake();

const providers = {
  ...providerEnv('google', { clientId: google.clientId, secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  ...providerEnv('keycloak', {
    clientId: keycloak.clientId,
    secret: keycloak.clientSecret,
    redirectUri: REDIRECT_URI,
    url: keycloak.issuer,
  }),
  ...githubEnv(gh),
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
};
const plain = await startTestService(providers);
const grouped = await startTestService({
  ...providers,
  AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: ' google = social , custom:acme=social',
  GOTRUE_EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN: 'keycloak,custom:acme',
});
t.teardown(async () => {
  await Promise.all([plain.stop(), grouped.stop()]);
  await Promise.all([google.stop(), acme.stop(), keycloak.stop(), gh.stop()]);
});

for (const api of [plain, grouped]) {
  const res = await api.request('POST', '/admin/custom-providers', {
    token: await adminToken(),
    body: {
      provider_type: 'oidc',
      identifier: 'custom:acme',
      name: 'Acme',
      client_id: acme.clientId,
      client_secret: acme.clientSecret,
      issuer: acme.issuer,
      scopes: ['email'],
    },
  });
  if (res.status !== 201) throw new Error(`custom provider: ${res.status} ${res.text}`);
}

let next = 0;
/** A sign-in through /authorize and the provider's pages, as `email` (verified); the /user of the session. */
async function signInWith(api: TestService, provider: 'google' | 'custom:acme' | 'keycloak' | 'github', email: string) {
  const sub = `${provider.replace(':', '-')}-${++next}`;
  const url = await authorizeUrl(api, `provider=${provider}`);
  let params: URLSearchParams;
  if (provider === 'github') {
    gh.users.set(next, {
      id: next,
      login: sub,
      name: sub,
      avatar_url: '',
      emails: [{ email, primary: true, verified: true, visibility: 'public' }],
    });
    gh.approveAs = next;
    params = await gh.approve(url.href);
  } else {
    const idp: OidcServer = { google, 'custom:acme': acme, keycloak }[provider];
    idp.accounts.set(sub, { sub, email, email_verified: true });
    params = await idp.signIn(url.href, sub);
  }
  const { location } = await callback(api, params);
  const token = fragmentOf(location).access_token;
  if (!token) throw new Error(`no session: ${location.href}`);
  return (await api.request('GET', '/user', { token })).body;
}

const providersOf = (user: { identities: { provider: string }[] }) => user.identities.map((i) => i.provider).sort();
const ssoFlag = async (api: TestService, id: string) =>
  (await api.db.query('select is_sso_user from users where id = $1', [id])).rows[0].is_sso_user;

t.test('without the settings every provider links by verified email to the password account, as before', async (t) => {
  const owner = await confirmedUser(plain, 'mia@example.com');
  const viaGoogle = await signInWith(plain, 'google', 'mia@example.com');
  const viaAcme = await signInWith(plain, 'custom:acme', 'mia@example.com');
  const viaKeycloak = await signInWith(plain, 'keycloak', 'mia@example.com');
  t.equal(viaGoogle.id, owner.user.id);
  t.equal(viaAcme.id, owner.user.id);
  t.equal(viaKeycloak.id, owner.user.id);
  t.same(providersOf(viaKeycloak), ['custom:acme', 'email', 'google', 'keycloak']);
  t.equal(await ssoFlag(plain, owner.user.id), false);
});

t.test('two providers in one named domain: a separate account from the password one, shared between them', async (t) => {
  const owner = await confirmedUser(grouped, 'lena@example.com');

  const viaGoogle = await signInWith(grouped, 'google', 'lena@example.com');
  t.not(viaGoogle.id, owner.user.id, 'google does not link to the email account');
  t.equal(viaGoogle.email, 'lena@example.com', 'the new account keeps the verified address the other one holds too');
  t.ok(viaGoogle.email_confirmed_at);
  t.equal(await ssoFlag(grouped, viaGoogle.id), true, 'flagged is_sso_user, as the original flags accounts outside the default domain');

  // custom:acme is also in the legacy list: were it used, acme would be a domain of its own.
  const viaAcme = await signInWith(grouped, 'custom:acme', 'lena@example.com');
  t.equal(viaAcme.id, viaGoogle.id, 'custom:acme links to the google account: the map wins over the legacy list');
  t.same(providersOf(viaAcme), ['custom:acme', 'google']);

  const owners = await grouped.db.query("select id from users where email = 'lena@example.com' order by created_at");
  t.equal(owners.rowCount, 2);
  const password = await passwordSignIn(grouped, 'lena@example.com', PASSWORD);
  t.equal(password.user.id, owner.user.id, 'the password still signs in the email account');
  const ownerNow = await grouped.request('GET', '/user', { token: password.access_token });
  t.same(providersOf(ownerNow.body), ['email'], 'which gained no identity');
});

t.test('the id_token grant follows the same domains', async (t) => {
  const owner = await confirmedUser(grouped, 'ida@example.com');
  const token = await google.signIdToken({ sub: 'g-id-1', email: 'ida@example.com', email_verified: true });
  const res = await grouped.request('POST', '/token?grant_type=id_token', { body: { provider: 'google', id_token: token } });
  t.equal(res.status, 200, 'the grant signs in');
  t.not(res.body.user.id, owner.user.id);
  t.equal(res.body.user.email, 'ida@example.com');
});

t.test('the legacy list: keycloak is a domain of its own; an unnamed provider stays in the default domain', async (t) => {
  const owner = await confirmedUser(grouped, 'kai@example.com');
  const viaGoogle = await signInWith(grouped, 'google', 'kai@example.com');

  const viaKeycloak = await signInWith(grouped, 'keycloak', 'kai@example.com');
  t.not(viaKeycloak.id, owner.user.id, 'not the email account');
  t.not(viaKeycloak.id, viaGoogle.id, "not the social domain's account");
  const again = await signInWith(grouped, 'keycloak', 'kai@example.com');
  t.equal(again.id, viaKeycloak.id, 'another keycloak subject of that address links within the keycloak domain');
  t.same(providersOf(again), ['keycloak', 'keycloak']);

  const viaGithub = await signInWith(grouped, 'github', 'kai@example.com');
  t.equal(viaGithub.id, owner.user.id, 'github, named nowhere, links to the email account');
  t.same(providersOf(viaGithub), ['email', 'github']);
});

t.test('the deprecated list is logged once at start with what to use instead', async (t) => {
  const notices = grouped.logs().filter((l) => l.deprecated === 'EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN');
  t.equal(notices.length, 1);
  t.match(notices[0].instead, /EXPERIMENTAL_PROVIDER_LINKING_DOMAINS/);
  t.equal(plain.logs().filter((l) => l.deprecated === 'EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN').length, 0);
});

t.test('the map as configured: names exact, colons kept, the legacy list filled in where the map is silent', async (t) => {
  const c = loadConfig({
    envFile: null,
    env: {
      GOTRUE_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: 'github=social,custom:google = social ,apple=a=b',
      GOTRUE_EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN: 'custom:google,zoom',
    },
  });
  t.strictSame({ ...c.experimental.providerLinkingDomains }, { github: 'social', 'custom:google': 'social', apple: 'a=b', zoom: 'zoom' });
  t.strictSame({ ...loadConfig({ envFile: null, env: {} }).experimental.providerLinkingDomains }, {});
  const domains = c.experimental.providerLinkingDomains;
  t.equal(linkingDomainOf('custom:github', domains), 'default', 'github and custom:github are different names');
  t.equal(linkingDomainOf('email', domains), 'default');
  t.equal(linkingDomainOf('constructor', domains), 'default', "an Object.prototype member's name is no entry");
  t.equal(linkingDomainOf('sso:abc', { 'sso:abc': 'social' }), 'sso:abc', 'an SSO provider is its own domain whatever the map says');
});

t.test('a malformed map stops the start, naming the variable and the pair', async (t) => {
  const problemsOf = (value: string) => {
    try {
      loadConfig({ envFile: null, env: { AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: value } });
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  };
  t.same(problemsOf('custom:github:social'), [
    'AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: "custom:github:social" is not a key=value pair',
  ]);
  t.same(problemsOf('github=social,google='), [
    'AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: "google=" is not a key=value pair: both must be non-empty',
  ]);
  t.same(problemsOf('=social'), ['AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: "=social" is not a key=value pair: both must be non-empty']);
  t.same(problemsOf('github=social,'), ['AUTH_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: "github=social," has an empty pair (a stray comma)']);

  const run = spawnSync(process.execPath, [path.resolve('bin/portcullis.js'), 'serve'], {
    cwd: mkdtempSync(path.join(os.tmpdir(), 'linking-domains-')),
    encoding: 'utf8',
    timeout: 60_000, // a safety net only: the refusal comes before anything starts
    env: { PATH: process.env.PATH, GOTRUE_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: 'custom:github:social' },
  });
  t.equal(run.status, 1);
  t.match(run.stderr, /GOTRUE_EXPERIMENTAL_PROVIDER_LINKING_DOMAINS: "custom:github:social" is not a key=value pair/);
});
