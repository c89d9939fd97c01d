// POST /token?grant_type=id_token for the providers whose tokens the original takes from more than one issuer
// or audience: apple (appleid.apple.com and account.apple.com; EXTERNAL_IOS_BUNDLE_ID as one more `aud`),
// azure (Microsoft's issuers whatever tenant is configured, each by its own keys; xms_edov), and
// vercel_marketplace (its own claim names; global_user_id as the identity, so identities the original
// made are found). Real oidc-provider instances publish the keys; tokens name the issuers under test.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startOidcProvider } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';

const REDIRECT = 'https://app.example.test/auth/v1/callback';

const appleIdp = await startOidcProvider({ clientId: 'com.example.web' });
const azureIdp = await startOidcProvider({
  clientId: 'az-client',
  issuerPath: '/v2.0',
  routes: { authorization: '/oauth2/v2.0/authorize', token: '/oauth2/v2.0/token', jwks: '/discovery/v2.0/keys' },
});
const vercelIdp = await startOidcProvider({ clientId: 'oac_vercel' });
const api = await startTestService({
  ...providerEnv('apple', { clientId: 'com.example.web', secret: appleIdp.clientSecret, redirectUri: REDIRECT, url: appleIdp.issuer }),
  AUTH_EXTERNAL_IOS_BUNDLE_ID: 'com.example.ios',
  ...providerEnv('azure', { clientId: 'az-client', secret: azureIdp.clientSecret, redirectUri: REDIRECT, url: azureIdp.base }),
  ...providerEnv('vercel_marketplace', {
    clientId: 'oac_vercel',
    secret: vercelIdp.clientSecret,
    redirectUri: REDIRECT,
    url: vercelIdp.issuer,
  }),
});
// A native iOS app's setup: Sign in with Apple switched on with the bundle id only, no Services ID, secret or
// redirect URI (the web flow cannot run; the original takes the grant all the same).
const native = await startTestService({
  AUTH_EXTERNAL_APPLE_ENABLED: 'true',
  AUTH_EXTERNAL_APPLE_URL: appleIdp.issuer,
  AUTH_EXTERNAL_IOS_BUNDLE_ID: 'com.example.ios',
});
t.teardown(async () => {
  await native.stop();
  await api.stop();
  await Promise.all([appleIdp.stop(), azureIdp.stop(), vercelIdp.stop()]);
});

const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });
const v = (msg: string) => ({ code: 400, error_code: 'validation_failed', msg });

t.test('apple: tokens of either Apple issuer are taken, checked against the configured keys', async (t) => {
  for (const [i, issuer] of ['https://account.apple.com', 'https://appleid.apple.com', appleIdp.issuer].entries()) {
    const token = await appleIdp.signIdToken(
      { sub: `apple-iss-${i}`, email: `iss${i}@privaterelay.example`, email_verified: 'true' },
      { issuer },
    );
    const res = await grant({ provider: 'apple', id_token: token });
    t.equal(res.status, 200, `${issuer}: ${res.text}`);
    t.equal(res.body.user.identities[0].identity_data.iss, issuer);
  }
  const byIssuer = await appleIdp.signIdToken({ sub: 'apple-iss-0' }, { issuer: 'https://account.apple.com' });
  t.equal(
    (await grant({ client_id: 'com.example.web', issuer: 'https://account.apple.com', id_token: byIssuer })).status,
    200,
    'found by issuer',
  );
  const other = await appleIdp.signIdToken({ sub: 'apple-evil', email: 'e@example.com' }, { issuer: 'https://apple.example.test' });
  t.same(
    (await grant({ provider: 'apple', id_token: other })).body,
    v('Detected ID token issuer is not an Apple ID token issuer'),
    'no other issuer',
  );
});

t.test("apple and azure: the token's issuer is read before anything is fetched, and refused as the original refuses it", async (t) => {
  // A token nobody signed: only its payload is read, so a refusal here proves no key was consulted.
  const unsigned = (iss: string) => `e30.${Buffer.from(JSON.stringify({ iss, sub: 'x' })).toString('base64url')}.sig`;
  t.same(
    (await grant({ provider: 'apple', issuer: 'https://appleid.apple.com', id_token: unsigned('https://non-apple.example.com') })).body,
    v('Detected ID token issuer is not an Apple ID token issuer'),
  );
  t.same(
    (await grant({ provider: 'apple', issuer: 'https://appleid.apple.com', id_token: unsigned('https://account.apple.com') })).body,
    v('Provided issuer does not match ID token issuer'),
  );
  t.same((await grant({ provider: 'apple', id_token: 'not-a-token' })).body, v('Unable to detect issuer in ID token for Apple provider'));
  t.same((await grant({ provider: 'azure', id_token: 'a.%%%.c' })).body, v('Unable to detect issuer in ID token for Azure provider'));
  t.same(
    (await grant({ provider: 'azure', issuer: 'https://non-azure.example.com', id_token: unsigned('https://non-azure.example.com') })).body,
    v('Detected ID token issuer is not an Azure ID token issuer'),
  );
  t.same(
    (
      await grant({
        issuer: 'https://login.microsoftonline.com/tenant-a/v2.0',
        client_id: 'az-client',
        id_token: unsigned('https://login.microsoftonline.com/tenant-b/v2.0'),
      })
    ).body,
    v('Provided issuer does not match ID token issuer'),
    'found by its issuer, then compared with the one the token names',
  );
});

t.test(
  'apple: EXTERNAL_IOS_BUNDLE_ID is an accepted audience at the id_token grant; custom_claims as the original keeps them',
  async (t) => {
    const token = await appleIdp.signIdToken(
      {
        sub: 'apple-ios-1',
        email: 'ios@privaterelay.example',
        email_verified: 'true',
        is_private_email: 'true',
        auth_time: 1700000000,
        real_user_status: 2,
      },
      { audience: 'com.example.ios', issuer: 'https://appleid.apple.com' },
    );
    const res = await grant({ provider: 'apple', id_token: token });
    t.equal(res.status, 200, res.text);
    t.strictSame(res.body.user.identities[0].identity_data.custom_claims, { is_private_email: true, auth_time: 1700000000 });
    t.strictSame(res.body.user.user_metadata.custom_claims, { is_private_email: true, auth_time: 1700000000 });

    const otherApp = await appleIdp.signIdToken({ sub: 'apple-ios-2' }, { audience: 'com.example.other' });
    t.same((await grant({ provider: 'apple', id_token: otherApp })).body, {
      error: 'invalid request',
      error_description: 'Unacceptable audience in id_token: [com.example.other]',
    });
  },
);

t.test("apple: the address counts as verified whatever the token's email_verified says", async (t) => {
  for (const [i, verified] of [false, 'false', undefined].entries()) {
    const token = await appleIdp.signIdToken(
      { sub: `apple-unverified-${i}`, email: `unverified${i}@privaterelay.example`, email_verified: verified },
      { issuer: 'https://appleid.apple.com' },
    );
    const res = await grant({ provider: 'apple', id_token: token });
    t.equal(res.status, 200, `email_verified ${String(verified)}: ${res.text}`);
    t.ok(res.body.user.email_confirmed_at, `email_verified ${String(verified)}: confirmed`);
    t.equal(res.body.user.user_metadata.email_verified, true);
  }
});

t.test(
  'apple and vercel_marketplace: a token without an address signs in, as in the original, to a confirmed account with no email',
  async (t) => {
    const apple = await appleIdp.signIdToken({ sub: 'apple-no-email' }, { issuer: 'https://appleid.apple.com' });
    const first = await grant({ provider: 'apple', id_token: apple });
    t.equal(first.status, 200, first.text);
    t.equal(first.body.user.email, '');
    t.ok(first.body.user.email_confirmed_at, 'confirmed, as the original confirms the address-less person the provider vouches for');
    t.match(first.body.user.identities[0], { provider: 'apple', identity_data: { sub: 'apple-no-email', email_verified: true } });
    const again = await grant({
      provider: 'apple',
      id_token: await appleIdp.signIdToken({ sub: 'apple-no-email' }, { issuer: 'https://appleid.apple.com' }),
    });
    t.equal(again.body.user?.id, first.body.user.id, 'and signs in again to the same account');

    const vercel = await vercelIdp.signIdToken({ sub: 'v-no-email', global_user_id: 'g-no-email' });
    const res = await grant({ provider: 'vercel_marketplace', id_token: vercel });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.email, '');
  },
);

t.test("azure: a token is checked by its issuer's own keys; issuers outside Microsoft's are refused", async (t) => {
  // The configured base's own issuer (how a local server stands in for Microsoft); the Microsoft tenant
  // issuers are taken as the unit tests show (oauth-provider-claims), each by its own discovered keys.
  const own = await azureIdp.signIdToken({ sub: 'az-own', email: 'own@contoso.example' }, { issuer: `${azureIdp.base}/v2.0` });
  const res = await grant({ provider: 'azure', id_token: own });
  t.equal(res.status, 200, res.text);
  t.ok(res.body.user.email_confirmed_at, 'no xms_edov: the address counts verified');
  for (const issuer of ['https://login.microsoftonline.com.evil.example/x/v2.0', 'https://evil.example/v2.0', appleIdp.issuer]) {
    const token = await azureIdp.signIdToken({ sub: 'az-evil', email: 'evil@example.com' }, { issuer });
    t.same(
      (await grant({ provider: 'azure', id_token: token })).body,
      v('Detected ID token issuer is not an Azure ID token issuer'),
      `${issuer} refused`,
    );
  }
  t.equal((await api.db.query(`select count(*)::int as n from identities where provider_id = 'az-evil'`)).rows[0].n, 0);
});

t.test('azure: xms_edov "1" verifies the address, false leaves it unverified', async (t) => {
  const ok = await azureIdp.signIdToken({ sub: 'az-edov-1', email: 'edov1@contoso.example', xms_edov: '1' });
  const res = await grant({ provider: 'azure', id_token: ok });
  t.equal(res.status, 200, res.text);
  t.ok(res.body.user.email_confirmed_at);
  const no = await azureIdp.signIdToken({ sub: 'az-edov-0', email: 'edov0@contoso.example', xms_edov: false, email_verified: true });
  const refused = await grant({ provider: 'azure', id_token: no });
  t.equal(refused.status, 422);
  t.equal(refused.body.error_code, 'provider_email_needs_verification');
});

t.test(
  'apple switched on for a native app alone (bundle id, no secret or redirect URI): the grant signs in; the web flow stays off',
  async (t) => {
    const token = await appleIdp.signIdToken(
      { sub: 'apple-native', email: 'native@privaterelay.example', email_verified: 'true' },
      { audience: 'com.example.ios', issuer: 'https://appleid.apple.com' },
    );
    const res = await native.request('POST', '/token?grant_type=id_token', { body: { provider: 'apple', id_token: token } });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.email, 'native@privaterelay.example');
    t.equal((await native.request('GET', '/settings')).body.external.apple, false, 'the redirect flow cannot run');
    t.equal((await native.request('GET', '/authorize?provider=apple')).status, 400);
  },
);

t.test("snapchat's issuer is snapchat's even while it is off: refused as a disabled provider, not an unknown issuer", async (t) => {
  const res = await grant({ client_id: 'snap-client', issuer: 'https://accounts.snapchat.com/accounts/oauth2/token', id_token: 'x.y.z' });
  t.same(
    [res.status, res.body],
    [
      400,
      {
        code: 400,
        error_code: 'provider_disabled',
        msg: 'Provider (issuer "https://accounts.snapchat.com/accounts/oauth2/token") is not enabled',
      },
    ],
  );
});

t.test('vercel_marketplace: user_email signs in, and global_user_id finds the identity whatever the sub', async (t) => {
  const first = await vercelIdp.signIdToken({
    sub: 'account:a1:user:u1',
    global_user_id: 'gu-1',
    user_email: 'vee@vercel-user.example',
    user_name: 'Vee',
    user_avatar_url: 'https://vercel.example/vee.png',
  });
  const res = await grant({ provider: 'vercel_marketplace', id_token: first });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user.email, 'vee@vercel-user.example');
  t.ok(res.body.user.email_confirmed_at, 'the address counts verified');
  t.match(res.body.user.identities, [
    {
      provider: 'vercel_marketplace',
      id: 'global_user_id:gu-1',
      identity_data: {
        sub: 'global_user_id:gu-1',
        provider_id: 'global_user_id:gu-1',
        name: 'Vee',
        picture: 'https://vercel.example/vee.png',
      },
    },
  ]);
  const otherInstallation = await vercelIdp.signIdToken({
    sub: 'account:a2:user:u9',
    global_user_id: 'gu-1',
    user_email: 'vee@vercel-user.example',
  });
  const again = await grant({ provider: 'vercel_marketplace', id_token: otherInstallation });
  t.equal(again.body.user.id, res.body.user.id, 'another installation, the same person');

  // An identity the original made (adopted with its database): found by its provider_id, whatever address the token names.
  const legacy = await grant({
    provider: 'vercel_marketplace',
    id_token: await vercelIdp.signIdToken({ sub: 'legacy-sub', user_email: 'legacy@vercel-user.example' }),
  });
  t.equal(legacy.status, 200, legacy.text);
  t.equal(legacy.body.user.identities[0].id, 'legacy-sub', 'without global_user_id, the subject');
  await api.db.query(
    `update identities set provider_id = 'global_user_id:gu-adopted' where provider = 'vercel_marketplace' and provider_id = 'legacy-sub'`,
  );
  const adopted = await grant({
    provider: 'vercel_marketplace',
    id_token: await vercelIdp.signIdToken({
      sub: 'account:a3:user:u3',
      global_user_id: 'gu-adopted',
      user_email: 'legacy@vercel-user.example',
    }),
  });
  t.equal(adopted.status, 200, adopted.text);
  t.equal(adopted.body.user.id, legacy.body.user.id);
  t.equal(
    (
      await api.db.query(
        `select count(*)::int as n from identities where provider = 'vercel_marketplace' and provider_id like 'global_user_id:gu-%'`,
      )
    ).rows[0].n,
    2,
  );
});
