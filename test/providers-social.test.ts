// Discord, Facebook, Kakao, Snapchat, Spotify and Twitch modules against local fakes speaking each
// provider's token and user API wire format: the fake refuses what the real provider refuses, so a module
// sending the grant or credentials the wrong way fails here.
import t from 'tap';
import { createHmac } from 'node:crypto';
import { discord } from '../dist/server/providers/discord.js';
import { facebook } from '../dist/server/providers/facebook.js';
import { kakao } from '../dist/server/providers/kakao.js';
import { ProviderError } from '../dist/server/providers/outbound.js';
import { snapchat } from '../dist/server/providers/snapchat.js';
import { spotify } from '../dist/server/providers/spotify.js';
import { twitch } from '../dist/server/providers/twitch.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  providerConfig,
  startProviderFake,
  testRuntime,
  tokenEndpoint,
  userEndpoint,
  type FakeRequest,
} from './helpers/provider-fakes.js';

const noForm = new URLSearchParams();

t.test('discord: Basic credentials on the token call, /users/@me, verified as Discord says, CDN avatar', async (t) => {
  let user: Record<string, unknown> = {
    id: '80351110224678912',
    username: 'nelly',
    discriminator: '1337',
    global_name: 'Nelly',
    avatar: '8342729096ea3675442027381ff50dfe',
    verified: true,
    email: 'nelly@discord.example',
    flags: 64,
    banner: null,
    accent_color: null,
    premium_type: 1,
    public_flags: 64,
    mfa_enabled: false,
    locale: 'en-US',
  };
  const fake = await startProviderFake({
    'POST /api/oauth2/token': tokenEndpoint(
      { code: 'discord-code', credentials: 'basic' },
      { access_token: 'dc-access', token_type: 'Bearer', expires_in: 604800, refresh_token: 'dc-refresh', scope: 'identify email' },
    ),
    'GET /api/users/@me': (req) => userEndpoint('dc-access', user)(req),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: `${fake.url}/` }));

  t.equal(await discord.authorizationEndpoint(testRuntime(providerConfig())), 'https://discord.com/api/oauth2/authorize');
  t.equal(
    await discord.authorizationEndpoint(rt),
    `${fake.url}/api/oauth2/authorize`,
    'EXTERNAL_DISCORD_URL replaces the host, slash trimmed',
  );
  t.strictSame(discord.defaultScopes, ['email', 'identify']);
  t.equal(discord.pkceToProvider, false);

  const tokens = await discord.exchangeCode(rt, 'discord-code', undefined);
  t.match(tokens, { accessToken: 'dc-access', refreshToken: 'dc-refresh', idToken: '' });
  t.equal(tokens.response.scope, 'identify email', 'the whole answer is kept');

  const picture = 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png';
  t.strictSame(await discord.fetchProfile(rt, tokens, noForm), {
    subject: '80351110224678912',
    emails: [{ email: 'nelly@discord.example', verified: true, primary: true }],
    claims: {
      iss: `${fake.url}/api`,
      sub: '80351110224678912',
      name: 'nelly#1337',
      picture,
      custom_claims: { global_name: 'Nelly' },
      avatar_url: picture,
      full_name: 'nelly',
      provider_id: '80351110224678912',
    },
  });

  user = { ...user, verified: false, avatar: null, discriminator: '0', global_name: null };
  const second = await discord.fetchProfile(rt, tokens, noForm);
  t.strictSame(
    second.emails,
    [{ email: 'nelly@discord.example', verified: false, primary: true }],
    'an unverified Discord address stays unverified',
  );
  t.equal(second.claims.picture, 'https://cdn.discordapp.com/embed/avatars/0.png', 'no avatar hash: the default avatar');
  t.equal(second.claims.name, 'nelly#0');

  await t.rejects(discord.exchangeCode(rt, 'some-other-code', undefined), ProviderError, 'a code the provider refuses');
});

t.test('facebook: body credentials, Graph /me with appsecret_proof, the address counts as verified', async (t) => {
  const checkGraph = (req: FakeRequest) => {
    if (req.query.get('fields') !== 'email,first_name,last_name,name,picture')
      return { status: 400, json: { error: { message: 'fields' } } };
    const proof = createHmac('sha256', CLIENT_SECRET).update('fb-access').digest('hex');
    if (req.query.get('appsecret_proof') !== proof)
      return {
        status: 400,
        json: { error: { message: 'Invalid appsecret_proof provided in the API argument', type: 'GraphMethodException', code: 100 } },
      };
    return null;
  };
  const fake = await startProviderFake({
    'POST /oauth/access_token': tokenEndpoint(
      { code: 'fb-code', credentials: 'body' },
      { access_token: 'fb-access', token_type: 'bearer', expires_in: 5183944 },
    ),
    'GET /me': userEndpoint(
      'fb-access',
      {
        id: '10158000000000001',
        email: 'ada@fb.example',
        first_name: 'Ada',
        last_name: 'Lovelace',
        name: 'Ada L.',
        picture: { data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.example/pic.jpg', width: 50 } },
      },
      checkGraph,
    ),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await facebook.authorizationEndpoint(testRuntime(providerConfig())), 'https://www.facebook.com/dialog/oauth');
  t.equal(await facebook.authorizationEndpoint(rt), `${fake.url}/dialog/oauth`);
  t.strictSame(facebook.defaultScopes, ['email']);

  const tokens = await facebook.exchangeCode(rt, 'fb-code', undefined);
  t.match(tokens, { accessToken: 'fb-access', refreshToken: '', idToken: '' });
  const profileUrl = `${fake.url}/me?fields=email,first_name,last_name,name,picture`;
  t.strictSame(await facebook.fetchProfile(rt, tokens, noForm), {
    subject: '10158000000000001',
    emails: [{ email: 'ada@fb.example', verified: true, primary: true }],
    claims: {
      iss: profileUrl,
      sub: '10158000000000001',
      name: 'Ada Lovelace',
      nickname: 'Ada L.',
      picture: 'https://platform-lookaside.fbsbx.example/pic.jpg',
      slug: 'Ada L.',
      avatar_url: 'https://platform-lookaside.fbsbx.example/pic.jpg',
      full_name: 'Ada Lovelace',
      provider_id: '10158000000000001',
    },
  });
});

t.test('kakao: kauth and kapi on separate hosts (URL and API_URL), verified only when verified and valid', async (t) => {
  let account: Record<string, unknown> = {
    profile_nickname_needs_agreement: false,
    profile: {
      nickname: '홍길동',
      thumbnail_image_url: 'http://k.kakaocdn.example/thumb.jpg',
      profile_image_url: 'http://k.kakaocdn.example/profile.jpg',
      is_default_image: false,
    },
    email_needs_agreement: false,
    is_email_valid: true,
    is_email_verified: true,
    email: 'sample@kakao.example',
  };
  const auth = await startProviderFake({
    'POST /oauth/token': tokenEndpoint(
      { code: 'kakao-code', credentials: 'body' },
      {
        token_type: 'bearer',
        access_token: 'kk-access',
        expires_in: 43199,
        refresh_token: 'kk-refresh',
        refresh_token_expires_in: 5183999,
        scope: 'account_email profile_image profile_nickname',
      },
    ),
  });
  const api = await startProviderFake({
    'GET /v2/user/me': (req) =>
      userEndpoint('kk-access', {
        id: 123456789,
        connected_at: '2022-04-11T01:45:28Z',
        properties: { nickname: '홍길동' },
        kakao_account: account,
      })(req),
  });
  t.teardown(() => Promise.all([auth.close(), api.close()]));
  const rt = testRuntime(providerConfig({ url: auth.url, apiUrl: api.url }));

  t.equal(await kakao.authorizationEndpoint(testRuntime(providerConfig())), 'https://kauth.kakao.com/oauth/authorize');
  t.equal(await kakao.authorizationEndpoint(rt), `${auth.url}/oauth/authorize`);
  t.strictSame(kakao.defaultScopes, ['account_email', 'profile_image', 'profile_nickname']);
  t.equal(kakao.scopeSeparator, ',');

  const tokens = await kakao.exchangeCode(rt, 'kakao-code', undefined);
  t.match(tokens, { accessToken: 'kk-access', refreshToken: 'kk-refresh' });
  t.strictSame(await kakao.fetchProfile(rt, tokens, noForm), {
    subject: '123456789',
    emails: [{ email: 'sample@kakao.example', verified: true, primary: true }],
    claims: {
      iss: api.url,
      sub: '123456789',
      name: '홍길동',
      preferred_username: '홍길동',
      avatar_url: 'http://k.kakaocdn.example/profile.jpg',
      full_name: '홍길동',
      provider_id: '123456789',
      user_name: '홍길동',
    },
  });
  t.equal(auth.received('GET /v2/user/me').length, 0, 'the user API is asked on the API_URL host only');

  account = { ...account, is_email_valid: false };
  const invalid = await kakao.fetchProfile(rt, tokens, noForm);
  t.strictSame(
    invalid.emails,
    [{ email: 'sample@kakao.example', verified: false, primary: true }],
    'verified but no longer valid: not verified',
  );
});

t.test('snapchat: Basic credentials, the GraphQL me query on kit.snapchat.com, fixed issuer', async (t) => {
  const query = '{me { externalId displayName bitmoji { avatar id } email } }';
  const fake = await startProviderFake({
    'POST /accounts/oauth2/token': tokenEndpoint(
      { code: 'snap-code', credentials: 'basic' },
      { access_token: 'sn-access', refresh_token: 'sn-refresh', token_type: 'Bearer', expires_in: 3600, scope: 'user.display_name' },
    ),
    'GET /v1/me': userEndpoint(
      'sn-access',
      {
        data: {
          me: {
            externalId: 'CAESIPiRBp0e5gLDq7VVurQ3rVdmdbqxpOJWynjyBL/xlo0w',
            displayName: 'Snap User',
            bitmoji: { avatar: 'https://sdk.bitmoji.example/render/panel/1.png', id: 'bitmoji-1' },
            email: 'snap@snap.example',
          },
        },
      },
      (req) => (req.query.get('query') === query ? null : { status: 400, json: { errors: [{ message: 'bad query' }] } }),
    ),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await snapchat.authorizationEndpoint(testRuntime(providerConfig())), 'https://accounts.snapchat.com/accounts/oauth2/auth');
  t.equal(await snapchat.authorizationEndpoint(rt), `${fake.url}/accounts/oauth2/auth`);
  t.strictSame(snapchat.defaultScopes, [
    'https://auth.snapchat.com/oauth2/api/user.external_id',
    'https://auth.snapchat.com/oauth2/api/user.display_name',
    'https://auth.snapchat.com/oauth2/api/user.bitmoji.avatar',
  ]);
  const tokens = await snapchat.exchangeCode(rt, 'snap-code', undefined);
  const subject = 'CAESIPiRBp0e5gLDq7VVurQ3rVdmdbqxpOJWynjyBL/xlo0w';
  t.strictSame(await snapchat.fetchProfile(rt, tokens, noForm), {
    subject,
    emails: [{ email: 'snap@snap.example', verified: true, primary: true }],
    claims: {
      iss: 'https://accounts.snapchat.com/accounts/oauth2/token',
      sub: subject,
      name: 'Snap User',
      picture: 'https://sdk.bitmoji.example/render/panel/1.png',
      slug: 'Snap User',
      avatar_url: 'https://sdk.bitmoji.example/render/panel/1.png',
      full_name: 'Snap User',
      provider_id: subject,
    },
  });
});

t.test('spotify: Basic credentials, /me, the largest image, the address never verified', async (t) => {
  const fake = await startProviderFake({
    'POST /api/token': tokenEndpoint(
      { code: 'sp-code', credentials: 'basic' },
      { access_token: 'sp-access', token_type: 'Bearer', scope: 'user-read-email', expires_in: 3600, refresh_token: 'sp-refresh' },
    ),
    // With EXTERNAL_SPOTIFY_URL set, the override stands for `https://api.spotify.com/v1` whole, as in the original.
    'GET /me': userEndpoint('sp-access', {
      country: 'SE',
      display_name: 'JM Wizzler',
      email: 'wizzler@spotify.example',
      explicit_content: { filter_enabled: false, filter_locked: false },
      external_urls: { spotify: 'https://open.spotify.com/user/wizzler' },
      followers: { href: null, total: 3829 },
      href: 'https://api.spotify.com/v1/users/wizzler',
      id: 'wizzler',
      images: [
        { url: 'https://i.scdn.example/small.jpg', height: 64, width: 64 },
        { url: 'https://i.scdn.example/large.jpg', height: 300, width: 300 },
        { url: 'https://i.scdn.example/unknown.jpg', height: null, width: null },
      ],
      product: 'premium',
      type: 'user',
      uri: 'spotify:user:wizzler',
    }),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await spotify.authorizationEndpoint(testRuntime(providerConfig())), 'https://accounts.spotify.com/authorize');
  t.equal(await spotify.authorizationEndpoint(rt), `${fake.url}/authorize`);
  t.strictSame(spotify.defaultScopes, ['user-read-email']);
  const tokens = await spotify.exchangeCode(rt, 'sp-code', undefined);
  t.strictSame(await spotify.fetchProfile(rt, tokens, noForm), {
    subject: 'wizzler',
    emails: [{ email: 'wizzler@spotify.example', verified: false, primary: true }],
    claims: {
      iss: fake.url,
      sub: 'wizzler',
      name: 'JM Wizzler',
      picture: 'https://i.scdn.example/large.jpg',
      avatar_url: 'https://i.scdn.example/large.jpg',
      full_name: 'JM Wizzler',
      provider_id: 'wizzler',
    },
  });
});

t.test('twitch: body credentials, Helix /users with the Client-Id header', async (t) => {
  let users: unknown[] = [
    {
      id: '141981764',
      login: 'twitchdev',
      display_name: 'TwitchDev',
      type: '',
      broadcaster_type: 'partner',
      description: 'Supporting third-party developers building Twitch integrations.',
      profile_image_url: 'https://static-cdn.jtvnw.example/profile_image-300x300.png',
      offline_image_url: 'https://static-cdn.jtvnw.example/channel_offline_image-1920x1080.png',
      view_count: 5980557,
      email: 'not-real@twitch.example',
      created_at: '2016-12-14T20:32:28Z',
    },
  ];
  const needsClientId = (req: FakeRequest) =>
    req.headers['client-id'] === CLIENT_ID
      ? null
      : { status: 401, json: { error: 'Unauthorized', status: 401, message: 'Client-Id header required' } };
  const fake = await startProviderFake({
    'POST /oauth2/token': tokenEndpoint(
      { code: 'tw-code', credentials: 'body' },
      { access_token: 'tw-access', expires_in: 14124, refresh_token: 'tw-refresh', scope: ['user:read:email'], token_type: 'bearer' },
    ),
    'GET /helix/users': (req) => userEndpoint('tw-access', { data: users }, needsClientId)(req),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await twitch.authorizationEndpoint(testRuntime(providerConfig())), 'https://id.twitch.tv/oauth2/authorize');
  t.equal(await twitch.authorizationEndpoint(rt), `${fake.url}/oauth2/authorize`);
  t.strictSame(twitch.defaultScopes, ['user:read:email']);
  const tokens = await twitch.exchangeCode(rt, 'tw-code', undefined);
  t.match(tokens, { accessToken: 'tw-access', refreshToken: 'tw-refresh' });
  t.strictSame(await twitch.fetchProfile(rt, tokens, noForm), {
    subject: '141981764',
    emails: [{ email: 'not-real@twitch.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: '141981764',
      picture: 'https://static-cdn.jtvnw.example/profile_image-300x300.png',
      name: 'twitchdev',
      nickname: 'TwitchDev',
      custom_claims: {
        broadcaster_type: 'partner',
        description: 'Supporting third-party developers building Twitch integrations.',
        type: '',
        offline_image_url: 'https://static-cdn.jtvnw.example/channel_offline_image-1920x1080.png',
        view_count: 5980557,
      },
      slug: 'TwitchDev',
      avatar_url: 'https://static-cdn.jtvnw.example/profile_image-300x300.png',
      full_name: 'twitchdev',
      provider_id: '141981764',
    },
  });
  t.equal(fake.received('GET /helix/users')[0].headers['client-id'], CLIENT_ID, 'the first id of the comma list is the Client-Id');

  users = [];
  await t.rejects(twitch.fetchProfile(rt, tokens, noForm), ProviderError, 'no user for the token: refused');
});
