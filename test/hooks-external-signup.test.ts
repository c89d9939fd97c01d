// The user-created hooks for sign-ups through an external identity, as the original calls them: the OAuth
// callback (a real oidc-provider), the id_token grant and the Web3 grant. before-user-created sees the user
// about to be inserted and its refusal leaves no user; after-user-created is told of the committed user.
// A sign-in of an existing identity creates nobody and calls neither.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { startKeycloakRealm, REDIRECT_URI } from './helpers/oidc-provider.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf } from './helpers/oauth.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { ethereumAccount, signInMessage } from './helpers/web3.js';

const hooks = await startHookServer();
const keycloak = await startKeycloakRealm();
const hook = (name: string, path: string) => ({
  [`AUTH_HOOK_${name}_ENABLED`]: 'true',
  [`AUTH_HOOK_${name}_URI`]: `${hooks.url}${path}`,
  [`AUTH_HOOK_${name}_SECRETS`]: `${newHookSecret()}|${hooks.secret}`,
});
const api = await startTestService({
  ...providerEnv('keycloak', { clientId: 'kc-client', secret: keycloak.clientSecret, redirectUri: REDIRECT_URI, url: keycloak.issuer }),
  ...hook('BEFORE_USER_CREATED', '/before'),
  ...hook('AFTER_USER_CREATED', '/after'),
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_EXTERNAL_WEB3_ETHEREUM_ENABLED: 'true',
});
t.teardown(async () => {
  await api.stop();
  await keycloak.stop();
  await hooks.close();
});
hooks.on('/before', () => ({ body: {} }));
hooks.on('/after', () => ({ body: {} }));

const callsFor = (path: string, match: (user: Record<string, any>) => boolean) =>
  hooks.callsTo(path).filter((c) => match(c.payload.user as Record<string, any>));
const usersWithEmail = async (email: string) => (await api.db.query('select id from users where email = $1', [email])).rowCount;

async function oauthSignIn(sub: string, email: string) {
  keycloak.accounts.set(sub, { sub, email, email_verified: true, name: `User ${sub}` });
  const url = await authorizeUrl(api, 'provider=keycloak');
  return callback(api, await keycloak.signIn(url.href, sub));
}

t.test(
  'OAuth callback: before-user-created sees the new user, after-user-created the committed one; a return visit calls neither',
  async (t) => {
    const email = 'hooked-oauth@example.com';
    const { location } = await oauthSignIn('kc-hooked', email);
    const session = fragmentOf(location);
    t.ok(session.access_token, 'signed in');
    const me = (await api.request('GET', '/user', { token: session.access_token })).body;

    const before = callsFor('/before', (u) => u.email === email);
    t.equal(before.length, 1);
    t.match(before[0].payload.user, { id: me.id, email, app_metadata: { provider: 'keycloak', providers: ['keycloak'] } });
    t.equal(before[0].payload.user.user_metadata.name, 'User kc-hooked');
    const after = callsFor('/after', (u) => u.email === email);
    t.equal(after.length, 1);
    t.match(after[0].payload.user, { id: me.id, identities: [{ provider: 'keycloak', id: 'kc-hooked' }] });

    const again = await oauthSignIn('kc-hooked', email);
    t.ok(fragmentOf(again.location).access_token, 'signed in again');
    t.equal(callsFor('/before', (u) => u.email === email).length, 1, 'no new user: before-user-created not called');
    t.equal(callsFor('/after', (u) => u.email === email).length, 1, 'no new user: after-user-created not called');
  },
);

t.test('OAuth callback: a refusal of before-user-created is redirected as the error, and no user or identity is left', async (t) => {
  hooks.once('/before', { body: { error: { http_code: 403, message: 'Sign-ups from this provider are closed' } } });
  const email = 'refused-oauth@example.com';
  const { location } = await oauthSignIn('kc-refused', email);
  t.equal(fragmentOf(location).access_token, undefined);
  const error = { ...queryOf(location), ...fragmentOf(location) };
  t.match(error, { error_description: 'Sign-ups from this provider are closed' });
  t.equal(await usersWithEmail(email), 0);
  t.equal((await api.db.query("select 1 from identities where provider = 'keycloak' and provider_id = 'kc-refused'")).rowCount, 0);
  t.equal(callsFor('/after', (u) => u.email === email).length, 0, 'a user never created is never announced');
});

t.test('OAuth callback: an error of after-user-created is redirected as the error; the user stays, as in the original', async (t) => {
  hooks.once('/after', { body: { error: { http_code: 409, message: 'CRM unavailable' } } });
  const email = 'after-refused-oauth@example.com';
  const { status, location } = await oauthSignIn('kc-after', email);
  t.equal(status, 302, 'a redirect, as every error of the flow, not a JSON answer');
  t.match({ ...queryOf(location), ...fragmentOf(location) }, { error_description: 'CRM unavailable' });
  t.equal(await usersWithEmail(email), 1);
});

t.test('id_token grant: the new user goes through both hooks; a refusal is the answer and leaves nothing', async (t) => {
  const nonce = 'nonce-0123456789';
  const nonceHash = createHash('sha256').update(nonce).digest('hex');
  const idToken = (sub: string, email: string) => keycloak.signIdToken({ sub, email, email_verified: true, nonce: nonceHash });
  const email = 'hooked-idtoken@example.com';
  const res = await api.request('POST', '/token?grant_type=id_token', {
    body: { provider: 'keycloak', id_token: await idToken('kc-idt', email), nonce },
  });
  t.equal(res.status, 200);
  t.equal(callsFor('/before', (u) => u.email === email).length, 1);
  t.match(callsFor('/after', (u) => u.email === email)[0]?.payload.user, { id: res.body.user.id });

  hooks.once('/before', { body: { error: { http_code: 422, message: 'Not now' } } });
  const refusedEmail = 'refused-idtoken@example.com';
  const refused = await api.request('POST', '/token?grant_type=id_token', {
    body: { provider: 'keycloak', id_token: await idToken('kc-idt-refused', refusedEmail), nonce },
  });
  t.same([refused.status, refused.body.msg], [422, 'Not now']);
  t.equal(await usersWithEmail(refusedEmail), 0);
});

t.test('web3 grant: a new wallet goes through both hooks; a refusal leaves no user and the message is not spent', async (t) => {
  const account = ethereumAccount();
  const subject = `web3:ethereum:${account.address}`;
  const sign = (nonce: string) => {
    const message = signInMessage('Ethereum', account.address, { nonce });
    return { chain: 'ethereum', message, signature: account.sign(message) };
  };
  const isThisWallet = (u: Record<string, any>) => u.user_metadata?.sub === subject;

  hooks.once('/before', { body: { error: { http_code: 403, message: 'Wallets are not welcome' } } });
  const body = sign('refused-nonce');
  const refused = await api.request('POST', '/token?grant_type=web3', { body });
  t.same([refused.status, refused.body.msg], [403, 'Wallets are not welcome']);
  t.equal((await api.db.query("select 1 from identities where provider = 'web3' and provider_id = $1", [subject])).rowCount, 0);
  t.equal(callsFor('/before', isThisWallet).length, 1);
  t.match(callsFor('/before', isThisWallet)[0].payload.user, { app_metadata: { provider: 'web3' } });

  // The refusal rolled back the message's use too: the same signed message can be tried again.
  const admitted = await api.request('POST', '/token?grant_type=web3', { body });
  t.equal(admitted.status, 200);
  t.equal(callsFor('/before', isThisWallet).length, 2);
  t.match(callsFor('/after', isThisWallet)[0]?.payload.user, { id: admitted.body.user.id, identities: [{ provider: 'web3' }] });

  const again = await api.request('POST', '/token?grant_type=web3', { body: sign('second-nonce') });
  t.equal(again.status, 200);
  t.equal(callsFor('/before', isThisWallet).length, 2, 'an existing wallet creates nobody');
});
