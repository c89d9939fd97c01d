// How an external provider's claims are read, against real oidc-provider instances, where the original
// reads them into Go structs: Google's verification flags are booleans there (a string fails the sign-in,
// at /callback from an id_token or from userinfo), a claim's name is matched ignoring case (`EMAIL` is the
// email), and the reader follows the token's issuer, so a custom provider whose issuer is Google's has its
// tokens read as Google's. Also the manual link whose user is deleted before the callback.
import http from 'node:http';
import type net from 'node:net';
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { startOidcProvider, REDIRECT_URI, type Account } from './helpers/oidc-provider.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';
import { confirmedUser } from './helpers/users.js';
import { mapClaims, readClaims } from '../dist/server/custom-providers/claims.js';

const GOOGLE_ISSUER = 'https://accounts.google.com';
const google = await startOidcProvider({ clientId: 'g-web' });
// The custom provider's own stand-in: its tokens are re-signed as Google's below.
const gee = await startOidcProvider({ clientId: 'gee-client' });

// gee's discovery document, naming Google's issuer: what a custom provider saved with issuer
// https://accounts.google.com would hold, its endpoints and keys local.
const geeDoc = { ...((await (await fetch(`${gee.base}/.well-known/openid-configuration`)).json()) as object), issuer: GOOGLE_ISSUER };
const docServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(geeDoc)));
await new Promise<void>((resolve) => docServer.listen(0, '127.0.0.1', resolve));
const docUrl = `http://127.0.0.1:${(docServer.address() as net.AddressInfo).port}/.well-known/openid-configuration`;

const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-web', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
});
t.teardown(async () => {
  await api.stop();
  await Promise.all([google.stop(), gee.stop(), new Promise((resolve) => docServer.close(resolve))]);
});

const admin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${await adminToken()}` } });
const created = await admin.customProviders.createProvider({
  provider_type: 'oidc',
  identifier: 'custom:gee',
  name: 'Gee',
  client_id: gee.clientId,
  client_secret: gee.clientSecret,
  issuer: GOOGLE_ISSUER,
  discovery_url: docUrl,
  scopes: ['email', 'profile'],
});
if (created.error) throw created.error;
// A custom provider of an issuer without a reader of its own (the Google stand-in's local one): the standard claims.
const createdStd = await admin.customProviders.createProvider({
  provider_type: 'oidc',
  identifier: 'custom:std',
  name: 'Std',
  client_id: 'std-client',
  client_secret: 'std-secret',
  issuer: google.issuer,
  scopes: ['email'],
});
if (createdStd.error) throw createdStd.error;

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Date.now()}`;

/**
 * A Google sign-in through /callback whose token answer carries `idToken` (claims signed by the stand-in,
 * with the sub given) in place of the provider's own, or no id_token at all (null): then the profile is
 * read from userinfo, the account's claims.
 */
async function googleCallback(account: Account, idToken: Record<string, unknown> | null) {
  google.accounts.set(account.sub, account);
  google.rewriteTokenAnswer = async (answer) => {
    const { id_token: _dropped, ...rest } = answer;
    return idToken ? { ...rest, id_token: await google.signIdToken({ sub: account.sub, ...idToken }) } : rest;
  };
  try {
    const url = await authorizeUrl(api, 'provider=google');
    return await callback(api, await google.signIn(url.href, account.sub));
  } finally {
    google.rewriteTokenAnswer = undefined;
  }
}

const userOf = async (location: URL) => (await api.request('GET', '/user', { token: fragmentOf(location).access_token })).body;
const profileFailed = {
  error: 'server_error',
  error_code: 'unexpected_failure',
  error_description: 'Error getting user profile from external provider',
};

t.test('google /callback: email_verified true verifies the address; the strings "true" and "false" fail the sign-in', async (t) => {
  const sub = unique('g');
  const verified = await googleCallback({ sub }, { email: `${sub}@example.com`, email_verified: true });
  const user = await userOf(verified.location);
  t.equal(user.email, `${sub}@example.com`);
  t.ok(user.email_confirmed_at, 'a verified address confirms the account');
  t.equal(user.identities[0].identity_data.email_verified, true);

  for (const flag of ['true', 'false']) {
    const s = unique('g');
    const { status, location } = await googleCallback({ sub: s }, { email: `${s}@example.com`, email_verified: flag });
    t.equal(status, 302);
    t.match(queryOf(location), profileFailed, `email_verified ${JSON.stringify(flag)}: the original's reader cannot decode it`);
    t.notOk(fragmentOf(location).access_token);
    const users = await api.db.query('select 1 from users where email = $1', [`${s}@example.com`]);
    t.equal(users.rowCount, 0, 'no account is made');
  }
  const legacy = unique('g');
  const failed = await googleCallback({ sub: legacy }, { email: `${legacy}@example.com`, verified_email: 'true' });
  t.match(queryOf(failed.location), profileFailed, 'verified_email "true" fails alike');
});

t.test(
  'google /callback: email_verified false or absent leaves the address unverified (no session, nothing refused as unreadable)',
  async (t) => {
    for (const flags of [{ email_verified: false }, {}, { email_verified: null }]) {
      const sub = unique('g');
      const { location } = await googleCallback({ sub }, { email: `${sub}@example.com`, ...flags });
      t.not(queryOf(location).error_code, 'unexpected_failure', JSON.stringify(flags));
      t.notOk(fragmentOf(location).access_token, 'an unverified address is not signed in');
      const { rows } = await api.db.query('select identity_data from identities where provider = $1 and provider_id = $2', ['google', sub]);
      t.equal(rows[0]?.identity_data.email_verified, false, JSON.stringify(flags));
    }
  },
);

t.test(
  'google /callback from userinfo (no id_token): email_verified "true" fails the sign-in as the original\'s reader fails',
  async (t) => {
    const sub = unique('g');
    const { location } = await googleCallback({ sub, email: `${sub}@example.com`, email_verified: 'true' as unknown as boolean }, null);
    t.match(queryOf(location), profileFailed);
    const ok = unique('g');
    const good = await googleCallback({ sub: ok, email: `${ok}@example.com`, email_verified: true }, null);
    t.equal((await userOf(good.location)).email, `${ok}@example.com`, 'a boolean reads as before');
  },
);

t.test('google /callback: claim names in any case fill the fields, as Go decodes a struct', async (t) => {
  const sub = unique('g');
  // The account itself has no address, so userinfo cannot supply one: only the token's EMAIL does.
  const { location } = await googleCallback({ sub }, { EMAIL: `${sub}@Example.com`, Email_Verified: true, NAME: 'Upper Case' });
  const user = await userOf(location);
  t.equal(user.email, `${sub}@example.com`);
  t.ok(user.email_confirmed_at, 'Email_Verified verified it');
  t.equal(user.identities[0].identity_data.name, 'Upper Case');

  // With an address at userinfo as well, the token's EMAIL is still the one: the original asks userinfo only without an id_token.
  const both = unique('g');
  const fromToken = await googleCallback(
    { sub: both, email: `${both}-userinfo@example.com`, email_verified: true },
    { EMAIL: `${both}@example.com`, EMAIL_VERIFIED: true },
  );
  t.equal((await userOf(fromToken.location)).email, `${both}@example.com`);

  const mistyped = unique('g');
  const failed = await googleCallback({ sub: mistyped }, { email: `${mistyped}@example.com`, EMAIL_VERIFIED: 'true' });
  t.match(queryOf(failed.location), profileFailed, 'a misfit under another case fails as well');
});

t.test('id_token grant: claim names in any case, for Google and for the standard claims of a custom provider', async (t) => {
  const sub = unique('g');
  const token = await google.signIdToken({ sub, Email: `${sub}@example.com`, EMAIL_VERIFIED: true });
  const res = await api.request('POST', '/token?grant_type=id_token', { body: { provider: 'google', id_token: token } });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user.email, `${sub}@example.com`);

  const bad = await google.signIdToken({ sub: unique('g'), email: 'x@example.com', Email_Verified: 'true' });
  const refused = await api.request('POST', '/token?grant_type=id_token', { body: { provider: 'google', id_token: bad } });
  t.equal(refused.status, 400);
  t.same(refused.body, { error: 'invalid request', error_description: 'Bad ID token' });

  const std = unique('std');
  const stdToken = await google.signIdToken(
    { sub: std, EMAIL: `${std}@example.com`, Email_Verified: true, Given_Name: 'Std' },
    { audience: 'std-client' },
  );
  const signedIn = await api.request('POST', '/token?grant_type=id_token', { body: { provider: 'custom:std', id_token: stdToken } });
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.user.email, `${std}@example.com`);
  t.ok(signedIn.body.user.email_confirmed_at, 'Email_Verified verified it');
  t.equal(signedIn.body.user.identities[0].identity_data.given_name, 'Std');
});

t.test("a custom provider with Google's issuer: its tokens are read as Google's, at the id_token grant", async (t) => {
  const sub = unique('gee');
  const token = await gee.signIdToken(
    { sub, email: `${sub}@corp.example`, verified_email: true, hd: 'corp.example', given_name: 'Gee' },
    { issuer: GOOGLE_ISSUER },
  );
  const res = await api.request('POST', '/token?grant_type=id_token', { body: { provider: 'custom:gee', id_token: token } });
  t.equal(res.status, 200, res.text);
  t.ok(res.body.user.email_confirmed_at, "verified_email, Google's legacy flag, verifies the address");
  const data = res.body.user.identities[0].identity_data;
  t.same(data.custom_claims, { hd: 'corp.example' }, "hd under custom_claims, as Google's reader keeps it");
  t.notOk('given_name' in data, "Google's reader keeps no given_name");
  t.equal(res.body.user.identities[0].provider, 'custom:gee');
});

t.test("a custom provider with Google's issuer: at /callback too, and a string email_verified fails there", async (t) => {
  const signInWith = async (claims: Record<string, unknown>) => {
    const sub = unique('gee');
    gee.accounts.set(sub, { sub });
    gee.rewriteTokenAnswer = async (answer) => ({
      ...answer,
      id_token: await gee.signIdToken({ sub, email: `${sub}@corp.example`, ...claims }, { issuer: GOOGLE_ISSUER }),
    });
    try {
      const url = await authorizeUrl(api, 'provider=custom:gee');
      return { sub, ...(await callback(api, await gee.signIn(url.href, sub))) };
    } finally {
      gee.rewriteTokenAnswer = undefined;
    }
  };
  const { sub, location } = await signInWith({ verified_email: true, hd: 'corp.example', given_name: 'Gee' });
  const user = await userOf(location);
  t.equal(user.email, `${sub}@corp.example`);
  t.ok(user.email_confirmed_at);
  t.same(user.identities[0].identity_data.custom_claims, { hd: 'corp.example' });
  t.notOk('given_name' in user.identities[0].identity_data);

  const failed = await signInWith({ email_verified: 'true' });
  t.match(queryOf(failed.location), profileFailed);
});

t.test('a manual link whose user is deleted before the callback: bad_oauth_state to SITE_URL, nothing linked', async (t) => {
  const { access_token: token, user } = await confirmedUser(api);
  const link = await api.request('GET', '/user/identities/authorize?provider=google&skip_http_redirect=true', { token });
  t.equal(link.status, 200, link.text);
  const sub = unique('g');
  google.accounts.set(sub, { sub, email: `${sub}@example.com`, email_verified: true });
  const params = await google.signIn(link.body.url, sub);
  const deleted = await api.request('DELETE', `/admin/users/${user.id}`, { token: await adminToken() });
  t.equal(deleted.status, 200, deleted.text);
  const { status, location } = await callback(api, params);
  t.equal(status, 303);
  t.match(queryOf(location), {
    error: 'invalid_request',
    error_code: 'bad_oauth_state',
    error_description: 'OAuth state not found or expired',
  });
  const identities = await api.db.query('select 1 from identities where provider = $1 and provider_id = $2', ['google', sub]);
  t.equal(identities.rowCount, 0);
});

t.test(
  "a custom provider's claims: names in any case, the last spelling in the token, or in byte order for a userinfo answer",
  async (t) => {
    t.same(readClaims({ sub: 's', EMAIL: 'a@example.com', Email_Verified: true }), {
      sub: 's',
      email: 'a@example.com',
      email_verified: true,
    });
    t.equal(readClaims({ email: 'a@example.com', EMAIL: 'b@example.com' }).email, 'b@example.com', "an id_token's keys in its own order");
    t.equal(
      readClaims({ email: 'a@example.com', EMAIL: 'b@example.com' }, true).email,
      'a@example.com',
      'a userinfo answer, written out by Go as a sorted map: `email` comes after `EMAIL`',
    );
    t.equal(readClaims({ email: 'a@example.com', EMAIL: null }).email, 'a@example.com', 'null leaves the claim as it was');
    t.equal(readClaims({ ſub: 'long-s' }).sub, 'long-s', 'the long s folds to s, as Go folds it');
    t.throws(() => readClaims({ sub: 's', EMAIL_VERIFIED: 'true' }), 'a misfit under another case is refused');
    // attribute_mapping's result is read as a map Go wrote out: a target spelled EMAIL fills email when there is none.
    t.equal(mapClaims({ sub: 's', nickname: 'n@example.com' }, { EMAIL: 'nickname' }).email, 'n@example.com');
  },
);
