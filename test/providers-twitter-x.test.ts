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
  CLIENT_ID,
  CLIENT_SECRET,
  oauth1Problem,
  oauthHeaderParams,
  providerConfig,
  s256,
  startProviderFake,
  testRuntime,
  tokenEndpoint,
  userEndpoint,
  type FakeAnswer,
  type FakeRequest,
  type ProviderFake,
} from './helpers/provider-fakes.js';

const noForm = new URLSearchParams();
const CALLBACK = 'https://auth.example.test/auth/v1/callback?state=flow-state-id';
const VERIFIER = 'verifier-from-consent';

interface TwitterFake {
  fake: ProviderFake;
  /** every refusal the fake made, with its reason */
  refusals: string[];
  /** what the callback confirmation says (Twitter sends `true` when it accepted oauth_callback) */
  confirmCallback: boolean;
}

/** Twitter's three OAuth 1.0a endpoints and verify_credentials, each verifying the request's signature. */
async function startTwitterFake(): Promise<TwitterFake> {
  const requestTokens = new Map<string, string>(); // request token → its secret
  const accessTokens = new Map<string, string>();
  const seenNonces = new Set<string>();
  const state: TwitterFake = { fake: undefined as unknown as ProviderFake, refusals: [], confirmCallback: true };
  const refuse = (reason: string): FakeAnswer => {
    state.refusals.push(reason);
    return { status: 401, json: { errors: [{ code: 32, message: 'Could not authenticate you.' }] } };
  };
  const verify = (req: FakeRequest, tokenSecret: string) =>
    oauth1Problem(req, {
      consumerKey: CLIENT_ID,
      consumerSecret: CLIENT_SECRET,
      tokenSecret,
      baseUrl: `${state.fake.url}${req.path}`,
      seenNonces,
    });
  const form = (pairs: Record<string, string>): FakeAnswer => ({
    text: new URLSearchParams(pairs).toString(),
    contentType: 'text/html; charset=utf-8',
  });

  state.fake = await startProviderFake({
    'POST /oauth/request_token': (req) => {
      const problem = verify(req, '');
      if (problem) return refuse(problem);
      const callback = oauthHeaderParams(req.headers)?.get('oauth_callback');
      if (callback !== CALLBACK) return refuse(`oauth_callback ${callback}`);
      const token = `rt-${randomBytes(6).toString('hex')}`;
      requestTokens.set(token, `rts-${randomBytes(6).toString('hex')}`);
      return form({
        oauth_token: token,
        oauth_token_secret: requestTokens.get(token)!,
        oauth_callback_confirmed: String(state.confirmCallback),
      });
    },
    'POST /oauth/access_token': (req) => {
      const params = oauthHeaderParams(req.headers);
      const token = params?.get('oauth_token') ?? '';
      const secret = requestTokens.get(token);
      if (secret === undefined) return refuse('unknown request token');
      const problem = verify(req, secret);
      if (problem) return refuse(problem);
      if (params?.get('oauth_verifier') !== VERIFIER) return refuse('wrong oauth_verifier');
      requestTokens.delete(token);
      accessTokens.set('6253282-at', 'ats-secret');
      return form({ oauth_token: '6253282-at', oauth_token_secret: 'ats-secret', user_id: '6253282', screen_name: 'TwitterAPI' });
    },
    'GET /1.1/account/verify_credentials.json': (req) => {
      const token = oauthHeaderParams(req.headers)?.get('oauth_token') ?? '';
      const secret = accessTokens.get(token);
      if (secret === undefined) return refuse('unknown access token');
      const problem = verify(req, secret);
      if (problem) return refuse(problem);
      if (req.query.get('include_email') !== 'true') return refuse('include_email missing');
      return {
        json: {
          id: 6253282,
          id_str: '6253282',
          name: 'Twitter API',
          screen_name: 'TwitterAPI',
          location: 'San Francisco, CA',
          profile_image_url_https: 'https://pbs.twimg.example/profile_images/942858479592554497/BbazLO9L_normal.jpg',
          email: 'api@twitter.example',
          verified: true,
        },
      };
    },
  });
  return state;
}

t.test('twitter: request token bound to the callback, access token for the verifier, signed profile call', async (t) => {
  const twitterFake = await startTwitterFake();
  const { fake } = twitterFake;
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));
  t.equal(twitter.protocol, 'oauth1');

  const step1 = await twitter.requestToken(rt, CALLBACK);
  t.match(step1, { token: /^rt-/, secret: /^rts-/ });
  t.equal(step1.authorizeUrl, `${fake.url}/oauth/authenticate?oauth_token=${step1.token}`);
  t.equal(oauthHeaderParams(fake.requests[0].headers)?.get('oauth_signature_method'), 'HMAC-SHA1');

  const tokens = await twitter.accessToken(rt, step1.token, step1.secret, VERIFIER);
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
  const twitterFake = await startTwitterFake();
  const { fake } = twitterFake;
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  await t.rejects(twitter.requestToken(testRuntime(providerConfig({ url: fake.url, secret: 'not-the-secret' })), CALLBACK), ProviderError);
  t.strictSame(twitterFake.refusals, ['signature does not match'], 'the fake checks the signature with the consumer secret');

  const step1 = await twitter.requestToken(rt, CALLBACK);
  await t.rejects(twitter.accessToken(rt, step1.token, step1.secret, 'guessed-verifier'), ProviderError);
  await t.rejects(twitter.accessToken(rt, step1.token, 'wrong-token-secret', VERIFIER), ProviderError);
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
