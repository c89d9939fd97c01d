// POST /token?grant_type=id_token for Snapchat, as the original takes it (provider=snapchat, or the issuer
// https://accounts.snapchat.com/accounts/oauth2/token): the keys from the issuer's own discovery document,
// the standard claims read, the address counted verified. A real oidc-provider instance whose issuer has
// Snapchat's path stands in for Snapchat (EXTERNAL_SNAPCHAT_URL moves the issuer to it).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startOidcProvider } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { startProviderFake, providerConfig } from './helpers/provider-fakes.js';
import { snapchat } from '../dist/server/providers/snapchat.js';
import { createProviderRuntime } from '../dist/server/providers/runtime.js';
import { ProviderError } from '../dist/server/providers/outbound.js';

const ISSUER_PATH = '/accounts/oauth2/token';
const snap = await startOidcProvider({ clientId: 'snap-client', issuerPath: ISSUER_PATH });
const api = await startTestService({
  ...providerEnv('snapchat', {
    clientId: 'snap-client,snap-ios',
    secret: snap.clientSecret,
    redirectUri: 'https://app.example.test/auth/v1/callback',
    url: snap.base,
  }),
});
t.teardown(async () => {
  await api.stop();
  await snap.stop();
});

const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });
const BAD = { error: 'invalid request', error_description: 'Bad ID token' };

t.test('provider=snapchat: a token signed with the discovered keys signs in; its address counts as verified', async (t) => {
  const token = await snap.signIdToken({
    sub: 'snap-sub-1',
    email: 'snap@snap.example',
    email_verified: false,
    name: 'Snap User',
    picture: 'https://sdk.bitmoji.example/1.png',
    snap_only: 'kept out',
  });
  const res = await grant({ provider: 'snapchat', id_token: token });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user.email, 'snap@snap.example');
  t.ok(res.body.user.email_confirmed_at, 'the original counts it verified whatever the token says');
  t.match(res.body.user.identities, [
    {
      provider: 'snapchat',
      id: 'snap-sub-1',
      identity_data: {
        iss: snap.issuer,
        sub: 'snap-sub-1',
        name: 'Snap User',
        picture: 'https://sdk.bitmoji.example/1.png',
        email_verified: true,
      },
    },
  ]);
  t.notOk('custom_claims' in res.body.user.identities[0].identity_data, 'the standard claims only');
  t.ok(snap.hits.get(`${ISSUER_PATH}/.well-known/openid-configuration`), 'the discovery document under the issuer');

  const byIssuer = await grant({
    client_id: 'snap-ios',
    issuer: snap.issuer,
    id_token: await snap.signIdToken({ sub: 'snap-sub-1' }, { audience: 'snap-ios' }),
  });
  t.equal(byIssuer.status, 200, `found by its issuer: ${byIssuer.text}`);
  t.equal(byIssuer.body.user.id, res.body.user.id);
});

t.test('snapchat: another issuer, another audience or an expired token is refused', async (t) => {
  const claims = { sub: 'snap-bad', email: 'bad@snap.example' };
  const wrongIss = await snap.signIdToken(claims, { issuer: 'https://accounts.snapchat.com/accounts/oauth2/token' });
  t.same((await grant({ provider: 'snapchat', id_token: wrongIss })).body, BAD, 'the configured issuer only');
  const aud = await grant({ provider: 'snapchat', id_token: await snap.signIdToken(claims, { audience: 'other-app' }) });
  t.same(aud.body, { error: 'invalid request', error_description: 'Unacceptable audience in id_token: [other-app]' });
  const expired = await snap.signIdToken(claims, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
  t.same((await grant({ provider: 'snapchat', id_token: expired })).body, BAD);
  t.equal((await api.db.query(`select count(*)::int as n from identities where provider_id = 'snap-bad'`)).rows[0].n, 0);
});

t.test('snapchat: a discovery document naming another issuer is not the issuer’s, so no key is taken from it', async (t) => {
  const fake = await startProviderFake({
    [`GET ${ISSUER_PATH}/.well-known/openid-configuration`]: () => ({
      json: {
        issuer: 'https://elsewhere.example',
        authorization_endpoint: 'https://elsewhere.example/auth',
        token_endpoint: 'https://elsewhere.example/token',
        jwks_uri: 'https://elsewhere.example/jwks',
      },
    }),
  });
  t.teardown(fake.close);
  const rt = createProviderRuntime(providerConfig({ url: fake.url }), { httpTimeoutSeconds: 5, oidcProviderCacheTtlSeconds: 0 });
  await t.rejects(snapchat.verify(rt, 'eyJ.x.y'), ProviderError);
  t.equal(fake.received('GET /jwks').length, 0);
});
