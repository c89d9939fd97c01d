// How the OIDC-family modules read verified claims and which issuers they take, checked on the modules
// themselves (no service): vercel_marketplace's own claim names and global_user_id subject, azure's
// xms_edov rule and tenant issuers, apple's custom_claims, and the default scopes the original asks for.
import t from 'tap';
import { SignJWT, generateKeyPair } from 'jose';
import { vercelMarketplace } from '../dist/server/providers/vercel_marketplace.js';
import { azure } from '../dist/server/providers/azure.js';
import { azureTrust, pinnedAzureIssuer } from '../dist/server/providers/azure-issuers.js';
import { apple } from '../dist/server/providers/apple.js';
import { google } from '../dist/server/providers/google.js';
import { keycloak } from '../dist/server/providers/keycloak.js';
import { linkedinOidc } from '../dist/server/providers/linkedin_oidc.js';
import { CLIENT_ID, providerConfig, startProviderFake, testRuntime, userEndpoint } from './helpers/provider-fakes.js';
import { startOidcProvider } from './helpers/oidc-provider.js';
import { createProviderRuntime } from '../dist/server/providers/runtime.js';
import { storableProfile, UnstorableProfile } from '../dist/server/providers/storable.js';
import type { ProviderRuntime } from '../dist/server/providers/types.js';

const GUID = '72f988bf-86f1-41af-91ab-2d7cd011db47';

t.test('vercel_marketplace: the person from user_email, user_name and user_avatar_url; global_user_id is the subject', async (t) => {
  const profile = vercelMarketplace.profile({
    iss: 'https://marketplace.vercel.com',
    sub: 'account:abc:user:def',
    aud: 'oac_client',
    global_user_id: 'gu_123',
    user_email: 'vee@example.com',
    user_name: 'Vee Cell',
    user_avatar_url: 'https://vercel.example/avatar.png',
    installation_id: 'icfg_1',
  });
  t.equal(profile.subject, 'global_user_id:gu_123');
  t.same(profile.emails, [{ email: 'vee@example.com', verified: true, primary: true }], 'always counted verified');
  t.strictSame(profile.claims, {
    iss: 'https://marketplace.vercel.com',
    sub: 'global_user_id:gu_123',
    provider_id: 'global_user_id:gu_123',
    name: 'Vee Cell',
    picture: 'https://vercel.example/avatar.png',
  });

  const noGlobalId = vercelMarketplace.profile({ iss: 'https://marketplace.vercel.com', sub: 'account:abc:user:def' });
  t.equal(noGlobalId.subject, 'account:abc:user:def', 'without global_user_id, the token subject');
  t.equal(noGlobalId.claims.provider_id, 'account:abc:user:def');
  t.same(noGlobalId.emails, [], 'no user_email, no address');
});

t.test('azure: an address counts verified without xms_edov, or with xms_edov true, "1" or "true"', async (t) => {
  const verified = (extra: Record<string, unknown>) =>
    azure.profile({ sub: 'az', email: 'a@contoso.example', ...extra }).emails[0]?.verified;
  t.equal(verified({}), true, 'no xms_edov: the optional claim is not configured');
  t.equal(verified({ xms_edov: null }), true);
  t.equal(verified({ xms_edov: true }), true);
  t.equal(verified({ xms_edov: '1' }), true);
  t.equal(verified({ xms_edov: 'true' }), true);
  t.equal(verified({ xms_edov: false }), false);
  t.equal(verified({ xms_edov: '0' }), false);
  t.equal(verified({ xms_edov: 'false' }), false);
  t.equal(verified({ xms_edov: 1 }), false, 'a number is none of the spellings');
  t.equal(verified({ xms_edov: false, email_verified: true }), false, 'email_verified is not consulted');
  const p = azure.profile({ sub: 'az', email: 'a@contoso.example' });
  t.equal(p.claims.email_verified, true);
  t.same(azure.profile({ sub: 'az' }).emails, [], 'no address, nothing verified');
});

/** A runtime whose discovery answers each issuer with a document naming it (or `names`) and keys under it. */
t.test("linkedin_oidc: identity_data holds the original's keys only, the locale among them", async (t) => {
  const claims = { iss: 'https://www.linkedin.com/oauth', sub: 'li-1', given_name: 'Lin', family_name: 'Ked', locale: 'en_US' };
  const profile = linkedinOidc.profile({
    ...claims,
    name: 'Lin Ked (token)',
    picture: 'https://media.licdn.example/lin.jpg',
    email: 'lin@example.com',
    email_verified: 'true',
  });
  t.strictSame(profile.claims, {
    iss: 'https://www.linkedin.com/oauth',
    sub: 'li-1',
    provider_id: 'li-1',
    name: 'Lin Ked',
    given_name: 'Lin',
    family_name: 'Ked',
    locale: 'en_US',
    picture: 'https://media.licdn.example/lin.jpg',
  });
  t.strictSame(profile.emails, [{ email: 'lin@example.com', verified: true, primary: true }], 'email_verified read as Go reads a boolean');
  t.notOk('locale' in linkedinOidc.profile({ ...claims, locale: '', email_verified: 'false' }).claims, 'an empty locale is left out');
});

t.test("google: identity_data holds the original's keys only (hd under custom_claims), from a token or from userinfo", async (t) => {
  const token = google.profile({
    iss: 'https://accounts.google.com',
    sub: 'g-1',
    azp: 'client',
    aud: 'client',
    at_hash: 'x',
    email: 'gina@corp.example',
    email_verified: true,
    name: 'Gina G',
    given_name: 'Gina',
    family_name: 'G',
    picture: 'https://lh3.example/g.png',
    hd: 'corp.example',
  });
  t.strictSame(token.claims, {
    iss: 'https://accounts.google.com',
    sub: 'g-1',
    provider_id: 'g-1',
    name: 'Gina G',
    full_name: 'Gina G',
    picture: 'https://lh3.example/g.png',
    avatar_url: 'https://lh3.example/g.png',
    custom_claims: { hd: 'corp.example' },
  });
  t.strictSame(token.emails, [{ email: 'gina@corp.example', verified: true, primary: true }]);
  // Google's legacy userinfo answer: id and verified_email, and no issuer (the original names the endpoint).
  const info = google.profile({ id: 'g-2', email: 'gus@example.com', verified_email: true, name: 'Gus' });
  t.match(info, { subject: 'g-2', emails: [{ email: 'gus@example.com', verified: true }] });
  t.equal(info.claims.iss, 'https://www.googleapis.com/userinfo/v2/me');
  t.notOk('custom_claims' in info.claims, 'no hd, no custom_claims');
});

t.test('azure: identity_data as the original lays it out: no top-level name, every other claim under custom_claims', async (t) => {
  const profile = azure.profile({
    iss: `https://login.microsoftonline.com/${GUID}/v2.0`,
    sub: 'az-sub',
    aud: 'client',
    iat: 1,
    nbf: 1,
    exp: 2,
    aio: 'x',
    rh: 'y',
    uti: 'z',
    ver: '2.0',
    nonce: 'n',
    name: 'Ada Lovelace',
    preferred_username: 'ada@contoso.example',
    email: 'ada@contoso.example',
    given_name: 'Ada',
    family_name: 'Lovelace',
    sid: 'session-1',
    auth_time: 1700000000,
    oid: 'object-1',
    tid: GUID,
  });
  t.strictSame(profile.claims, {
    iss: `https://login.microsoftonline.com/${GUID}/v2.0`,
    sub: 'az-sub',
    provider_id: 'az-sub',
    preferred_username: 'ada@contoso.example',
    full_name: 'Ada Lovelace',
    email: 'ada@contoso.example',
    email_verified: true,
    custom_claims: {
      email: 'ada@contoso.example',
      given_name: 'Ada',
      family_name: 'Lovelace',
      sid: 'session-1',
      auth_time: 1700000000,
      oid: 'object-1',
      tid: GUID,
    },
  });
});

const rt = (url: string, names?: string) =>
  ({
    config: { url },
    discover: (issuer: string) =>
      Promise.resolve({
        issuer: names ?? issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/keys`,
      }),
  }) as unknown as ProviderRuntime;
const token = (iss: string) => new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(iss).sign(new Uint8Array(32));

t.test('azure code flow: a tenant URL pins its issuer; any other URL takes any issuer, checked by its own discovered keys', async (t) => {
  const tenant = `https://login.microsoftonline.com/${GUID}/v2.0`;
  const v1 = `https://sts.windows.net/${GUID}/`;
  const ciam = `https://contoso.ciamlogin.com/${GUID}/v2.0`;
  const b2c = 'https://contoso.b2clogin.com/11111111-2222-3333-4444-555555555555/v2.0/';
  const custom = 'https://login.contoso.example/tenant/v2.0';
  for (const url of [
    '',
    'https://login.microsoftonline.com/common',
    'https://login.microsoftonline.com/organizations/',
    'https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin',
    'http://127.0.0.1:9/common',
  ]) {
    t.equal(pinnedAzureIssuer(rt(url)), null, `${url || 'no URL'}: nothing pinned`);
    for (const iss of [tenant, v1, ciam, b2c, custom]) {
      t.same(
        await azureTrust(rt(url), await token(iss), 'callback'),
        { issuer: [iss], jwksUri: `${iss}/keys` },
        `${url || 'no URL'} takes ${iss}`,
      );
    }
  }
  const pinned = rt(`https://login.microsoftonline.com/${GUID}`);
  t.same(await azureTrust(pinned, await token(tenant), 'callback'), {
    issuer: [tenant],
    jwksUri: `https://login.microsoftonline.com/${GUID}/discovery/v2.0/keys`,
  });
  for (const iss of [`https://login.microsoftonline.com/${'0'.repeat(36)}/v2.0`, b2c, v1]) {
    t.same((await azureTrust(pinned, await token(iss), 'callback')).issuer, [], `a pinned tenant refuses ${iss}`);
  }
  t.equal(pinnedAzureIssuer(rt(`https://contoso.ciamlogin.com/${GUID}/`)), ciam, 'an External ID tenant pins its own');
  t.same((await azureTrust(rt(`https://contoso.ciamlogin.com/${GUID}`), await token(tenant), 'callback')).issuer, []);
  t.same(await azureTrust(rt('http://127.0.0.1:9/common'), await token('http://127.0.0.1:9/common/v2.0'), 'callback'), {
    issuer: ['http://127.0.0.1:9/common/v2.0'],
    jwksUri: 'http://127.0.0.1:9/common/discovery/v2.0/keys',
  });
  await t.rejects(azureTrust(rt('', 'https://elsewhere.example'), await token(b2c), 'callback'), 'a document naming another issuer');
  t.same((await azureTrust(rt(''), 'not-a-jwt', 'callback')).issuer, []);
});

t.test('azure code flow: an Azure AD B2C issuer signs in, its token checked with the keys its discovery names', async (t) => {
  const b2c = await startOidcProvider({ clientId: CLIENT_ID, issuerPath: '/contoso.onmicrosoft.com/v2.0' });
  t.teardown(() => b2c.stop());
  const config = providerConfig({ url: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin' });
  const live = createProviderRuntime(config, { httpTimeoutSeconds: 5, oidcProviderCacheTtlSeconds: 0 });
  const tokens = (idToken: string) => ({ accessToken: 'at', refreshToken: '', idToken, response: {} });
  const idToken = await b2c.signIdToken({ sub: 'b2c-1', email: 'b2c@contoso.example', name: 'Bee' });
  const profile = await azure.fetchProfile(live, tokens(idToken), new URLSearchParams());
  t.equal(profile.subject, 'b2c-1');
  t.equal(profile.claims.iss, b2c.issuer);
  t.ok(b2c.hits.get('/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration'), "the issuer's own discovery document");
  const { privateKey } = await generateKeyPair('RS256');
  const forged = await new SignJWT({ sub: 'b2c-1' })
    .setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' })
    .setIssuer(b2c.issuer)
    .setAudience(CLIENT_ID)
    .setExpirationTime('5m')
    .sign(privateKey);
  await t.rejects(azure.fetchProfile(live, tokens(forged), new URLSearchParams()), 'a key the issuer does not publish');
});

t.test('azure id_token grant: any login.microsoftonline.com or sts.windows.net issuer, whatever tenant is configured', async (t) => {
  const other = `https://login.microsoftonline.com/${'0'.repeat(36)}/v2.0`;
  const v1 = `https://sts.windows.net/${GUID}/`;
  for (const url of [
    '',
    `https://login.microsoftonline.com/${GUID}`,
    `https://contoso.ciamlogin.com/${GUID}`,
    'https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin',
    'http://127.0.0.1:9',
  ]) {
    for (const iss of [other, v1]) {
      t.same(
        await azureTrust(rt(url), await token(iss), 'grant'),
        { issuer: [iss], jwksUri: `${iss}/keys` },
        `${url || 'no URL'} takes ${iss}`,
      );
    }
    for (const iss of [
      'https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin/v2.0',
      `https://contoso.ciamlogin.com/${GUID}/v2.0`,
      'https://login.microsoftonline.com.evil.example/x/v2.0',
      'https://evil.example/v2.0',
    ]) {
      t.same((await azureTrust(rt(url), await token(iss), 'grant')).issuer, [], `${url || 'no URL'} refuses ${iss}`);
    }
  }
});

t.test('apple: custom_claims hold only is_private_email (a boolean), auth_time and transfer_sub', async (t) => {
  const claims = {
    iss: 'https://appleid.apple.com',
    sub: '001234.abcd',
    aud: 'com.example.web',
    iat: 1700000000,
    exp: 1700003600,
    email: 'x@privaterelay.appleid.com',
    email_verified: 'true',
    is_private_email: 'true',
    auth_time: 1700000000,
    nonce_supported: true,
    real_user_status: 2,
    transfer_sub: 'transfer.001',
    c_hash: 'abc',
  };
  const profile = apple.profile(claims, new URLSearchParams({ user: JSON.stringify({ name: { firstName: 'Abe', lastName: 'Apple' } }) }));
  t.strictSame(profile.claims.custom_claims, { is_private_email: true, auth_time: 1700000000, transfer_sub: 'transfer.001' });
  t.match(profile.claims, {
    iss: 'https://appleid.apple.com',
    sub: '001234.abcd',
    provider_id: '001234.abcd',
    name: 'Abe Apple',
    full_name: 'Abe Apple',
  });
  t.same(profile.emails, [{ email: 'x@privaterelay.appleid.com', verified: true, primary: true }]);
  for (const key of ['real_user_status', 'nonce_supported', 'c_hash', 'aud', 'is_private_email'])
    t.notOk(key in profile.claims, `${key} is not kept`);

  t.strictSame(apple.profile({ ...claims, is_private_email: false, auth_time: undefined, transfer_sub: '' }).claims.custom_claims, {
    is_private_email: false,
  });
  const custom = apple.profile({ ...claims, is_private_email: 'False' }).claims.custom_claims as Record<string, unknown> | undefined;
  t.strictSame(custom?.is_private_email, false);
  for (const email_verified of [false, 'false', undefined]) {
    const unverified = apple.profile({ ...claims, email_verified });
    t.same(
      unverified.emails,
      [{ email: 'x@privaterelay.appleid.com', verified: true, primary: true }],
      `email_verified ${String(email_verified)}`,
    );
    t.equal(unverified.claims.email_verified, true);
  }
  const none = apple.profile({ sub: 's', real_user_status: 1 });
  t.notOk('custom_claims' in none.claims, 'nothing to keep: no custom_claims at all');
  // The original's IsPrivateEmail takes a boolean or a string strconv.ParseBool reads: anything else fails the token.
  t.throws(() => apple.profile({ sub: 's', is_private_email: 'maybe' }), /is_private_email/);
});

t.test("default scopes are the original's: google `email profile`, azure `openid`, keycloak `profile email`", async (t) => {
  t.same(google.defaultScopes, ['email', 'profile']);
  t.same(azure.defaultScopes, ['openid']);
  t.same(apple.defaultScopes, ['email', 'name']);
  t.same(keycloak.defaultScopes, ['profile', 'email']);
});

t.test('keycloak: the code flow reads userinfo only; an id_token of another issuer (or none that verifies) is no obstacle', async (t) => {
  const info = {
    sub: 'kc-7',
    name: 'Kay',
    email: 'kay@example.com',
    email_verified: 'true',
    preferred_username: 'kay',
    realm_access: { roles: ['admin'] },
  };
  const fake = await startProviderFake({ 'GET /realms/acme/protocol/openid-connect/userinfo': userEndpoint('kc-access', info) });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: `${fake.url}/realms/acme/` }));
  // Signed for a public host name the configured URL does not share, by a key nobody publishes here.
  const idToken = await new SignJWT({ sub: 'kc-7' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://sso.example.com/realms/acme')
    .sign(new Uint8Array(32));
  const profile = await keycloak.fetchProfile(
    rt,
    { accessToken: 'kc-access', refreshToken: '', idToken, response: {} },
    new URLSearchParams(),
  );
  t.equal(profile.subject, 'kc-7');
  t.same(
    profile.emails,
    [{ email: 'kay@example.com', verified: false, primary: true }],
    'only a JSON true verifies, as the original reads it',
  );
  t.strictSame(profile.claims, {
    iss: `${fake.url}/realms/acme`,
    sub: 'kc-7',
    name: 'Kay',
    email: 'kay@example.com',
    email_verified: false,
    custom_claims: { preferred_username: 'kay', realm_access: { roles: ['admin'] } },
    full_name: 'Kay',
    provider_id: 'kc-7',
  });
  t.equal(fake.requests.length, 1, 'no discovery, no key set: userinfo alone');
});

t.test('storableProfile: NULs and lone surrogates in claims and their keys become U+FFFD; a NUL in an identifier refuses', async (t) => {
  // Azure keeps its token's other claims under custom_claims with their names as sent, so a key can carry one too.
  const profile = azure.profile({ sub: 'az', email: 'a@contoso.example', name: 'N\u0000\udc00', 'x\u0000y': ['v\u0000'] });
  const stored = storableProfile(profile);
  t.equal(stored.claims.full_name, 'N\ufffd\ufffd');
  t.strictSame(stored.claims.custom_claims, { email: 'a@contoso.example', 'x\ufffdy': ['v\ufffd'] });
  t.equal(storableProfile(azure.profile({ sub: 'a\ud800z' })).subject, 'a\ufffdz', 'a lone surrogate, as the Go decoder reads it');
  t.throws(() => storableProfile(azure.profile({ sub: 'a\u0000z' })), UnstorableProfile);
  t.throws(() => storableProfile(azure.profile({ sub: 'az', email: 'a\u0000@contoso.example' })), UnstorableProfile);
  t.throws(() => storableProfile({ ...profile, claims: { ...profile.claims, phone: '+1\u0000' } }), UnstorableProfile);
});
