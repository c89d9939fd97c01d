// Twitter's OAuth 1.0a and X's OAuth 2.0 with PKCE against local fakes. The Twitter fake verifies every
// HMAC-SHA1 signature itself (RFC 5849, computed independently of the oauth-1.0a library the module uses)
// with the consumer secret and the token secret it issued; the X fake checks the PKCE verifier against the
// challenge of the authorization request, as X does.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ProviderError } from '../dist/server/providers/outbound.js';
import { twitter } from '../dist/server/providers/twitter.js';
import { x } from '../dist/server/providers/x.js';
import {
  oauthHeaderParams,
  providerConfig,
  s256,
  startProviderFake,
  testRuntime,
  tokenEndpoint,
  userEndpoint,
} from './helpers/provider-fakes.js';
import { startTwitterFake, TWITTER_VERIFIER } from './helpers/twitter-fake.js';

const noForm = new URLSearchParams();
const CALLBACK = 'https://auth.example.test/auth/v1/callback?state=flow-state-id';

t.test('twitter: request token bound to the callback, access token for the verifier, signed profile call', async (t) => {
  const twitterFake = await startTwitterFake((callback) => callback === CALLBACK);
  const { fake } = twitterFake;
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));
  t.equal(twitter.protocol, 'oauth1');

  const step1 = await twitter.requestToken(rt, CALLBACK);
  t.match(step1, { token: /^rt-/, secret: /^rts-/ });
  t.equal(step1.authorizeUrl, `${fake.url}/oauth/authenticate?oauth_token=${step1.token}`);
  t.equal(oauthHeaderParams(fake.requests[0].headers)?.get('oauth_signature_method'), 'HMAC-SHA1');

  const tokens = await twitter.accessToken(rt, step1.token, step1.secret, TWITTER_VERIFIER);
  t.strictSame(tokens, {
    accessToken: '6253282-at',
    refreshToken: '',
    idToken: '',
    response: { oauth_token: '6253282-at', oauth_token_secret: 'ats-secret', user_id: '6253282', screen_name: 'TwitterAPI' },
    tokenSecret: 'ats-secret',
  });

  const iss = `${fake.url}/1.1/account/verify_credentials.json`;
  t.strictSame(await twitter.fetchProfile(rt, tokens), {
    subject: '6253282',
    emails: [{ email: 'api@twitter.example', verified: true, primary: true }],
    claims: {
      iss,
      sub: '6253282',
      name: 'Twitter API',
      picture: 'https://pbs.twimg.example/profile_images/942858479592554497/BbazLO9L_normal.jpg',
      preferred_username: 'TwitterAPI',
      user_name: 'TwitterAPI',
      full_name: 'Twitter API',
      avatar_url: 'https://pbs.twimg.example/profile_images/942858479592554497/BbazLO9L_normal.jpg',
      provider_id: '6253282',
    },
  });
  t.strictSame(twitterFake.refusals, [], 'every signature verified');
  const profileCall = fake.received('GET /1.1/account/verify_credentials.json')[0];
  t.strictSame(Object.fromEntries(profileCall.query), { include_entities: 'false', skip_status: 'true', include_email: 'true' });
});

t.test('twitter: a wrong consumer secret, a wrong verifier or an unconfirmed callback are refused', async (t) => {
  const twitterFake = await startTwitterFake((callback) => callback === CALLBACK);
  const { fake } = twitterFake;
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  await t.rejects(twitter.requestToken(testRuntime(providerConfig({ url: fake.url, secret: 'not-the-secret' })), CALLBACK), ProviderError);
  t.strictSame(twitterFake.refusals, ['signature does not match'], 'the fake checks the signature with the consumer secret');

  const step1 = await twitter.requestToken(rt, CALLBACK);
  await t.rejects(twitter.accessToken(rt, step1.token, step1.secret, 'guessed-verifier'), ProviderError);
  await t.rejects(twitter.accessToken(rt, step1.token, 'wrong-token-secret', TWITTER_VERIFIER), ProviderError);
  t.strictSame(twitterFake.refusals.slice(1), ['wrong oauth_verifier', 'signature does not match']);

  twitterFake.confirmCallback = false;
  await t.rejects(twitter.requestToken(rt, CALLBACK), { name: 'ProviderError', message: /callback/ });
});

t.test('x: PKCE towards X, Basic credentials, /2/users/me, confirmed_email verified', async (t) => {
  const verifier = randomBytes(32).toString('base64url');
  const fake = await startProviderFake({
    'POST /2/oauth2/token': tokenEndpoint(
      { code: 'x-code', credentials: 'basic', codeChallenge: s256(verifier) },
      {
        token_type: 'bearer',
        expires_in: 7200,
        access_token: 'x-access',
        scope: 'users.email tweet.read users.read offline.access',
        refresh_token: 'x-refresh',
      },
    ),
    'GET /2/users/me': userEndpoint(
      'x-access',
      {
        data: {
          id: '2244994945',
          name: 'Developers',
          username: 'XDevelopers',
          confirmed_email: 'dev@x.example',
          profile_image_url: 'https://pbs.twimg.example/profile_images/normal.jpg',
          url: 'https://t.co/3ZX3TNiZCY',
          created_at: '2013-12-14T04:35:55.000Z',
        },
      },
      (req) =>
        req.query.get('user.fields') === 'id,name,username,confirmed_email,profile_image_url,url,created_at'
          ? null
          : { status: 400, json: { title: 'Invalid Request', detail: 'user.fields' } },
    ),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: 'https://x.test', apiUrl: fake.url }));

  t.equal(x.pkceToProvider, true, 'the flow must send X a PKCE challenge');
  t.equal(await x.authorizationEndpoint(testRuntime(providerConfig())), 'https://x.com/i/oauth2/authorize');
  t.equal(await x.authorizationEndpoint(rt), 'https://x.test/i/oauth2/authorize');
  t.strictSame(x.defaultScopes, ['users.email', 'tweet.read', 'users.read', 'offline.access']);

  await t.rejects(x.exchangeCode(rt, 'x-code', undefined), ProviderError, 'no verifier: not even sent');
  await t.rejects(
    x.exchangeCode(rt, 'x-code', 'a-different-verifier-of-sufficient-length-1234567'),
    ProviderError,
    'X refuses a wrong verifier',
  );
  const tokens = await x.exchangeCode(rt, 'x-code', verifier);
  t.match(tokens, { accessToken: 'x-access', refreshToken: 'x-refresh' });
  t.equal(fake.received('POST /2/oauth2/token').at(-1)?.form.get('code_verifier'), verifier);

  t.strictSame(await x.fetchProfile(rt, tokens, noForm), {
    subject: '2244994945',
    emails: [{ email: 'dev@x.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: '2244994945',
      name: 'Developers',
      preferred_username: 'XDevelopers',
      picture: 'https://pbs.twimg.example/profile_images/normal.jpg',
      profile: 'https://x.com/XDevelopers',
      website: 'https://t.co/3ZX3TNiZCY',
      custom_claims: { created_at: '2013-12-14T04:35:55.000Z' },
      avatar_url: 'https://pbs.twimg.example/profile_images/normal.jpg',
      full_name: 'Developers',
      provider_id: '2244994945',
      user_name: 'XDevelopers',
    },
  });
});
