// The plain (non-OIDC) providers through the service's whole flow: GET /authorize → the provider's fake
// (its consent page answering with the redirect a browser would follow) → GET /callback → a session for the
// right identity. Each fake speaks its provider's wire format and refuses what the provider refuses
// (test/helpers/provider-fakes.ts): Twitter verifies every OAuth 1.0a signature itself, X checks the PKCE
// verifier against the challenge the flow sent, WorkOS receives the forwarded `provider`, GitLab lives at
// EXTERNAL_GITLAB_URL.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { authorizeUrl, callback, fragmentOf, providerEnv } from './helpers/oauth.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  REDIRECT_URI,
  checkCodeGrant,
  startProviderFake,
  tokenEndpoint,
  userEndpoint,
  type FakeAnswer,
  type FakeRequest,
} from './helpers/provider-fakes.js';
import { startTwitterFake } from './helpers/twitter-fake.js';

/**
 * The provider's consent page, the user approving at once: checks what every provider checks of the
 * authorization request, then 302 to redirect_uri with a code and the state.
 */
function consentPage(code: string, seen: { query?: URLSearchParams } = {}) {
  return (req: FakeRequest): FakeAnswer => {
    seen.query = req.query;
    if (req.query.get('client_id') !== CLIENT_ID) return { status: 400, json: { error: 'invalid_client' } };
    if (req.query.get('redirect_uri') !== REDIRECT_URI) return { status: 400, json: { error: 'redirect_uri mismatch' } };
    if (req.query.get('response_type') !== 'code') return { status: 400, json: { error: 'unsupported_response_type' } };
    const back = new URL(REDIRECT_URI);
    back.searchParams.set('code', code);
    back.searchParams.set('state', req.query.get('state') ?? '');
    return { status: 302, headers: { Location: back.href } };
  };
}

/** Plays the browser at the provider: the parameters the provider's redirect brings back to the callback. */
async function approve(providerUrl: URL): Promise<URLSearchParams> {
  const res = await fetch(providerUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`the provider answered ${res.status}: ${await res.text()}`);
  const back = new URL(location);
  if (back.origin + back.pathname !== REDIRECT_URI) throw new Error(`the provider redirected elsewhere: ${location}`);
  return back.searchParams;
}

// --- discord
const discord = await startProviderFake({
  'GET /api/oauth2/authorize': consentPage('discord-code'),
  'POST /api/oauth2/token': tokenEndpoint(
    { code: 'discord-code', credentials: 'basic' },
    { access_token: 'dc-access', token_type: 'Bearer', expires_in: 604800, refresh_token: 'dc-refresh', scope: 'identify email' },
  ),
  'GET /api/users/@me': userEndpoint('dc-access', {
    id: '80351110224678912',
    username: 'nelly',
    discriminator: '1337',
    global_name: 'Nelly',
    avatar: '8342729096ea3675442027381ff50dfe',
    verified: true,
    email: 'nelly@discord.example',
  }),
});

// --- gitlab (a self-managed instance named by EXTERNAL_GITLAB_URL)
const gitlab = await startProviderFake({
  'GET /oauth/authorize': consentPage('gl-code'),
  'POST /oauth/token': tokenEndpoint(
    { code: 'gl-code', credentials: 'body' },
    { access_token: 'gl-access', token_type: 'Bearer', expires_in: 7200, refresh_token: 'gl-refresh', created_at: 1607635748 },
  ),
  'GET /api/v4/user': userEndpoint('gl-access', {
    id: 42,
    username: 'ada',
    name: 'Ada Lovelace',
    avatar_url: 'https://gitlab.example/uploads/avatar.png',
    email: 'ada@gitlab.example',
    confirmed_at: '2012-05-23T09:05:22Z',
  }),
  'GET /api/v4/user/emails': userEndpoint('gl-access', [{ id: 1, email: 'ada@gitlab.example', confirmed_at: '2012-05-23T09:05:22Z' }]),
});

// --- workos: the profile comes with the token answer; the consent page must have received `provider`
const workosConsent: { query?: URLSearchParams } = {};
const workos = await startProviderFake({
  'GET /sso/authorize': (req) => {
    if (!req.query.get('provider') && !req.query.get('connection') && !req.query.get('organization'))
      return { status: 422, json: { message: 'connection, organization or provider is required' } };
    return consentPage('wo-code', workosConsent)(req);
  },
  'POST /sso/token': tokenEndpoint(
    { code: 'wo-code', credentials: 'body' },
    {
      access_token: '01DMEK0J53CVMC32CK5SE0KZ8Q',
      profile: {
        object: 'profile',
        id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
        connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
        connection_type: 'GoogleOAuth',
        organization_id: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
        email: 'todd@workos.example',
        first_name: 'Todd',
        last_name: 'Rundgren',
      },
    },
  ),
});

// --- x: OAuth 2.0 with PKCE required; the token call must bring the verifier of the challenge sent
const xConsent: { query?: URLSearchParams } = {};
const x = await startProviderFake({
  'GET /i/oauth2/authorize': (req) => {
    if (req.query.get('code_challenge_method') !== 'S256' || !req.query.get('code_challenge'))
      return { status: 400, json: { error: 'invalid_request', error_description: 'PKCE is required' } };
    return consentPage('x-code', xConsent)(req);
  },
  'POST /2/oauth2/token': (req) =>
    checkCodeGrant(req, { code: 'x-code', credentials: 'basic', codeChallenge: xConsent.query?.get('code_challenge') ?? 'none' }) ?? {
      json: { token_type: 'bearer', expires_in: 7200, access_token: 'x-access', refresh_token: 'x-refresh', scope: 'users.read' },
    },
  'GET /2/users/me': userEndpoint('x-access', {
    data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers', confirmed_email: 'dev@x.example' },
  }),
});

// --- twitter: OAuth 1.0a, every request's HMAC-SHA1 signature verified with the secrets the fake issued
const twitterFake = await startTwitterFake((callbackUrl) => callbackUrl.startsWith(`${REDIRECT_URI}?state=`));
const twitter = twitterFake.fake;

const credentials = { clientId: `${CLIENT_ID},other-client-id`, secret: CLIENT_SECRET, redirectUri: REDIRECT_URI };
const api = await startTestService({
  ...providerEnv('discord', { ...credentials, url: discord.url }),
  ...providerEnv('gitlab', { ...credentials, url: `${gitlab.url}/` }),
  ...providerEnv('workos', { ...credentials, url: workos.url }),
  ...providerEnv('x', { ...credentials, url: x.url }),
  ...providerEnv('twitter', { ...credentials, url: twitter.url }),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(async () => {
  await api.stop();
  for (const fake of [discord, gitlab, workos, x, twitter]) await fake.close();
});

/** The round trip; returns the signed-in user (GET /user with the fragment's access token) and the fragment. */
async function signIn(provider: string, extraQuery = '') {
  const url = await authorizeUrl(api, `provider=${provider}&redirect_to=https://app.example.test/${provider}${extraQuery}`);
  const { status, location } = await callback(api, await approve(url));
  const fragment = fragmentOf(location);
  if (status !== 302 || !fragment.access_token) throw new Error(`${provider}: no session: ${location.href}`);
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  return { url, location, fragment, me: me.body };
}

t.test('discord: a session for the Discord identity, its verified address confirmed', async (t) => {
  const { location, fragment, me } = await signIn('discord');
  t.equal(location.origin + location.pathname, 'https://app.example.test/discord');
  t.equal(fragment.provider_token, 'dc-access');
  t.equal(fragment.provider_refresh_token, 'dc-refresh');
  t.equal(me.email, 'nelly@discord.example');
  t.ok(me.email_confirmed_at);
  t.match(me.identities, [
    { provider: 'discord', id: '80351110224678912', identity_data: { email: 'nelly@discord.example', email_verified: true } },
  ]);
  t.equal(me.identities[0].identity_data.phone_verified, false, 'phone_verified is always there, as the original writes it');
  t.equal(me.user_metadata.phone_verified, false);
  const again = await signIn('discord');
  t.equal(again.me.id, me.id, 'the second sign-in finds the same user through the identity');
});

t.test('gitlab at EXTERNAL_GITLAB_URL: the self-managed host runs consent, token and user API', async (t) => {
  const { url, me } = await signIn('gitlab');
  t.equal(url.origin, gitlab.url);
  t.equal(url.searchParams.get('scope'), 'read_user');
  t.equal(me.email, 'ada@gitlab.example');
  t.match(me.identities, [{ provider: 'gitlab', id: '42', identity_data: { email: 'ada@gitlab.example', email_verified: true } }]);
  t.equal(gitlab.received('POST /oauth/token').length, 1);
});

t.test('workos: workos_provider reaches WorkOS as provider, and the profile of the token answer signs in', async (t) => {
  const { me } = await signIn('workos', '&workos_provider=GoogleOAuth');
  t.equal(workosConsent.query?.get('provider'), 'GoogleOAuth');
  t.equal(workosConsent.query?.has('workos_provider'), false, 'not passed on under its own name');
  t.equal(me.email, 'todd@workos.example');
  t.match(me.identities, [{ provider: 'workos', id: 'prof_01DMC79VCBZ0NY2099737PSVF1' }]);
  t.equal(me.user_metadata.custom_claims.organization_id, 'org_01EHWNCE74X7JSDV0X3SZ3KJNY');
});

t.test('x: the flow sends an S256 challenge and its verifier at the token call', async (t) => {
  const { url, me, fragment } = await signIn('x');
  t.equal(url.searchParams.get('code_challenge_method'), 'S256');
  const tokenCall = x.received('POST /2/oauth2/token').at(-1)!;
  t.match(tokenCall.form.get('code_verifier'), /^[A-Za-z0-9_-]{43,128}$/);
  t.equal(fragment.provider_token, 'x-access');
  t.equal(me.email, 'dev@x.example');
  t.match(me.identities, [{ provider: 'x', id: '2244994945' }]);

  // a verifier that does not match is refused by X, and the flow reports the failed exchange
  const stolen = await authorizeUrl(api, 'provider=x');
  const params = await approve(stolen);
  xConsent.query = new URLSearchParams({ code_challenge: 'another-challenge' });
  const { location } = await callback(api, params);
  t.equal(location.searchParams.get('error_code'), 'unexpected_failure');
  t.match(location.searchParams.get('error_description'), /^Unable to exchange external code/);
});

t.test('twitter: request token at /authorize, its secret kept in flow state, signed access token and profile calls', async (t) => {
  const url = await authorizeUrl(api, 'provider=twitter&redirect_to=https://app.example.test/twitter');
  t.equal(url.origin + url.pathname, `${twitter.url}/oauth/authenticate`);
  const requestToken = url.searchParams.get('oauth_token')!;
  const stored = await api.db.query(`select oauth1_token_secret from flow_state where provider_type = 'twitter'`);
  t.same(stored.rows, [{ oauth1_token_secret: twitterFake.requestTokens.get(requestToken) }], 'the secret waits in flow state');

  const params = await approve(url);
  t.ok(params.get('state'), 'the state rides on the callback URL');
  t.equal(params.get('oauth_token'), requestToken);
  const { location } = await callback(api, params);
  const f = fragmentOf(location);
  t.ok(f.access_token, 'a session');
  t.equal(location.origin + location.pathname, 'https://app.example.test/twitter');
  t.equal(f.provider_token, '6253282-at');
  const me = (await api.request('GET', '/user', { token: f.access_token })).body;
  t.equal(me.email, 'api@twitter.example');
  t.match(me.identities, [{ provider: 'twitter', id: '6253282', identity_data: { user_name: 'TwitterAPI' } }]);
  t.same(twitterFake.refusals, [], 'every signature verified');
  t.equal((await api.db.query(`select count(*)::int as n from flow_state where provider_type = 'twitter'`)).rows[0].n, 0);
});
