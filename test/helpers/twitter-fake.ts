// Twitter's OAuth 1.0a wire format as a local fake, shared by the module's own test
// (test/providers-twitter-x.test.ts) and the whole-flow test (test/oauth-plain-flow.test.ts): the request
// token, the consent page, the access token and verify_credentials, each request's HMAC-SHA1 signature
// verified by the fake itself (oauth1Problem, independent of the oauth-1.0a library the module uses) with the
// consumer secret and the token secret it issued.
import { randomBytes } from 'node:crypto';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  oauth1Problem,
  oauthHeaderParams,
  startProviderFake,
  type FakeAnswer,
  type FakeRequest,
  type ProviderFake,
} from './provider-fakes.js';

/** What the consent page hands back with the request token. */
export const TWITTER_VERIFIER = 'verifier-from-consent';

export interface TwitterFake {
  fake: ProviderFake;
  /** every refusal the fake made, with its reason */
  refusals: string[];
  /** request token → its secret, as issued */
  requestTokens: Map<string, string>;
  /** what the callback confirmation says (Twitter sends `true` when it accepted oauth_callback) */
  confirmCallback: boolean;
}

/** `acceptsCallback` decides which oauth_callback values the request-token call takes. */
export async function startTwitterFake(acceptsCallback: (callbackUrl: string) => boolean): Promise<TwitterFake> {
  const callbacks = new Map<string, string>(); // request token → the oauth_callback it was bound to
  const accessTokens = new Map<string, string>();
  const seenNonces = new Set<string>();
  const state: TwitterFake = { fake: undefined as unknown as ProviderFake, refusals: [], requestTokens: new Map(), confirmCallback: true };
  const refuse = (reason: string): FakeAnswer => {
    state.refusals.push(reason);
    return { status: 401, json: { errors: [{ code: 32, message: 'Could not authenticate you.' }] } };
  };
  const signed = (req: FakeRequest, tokenSecret: string) =>
    oauth1Problem(req, {
      consumerKey: CLIENT_ID,
      consumerSecret: CLIENT_SECRET,
      tokenSecret,
      baseUrl: `${state.fake.url}${req.path}`,
      seenNonces,
    });
  // Twitter answers its token calls form-encoded, labelled text/html.
  const form = (pairs: Record<string, string>): FakeAnswer => ({
    text: new URLSearchParams(pairs).toString(),
    contentType: 'text/html; charset=utf-8',
  });

  state.fake = await startProviderFake({
    'POST /oauth/request_token': (req) => {
      const problem = signed(req, '');
      if (problem) return refuse(problem);
      const callbackUrl = oauthHeaderParams(req.headers)?.get('oauth_callback') ?? '';
      if (!acceptsCallback(callbackUrl)) return refuse(`oauth_callback ${callbackUrl}`);
      const token = `rt-${randomBytes(6).toString('hex')}`;
      const secret = `rts-${randomBytes(6).toString('hex')}`;
      state.requestTokens.set(token, secret);
      callbacks.set(token, callbackUrl);
      return form({ oauth_token: token, oauth_token_secret: secret, oauth_callback_confirmed: String(state.confirmCallback) });
    },
    // the consent page: back to the callback the request token was bound to, with the token and the verifier
    'GET /oauth/authenticate': (req) => {
      const token = req.query.get('oauth_token') ?? '';
      const back = callbacks.get(token);
      if (!back) return { status: 400, text: 'unknown request token' };
      const url = new URL(back);
      url.searchParams.set('oauth_token', token);
      url.searchParams.set('oauth_verifier', TWITTER_VERIFIER);
      return { status: 302, headers: { Location: url.href } };
    },
    'POST /oauth/access_token': (req) => {
      const params = oauthHeaderParams(req.headers);
      const token = params?.get('oauth_token') ?? '';
      const secret = state.requestTokens.get(token);
      if (secret === undefined) return refuse('unknown request token');
      const problem = signed(req, secret);
      if (problem) return refuse(problem);
      if (params?.get('oauth_verifier') !== TWITTER_VERIFIER) return refuse('wrong oauth_verifier');
      state.requestTokens.delete(token);
      accessTokens.set('6253282-at', 'ats-secret');
      return form({ oauth_token: '6253282-at', oauth_token_secret: 'ats-secret', user_id: '6253282', screen_name: 'TwitterAPI' });
    },
    'GET /1.1/account/verify_credentials.json': (req) => {
      const token = oauthHeaderParams(req.headers)?.get('oauth_token') ?? '';
      const secret = accessTokens.get(token);
      if (secret === undefined) return refuse('unknown access token');
      const problem = signed(req, secret);
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
