// How an id_token's claims are read where the original reads them with go-oidc's verifier and a provider's
// Go struct, against real oidc-provider instances: the verifier's own claims (iss, sub, aud, exp, nbf...)
// match by name ignoring case and fail the token when mistyped, before `sub` or `aud` are looked at; a
// custom provider with Apple's or Azure's issuer has its token read by that provider's struct at /callback
// (a mistyped claim fails the sign-in); LinkedIn's email_verified must be a string strconv.ParseBool takes.
import http from 'node:http';
import type net from 'node:net';
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { startOidcProvider, REDIRECT_URI, type OidcServer } from './helpers/oidc-provider.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';

const APPLE_ISSUER = 'https://appleid.apple.com';
const AZURE_ISSUER = 'https://login.microsoftonline.com/0c5a7e1e-1d3c-4a8e-9c55-3f1b2f3c4d5e/v2.0';
const LINKEDIN_ISSUER = 'https://www.linkedin.com/oauth';

const google = await startOidcProvider({ clientId: 'g-web' });
const linkedin = await startOidcProvider({ clientId: 'li-web' });
// The custom providers' stand-in: its tokens are signed naming Apple's, Azure's or LinkedIn's issuer.
const ext = await startOidcProvider({ clientId: 'ext-client' });

// Discovery documents naming those issuers, with the stand-in's endpoints and keys: what a custom provider
// saved with such an issuer holds. /<name>/.well-known/openid-configuration names ISSUERS[name].
const ISSUERS: Record<string, string> = { apple: APPLE_ISSUER, azure: AZURE_ISSUER, linkedin: LINKEDIN_ISSUER };
const extDoc = (await (await fetch(`${ext.base}/.well-known/openid-configuration`)).json()) as object;
const docServer = http.createServer((req, res) => {
  const issuer = ISSUERS[(req.url ?? '').split('/')[1]];
  if (!issuer) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...extDoc, issuer }));
});
await new Promise<void>((resolve) => docServer.listen(0, '127.0.0.1', resolve));
const docBase = `http://127.0.0.1:${(docServer.address() as net.AddressInfo).port}`;

const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-web', secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  ...providerEnv('linkedin_oidc', { clientId: 'li-web', secret: linkedin.clientSecret, redirectUri: REDIRECT_URI, url: linkedin.issuer }),
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
});
t.teardown(async () => {
  await api.stop();
  await Promise.all([google.stop(), linkedin.stop(), ext.stop(), new Promise((resolve) => docServer.close(resolve))]);
});

const admin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${await adminToken()}` } });
for (const name of Object.keys(ISSUERS)) {
  const created = await admin.customProviders.createProvider({
    provider_type: 'oidc',
    identifier: `custom:${name}`,
    name,
    client_id: ext.clientId,
    client_secret: ext.clientSecret,
    issuer: ISSUERS[name],
    discovery_url: `${docBase}/${name}/.well-known/openid-configuration`,
    scopes: ['email', 'profile'],
  });
  if (created.error) throw created.error;
}

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Date.now()}`;
const inFiveMinutes = () => Math.floor(Date.now() / 1000) + 300;

const grant = (provider: string, idToken: string) =>
  api.request('POST', '/token?grant_type=id_token', { body: { provider, id_token: idToken } });
const badIdToken = { error: 'invalid request', error_description: 'Bad ID token' };
const profileFailed = {
  error: 'server_error',
  error_code: 'unexpected_failure',
  error_description: 'Error getting user profile from external provider',
};

/** A sign-in through /callback whose token answer carries an id_token of `claims` signed by `idp` (naming `issuer`, the idp's own by default). */
async function callbackWith(idp: OidcServer, provider: string, claims: Record<string, unknown>, issuer?: string) {
  const sub = typeof claims.sub === 'string' ? claims.sub : unique('cb');
  idp.accounts.set(sub, { sub });
  idp.rewriteTokenAnswer = async (answer) => ({ ...answer, id_token: await idp.signIdToken({ sub, ...claims }, { issuer }) });
  try {
    const url = await authorizeUrl(api, `provider=${provider}`);
    return { sub, ...(await callback(api, await idp.signIn(url.href, sub))) };
  } finally {
    idp.rewriteTokenAnswer = undefined;
  }
}

const userOf = async (location: URL) => (await api.request('GET', '/user', { token: fragmentOf(location).access_token })).body;

t.test("id_token grant: the verifier's claims are matched ignoring case, as go-oidc decodes them", async (t) => {
  const sub = unique('SUB');
  const onlyUpper = await google.signIdToken({ SUB: sub, email: `${sub}@example.com`, email_verified: true });
  const res = await grant('google', onlyUpper);
  t.equal(res.status, 200, `SUB alone is the subject: ${res.text}`);
  t.equal(res.body.user?.identities?.[0]?.id, sub);

  const iss = unique('ISS');
  const issUpper = await google.signIdToken(
    { ISS: google.issuer, sub: iss, email: `${iss}@example.com`, email_verified: true },
    { issuer: null },
  );
  const byIss = await grant('google', issUpper);
  t.equal(byIss.status, 200, `ISS alone is the issuer checked: ${byIss.text}`);

  const exp = unique('Exp');
  const expMixed = await google.signIdToken(
    { sub: exp, Exp: inFiveMinutes(), email: `${exp}@example.com`, email_verified: true },
    { expiresIn: null },
  );
  const byExp = await grant('google', expMixed);
  t.equal(byExp.status, 200, `Exp alone is the expiry: ${byExp.text}`);

  const text = unique('exp-text');
  const expText = await google.signIdToken(
    { sub: text, exp: String(inFiveMinutes()), email: `${text}@example.com`, email_verified: true },
    { expiresIn: null },
  );
  const byText = await grant('google', expText);
  t.equal(byText.status, 200, `an exp written as a string of a number is read as go-oidc's json.Number reads it: ${byText.text}`);

  const wrongIssuer = await google.signIdToken({ ISS: 'https://elsewhere.example', sub: unique('g') }, { issuer: null });
  t.same((await grant('google', wrongIssuer)).body, badIdToken, 'ISS naming another issuer is refused as iss would be');
  const past = await google.signIdToken({ sub: unique('g'), EXP: Math.floor(Date.now() / 1000) - 60 }, { expiresIn: null });
  t.same((await grant('google', past)).body, badIdToken, 'an EXP in the past is expired');
});

t.test('id_token grant: a verifier claim of another type is a bad token, before sub or aud are looked at', async (t) => {
  const cases: [string, Record<string, unknown>, { audience?: null; expiresIn?: null }][] = [
    ['aud a number', { sub: unique('g'), aud: 42 }, { audience: null }],
    ['aud a number, no sub', { aud: 42 }, { audience: null }],
    ['AUD a list holding a number, no sub', { AUD: ['g-web', 7] }, { audience: null }],
    ['sub a number', { sub: 12345 }, {}],
    ['SUB a number, no sub', { SUB: 12345 }, {}],
    ['exp a boolean, no sub', { exp: true }, { expiresIn: null }],
    ['exp null', { sub: unique('g'), exp: null }, { expiresIn: null }],
    ['exp a string of no number', { sub: unique('g'), exp: 'soon' }, { expiresIn: null }],
    // Before the iat the signer adds: Go assigns both in turn, and fails at the null.
    ['IAT null', { sub: unique('g'), IAT: null }, {}],
    ['Nbf a string of no number', { sub: unique('g'), Nbf: 'now' }, {}],
    ['nonce a number', { sub: unique('g'), nonce: 1 }, {}],
    ['At_Hash an object', { sub: unique('g'), At_Hash: {} }, {}],
  ];
  for (const [what, claims, options] of cases) {
    const res = await grant('google', await google.signIdToken({ email: 'x@example.com', ...claims }, options));
    t.equal(res.status, 400, what);
    t.same(res.body, badIdToken, what);
  }
  const later = await google.signIdToken({ sub: unique('g'), NBF: Math.floor(Date.now() / 1000) + 3600 });
  t.same((await grant('google', later)).body, badIdToken, 'an NBF an hour ahead is not valid yet');
  const cleared = unique('g');
  const nbfNull = await google.signIdToken({ sub: cleared, nbf: null, email: `${cleared}@example.com`, email_verified: true });
  t.equal((await grant('google', nbfNull)).status, 200, 'a null nbf is none (a pointer field)');
});

t.test('google /callback: a token naming its subject SUB signs in as that subject', async (t) => {
  const sub = unique('SUB');
  google.accounts.set(sub, { sub });
  google.rewriteTokenAnswer = async (answer) => ({
    ...answer,
    id_token: await google.signIdToken({ SUB: sub, email: `${sub}@example.com`, email_verified: true }, { audience: 'g-web' }),
  });
  try {
    const url = await authorizeUrl(api, 'provider=google');
    const { location } = await callback(api, await google.signIn(url.href, sub));
    const user = await userOf(location);
    t.equal(user.identities?.[0]?.id, sub, JSON.stringify(queryOf(location)));
  } finally {
    google.rewriteTokenAnswer = undefined;
  }
});

t.test("custom provider with Apple's issuer, /callback: the token is read with Apple's struct", async (t) => {
  const ok = await callbackWith(
    ext,
    'custom:apple',
    { email: `${unique('a')}@privaterelay.example`, is_private_email: 'true' },
    APPLE_ISSUER,
  );
  const user = await userOf(ok.location);
  t.ok(user.email_confirmed_at, JSON.stringify(queryOf(ok.location)));
  t.same(user.identities[0].identity_data.custom_claims, { is_private_email: true });

  for (const claims of [{ is_private_email: 'maybe' }, { auth_time: '1700000000' }, { email: 42 }, { transfer_sub: false }]) {
    const { location } = await callbackWith(ext, 'custom:apple', { email: `${unique('a')}@example.com`, ...claims }, APPLE_ISSUER);
    t.match(queryOf(location), profileFailed, JSON.stringify(claims));
    t.notOk(fragmentOf(location).access_token);
  }
});

t.test("custom provider with Azure's issuer, /callback: the token is read with Azure's struct", async (t) => {
  const ok = await callbackWith(ext, 'custom:azure', { email: `${unique('z')}@example.com`, name: 'Zed', Tid: 'tenant' }, AZURE_ISSUER);
  const user = await userOf(ok.location);
  t.equal(user.identities[0].identity_data.full_name, 'Zed', JSON.stringify(queryOf(ok.location)));
  t.same(user.identities[0].identity_data.custom_claims.Tid, 'tenant', 'custom_claims keep the token’s own spelling');

  for (const claims of [{ name: 42 }, { preferred_username: true }, { EMAIL: ['a@example.com'] }, { jti: 1 }, { Iat: 'now' }]) {
    const { location } = await callbackWith(ext, 'custom:azure', { email: `${unique('z')}@example.com`, ...claims }, AZURE_ISSUER);
    t.match(queryOf(location), profileFailed, JSON.stringify(claims));
    t.notOk(fragmentOf(location).access_token);
  }
});

t.test('linkedin_oidc /callback: email_verified is parsed as strconv.ParseBool parses it; absent, empty or a boolean fails', async (t) => {
  const good = await callbackWith(linkedin, 'linkedin_oidc', {
    email: `${unique('li')}@example.com`,
    email_verified: 'true',
    given_name: 'Li',
  });
  const user = await userOf(good.location);
  t.ok(user.email_confirmed_at, JSON.stringify(queryOf(good.location)));
  t.equal(user.identities[0].identity_data.name, 'Li');

  const T = await callbackWith(linkedin, 'linkedin_oidc', { email: `${unique('li')}@example.com`, Email_Verified: 'T' });
  t.ok((await userOf(T.location)).email_confirmed_at, '"T" under another case is true');

  const unverified = await callbackWith(linkedin, 'linkedin_oidc', { email: `${unique('li')}@example.com`, email_verified: '0' });
  t.not(queryOf(unverified.location).error_code, 'unexpected_failure', '"0" is an unverified address, not a failure');
  t.notOk(fragmentOf(unverified.location).access_token);

  for (const claims of [{}, { email_verified: '' }, { email_verified: null }, { email_verified: 'yes' }, { email_verified: true }]) {
    const { location } = await callbackWith(linkedin, 'linkedin_oidc', { email: `${unique('li')}@example.com`, ...claims });
    t.match(queryOf(location), profileFailed, JSON.stringify(claims));
    t.notOk(fragmentOf(location).access_token);
  }
  const noAddress = await callbackWith(linkedin, 'linkedin_oidc', {});
  t.match(queryOf(noAddress.location), profileFailed, 'without an address too: the original parses it first');
});

t.test("id_token grant, custom provider with LinkedIn's issuer: email_verified must parse", async (t) => {
  const sign = (claims: Record<string, unknown>) =>
    ext.signIdToken({ sub: unique('lnk'), email: `${unique('lnk')}@example.com`, ...claims }, { issuer: LINKEDIN_ISSUER });
  const ok = await grant('custom:linkedin', await sign({ email_verified: 'true' }));
  t.equal(ok.status, 200, ok.text);
  t.ok(ok.body.user.email_confirmed_at);
  for (const claims of [{}, { email_verified: '' }, { email_verified: 'yes' }, { email_verified: true }]) {
    const res = await grant('custom:linkedin', await sign(claims));
    t.equal(res.status, 400, JSON.stringify(claims));
    t.same(res.body, badIdToken, JSON.stringify(claims));
  }
});
