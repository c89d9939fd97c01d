// Bitbucket, GitLab, Figma, Fly.io and Notion modules against local fakes speaking each provider's token
// and user API wire format, including GitLab on a self-managed host named by EXTERNAL_GITLAB_URL.
import t from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { bitbucket } from '../dist/server/providers/bitbucket.js';
import { figma } from '../dist/server/providers/figma.js';
import { fly } from '../dist/server/providers/fly.js';
import { gitlab } from '../dist/server/providers/gitlab.js';
import { notion } from '../dist/server/providers/notion.js';
import { providerConfig, startProviderFake, testRuntime, tokenEndpoint, userEndpoint, type FakeRequest } from './helpers/provider-fakes.js';

const noForm = new URLSearchParams();

t.test('bitbucket: Basic credentials, /2.0/user and /2.0/user/emails with their own confirmed/primary flags', async (t) => {
  const fake = await startProviderFake({
    'POST /site/oauth2/access_token': tokenEndpoint(
      { code: 'bb-code', credentials: 'basic' },
      {
        access_token: 'bb-access',
        scopes: 'account email',
        token_type: 'bearer',
        expires_in: 7200,
        state: 'authorization_code',
        refresh_token: 'bb-refresh',
      },
    ),
    'GET /2.0/user': userEndpoint('bb-access', {
      display_name: 'Ada Lovelace',
      links: { avatar: { href: 'https://secure.gravatar.example/avatar/ada' }, html: { href: 'https://bitbucket.org/%7Bd301aafa%7D/' } },
      created_on: '2018-04-05T13:03:46.000000+00:00',
      type: 'user',
      uuid: '{d301aafa-d676-4ee0-88be-962be7417567}',
      username: 'ada',
      account_id: '557058:0f0d7a7a',
    }),
    'GET /2.0/user/emails': userEndpoint('bb-access', {
      pagelen: 10,
      values: [
        { is_primary: false, is_confirmed: false, type: 'email', email: 'old@bb.example', links: {} },
        { is_primary: true, is_confirmed: true, type: 'email', email: 'ada@bb.example', links: {} },
        { is_primary: false, is_confirmed: true, type: 'email', email: 'work@bb.example', links: {} },
      ],
      page: 1,
      size: 3,
    }),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await bitbucket.authorizationEndpoint(testRuntime(providerConfig())), 'https://bitbucket.org/site/oauth2/authorize');
  t.equal(await bitbucket.authorizationEndpoint(rt), `${fake.url}/site/oauth2/authorize`);
  t.strictSame(bitbucket.defaultScopes, ['account', 'email']);
  t.strictSame(bitbucket.scopesFor?.('repository,admin'), ['account', 'email'], 'requested scopes are not asked for, as the original');
  const tokens = await bitbucket.exchangeCode(rt, 'bb-code', undefined);
  const subject = '{d301aafa-d676-4ee0-88be-962be7417567}';
  t.strictSame(await bitbucket.fetchProfile(rt, tokens, noForm), {
    subject,
    emails: [
      { email: 'ada@bb.example', verified: true, primary: true },
      { email: 'old@bb.example', verified: false, primary: false },
      { email: 'work@bb.example', verified: true, primary: false },
    ],
    claims: {
      iss: `${fake.url}/2.0`,
      sub: subject,
      name: 'Ada Lovelace',
      picture: 'https://secure.gravatar.example/avatar/ada',
      avatar_url: 'https://secure.gravatar.example/avatar/ada',
      full_name: 'Ada Lovelace',
      provider_id: subject,
    },
  });
});

t.test('gitlab: gitlab.com by default, EXTERNAL_GITLAB_URL for a self-managed host; primary verified by confirmed_at', async (t) => {
  let confirmedAt: string | null = '2012-05-23T09:05:22Z';
  const fake = await startProviderFake({
    'POST /oauth/token': tokenEndpoint(
      { code: 'gl-code', credentials: 'body' },
      {
        access_token: 'gl-access',
        token_type: 'Bearer',
        expires_in: 7200,
        refresh_token: 'gl-refresh',
        scope: 'read_user',
        created_at: 1607635748,
      },
    ),
    'GET /api/v4/user': (req) =>
      userEndpoint('gl-access', {
        id: 42,
        username: 'ada',
        name: 'Ada Lovelace',
        state: 'active',
        avatar_url: 'https://gitlab.example/uploads/-/system/user/avatar/42/avatar.png',
        web_url: 'https://gitlab.example/ada',
        email: 'ada@gitlab.example',
        confirmed_at: confirmedAt,
        two_factor_enabled: true,
      })(req),
    'GET /api/v4/user/emails': userEndpoint('gl-access', [
      { id: 1, email: 'ada@gitlab.example', confirmed_at: '2012-05-23T09:05:22Z' },
      { id: 3, email: 'ada.work@gitlab.example', confirmed_at: '2021-03-26T19:07:56.248Z' },
      { id: 4, email: 'unconfirmed@gitlab.example', confirmed_at: null },
    ]),
  });
  t.teardown(fake.close);

  t.equal(await gitlab.authorizationEndpoint(testRuntime(providerConfig())), 'https://gitlab.com/oauth/authorize', 'default host');
  const config = loadConfig({
    env: {
      AUTH_EXTERNAL_GITLAB_ENABLED: 'true',
      AUTH_EXTERNAL_GITLAB_CLIENT_ID: providerConfig().clientId,
      AUTH_EXTERNAL_GITLAB_SECRET: providerConfig().secret,
      AUTH_EXTERNAL_GITLAB_REDIRECT_URI: providerConfig().redirectUri,
      AUTH_EXTERNAL_GITLAB_URL: `${fake.url}/`,
    },
    envFile: null,
  }).external.providers.gitlab;
  const rt = testRuntime(config);
  t.equal(await gitlab.authorizationEndpoint(rt), `${fake.url}/oauth/authorize`, 'EXTERNAL_GITLAB_URL, its trailing slash trimmed');
  t.strictSame(gitlab.defaultScopes, ['read_user']);

  const tokens = await gitlab.exchangeCode(rt, 'gl-code', undefined);
  t.match(tokens, { accessToken: 'gl-access', refreshToken: 'gl-refresh' });
  t.strictSame(await gitlab.fetchProfile(rt, tokens, noForm), {
    subject: '42',
    emails: [
      { email: 'ada@gitlab.example', verified: true, primary: true },
      { email: 'ada.work@gitlab.example', verified: false, primary: false },
      { email: 'unconfirmed@gitlab.example', verified: false, primary: false },
    ],
    claims: {
      iss: fake.url,
      sub: '42',
      name: 'Ada Lovelace',
      picture: 'https://gitlab.example/uploads/-/system/user/avatar/42/avatar.png',
      avatar_url: 'https://gitlab.example/uploads/-/system/user/avatar/42/avatar.png',
      full_name: 'Ada Lovelace',
      provider_id: '42',
    },
  });

  confirmedAt = null;
  const unconfirmed = await gitlab.fetchProfile(rt, tokens, noForm);
  t.strictSame(
    unconfirmed.emails[0],
    { email: 'ada@gitlab.example', verified: false, primary: true },
    'an unconfirmed account: not verified',
  );
});

t.test('figma: Basic credentials on api.figma.com, /v1/me, the address verified', async (t) => {
  const fake = await startProviderFake({
    'POST /v1/oauth/token': tokenEndpoint(
      { code: 'fg-code', credentials: 'basic' },
      { user_id: 12345, user_id_string: '12345', access_token: 'fg-access', refresh_token: 'fg-refresh', expires_in: 7776000 },
    ),
    'GET /v1/me': userEndpoint('fg-access', {
      id: '12345',
      email: 'ada@figma.example',
      handle: 'Ada',
      img_url: 'https://s3-alpha.figma.example/profile/ada.png',
    }),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: 'https://www.figma.test', apiUrl: fake.url }));

  t.equal(await figma.authorizationEndpoint(testRuntime(providerConfig())), 'https://www.figma.com/oauth');
  t.equal(await figma.authorizationEndpoint(rt), 'https://www.figma.test/oauth', 'the authorization page follows EXTERNAL_FIGMA_URL');
  t.strictSame(figma.defaultScopes, ['current_user:read']);
  const tokens = await figma.exchangeCode(rt, 'fg-code', undefined);
  t.strictSame(await figma.fetchProfile(rt, tokens, noForm), {
    subject: '12345',
    emails: [{ email: 'ada@figma.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: '12345',
      name: 'Ada',
      email: 'ada@figma.example',
      email_verified: true,
      avatar_url: 'https://s3-alpha.figma.example/profile/ada.png',
      full_name: 'Ada',
      provider_id: '12345',
    },
  });
});

t.test('fly: body credentials, the person from /oauth/token/info with organisations as custom claims', async (t) => {
  const fake = await startProviderFake({
    'POST /oauth/token': tokenEndpoint(
      { code: 'fly-code', credentials: 'body' },
      {
        access_token: 'fly-access',
        token_type: 'Bearer',
        expires_in: 7200,
        refresh_token: 'fly-refresh',
        scope: 'read',
        created_at: 1700000000,
      },
    ),
    'GET /oauth/token/info': userEndpoint('fly-access', {
      resource_owner_id: 'user_abc123',
      scope: ['read'],
      expires_in: 7199,
      application: { uid: 'client-id-1' },
      created_at: 1700000000,
      user_id: 'user_abc123',
      user_name: 'Ada Lovelace',
      email: 'ada@fly.example',
      organizations: [{ id: 'org_1', role: 'admin' }],
    }),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await fly.authorizationEndpoint(testRuntime(providerConfig())), 'https://api.fly.io/oauth/authorize');
  t.equal(await fly.authorizationEndpoint(rt), `${fake.url}/oauth/authorize`);
  t.strictSame(fly.defaultScopes, ['read']);
  const tokens = await fly.exchangeCode(rt, 'fly-code', undefined);
  t.strictSame(await fly.fetchProfile(rt, tokens, noForm), {
    subject: 'user_abc123',
    emails: [{ email: 'ada@fly.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: 'user_abc123',
      full_name: 'Ada Lovelace',
      email: 'ada@fly.example',
      email_verified: true,
      provider_id: 'user_abc123',
      custom_claims: {
        resource_owner_id: 'user_abc123',
        organizations: [{ id: 'org_1', role: 'admin' }],
        application: { uid: 'client-id-1' },
        scope: ['read'],
        created_at: 1700000000,
      },
    },
  });
});

t.test('notion: JSON token call with Basic credentials, Notion-Version on /v1/users/me, the bot owner is the person', async (t) => {
  const needsVersion = (req: FakeRequest) =>
    req.headers['notion-version'] === '2021-08-16'
      ? null
      : {
          status: 400,
          json: { object: 'error', status: 400, code: 'missing_version', message: 'Notion-Version header failed validation' },
        };
  const owner = {
    object: 'user',
    id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
    name: 'Ada Lovelace',
    avatar_url: 'https://s3-us-west-2.amazonaws.example/public.notion-static.com/ada.png',
    type: 'person',
    person: { email: 'ada@notion.example' },
  };
  const fake = await startProviderFake({
    'POST /v1/oauth/token': tokenEndpoint(
      { code: 'nt-code', credentials: 'basic', encoding: 'json' },
      {
        access_token: 'secret_nt-access',
        token_type: 'bearer',
        bot_id: 'b3414d65-1224-45e4-a6f5-f4a45a3e6a8e',
        workspace_name: "Ada's Notion",
        workspace_icon: null,
        workspace_id: 'j565j4d7x3-ntm-4f3e-89d1-5e0a3f2bd8a6',
        owner: { type: 'user', user: owner },
        duplicated_template_id: null,
        request_id: 'f0a4f5a6-1234',
      },
    ),
    'GET /v1/users/me': userEndpoint(
      'secret_nt-access',
      {
        object: 'user',
        id: 'b3414d65-1224-45e4-a6f5-f4a45a3e6a8e',
        name: 'Portcullis',
        avatar_url: null,
        type: 'bot',
        bot: { owner: { type: 'user', user: owner }, workspace_name: "Ada's Notion" },
        request_id: '9f0b8c2e',
      },
      needsVersion,
    ),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await notion.authorizationEndpoint(testRuntime(providerConfig())), 'https://api.notion.com/v1/oauth/authorize');
  t.equal(await notion.authorizationEndpoint(rt), `${fake.url}/v1/oauth/authorize`);
  t.strictSame(notion.defaultScopes, []);
  t.strictSame(notion.scopesFor?.('read'), [], 'requested scopes are not asked for, as the original');
  t.strictSame(notion.authorizationParams?.(rt, new URLSearchParams('provider=notion')), { owner: 'user' });
  const tokens = await notion.exchangeCode(rt, 'nt-code', undefined);
  t.equal(fake.received('POST /v1/oauth/token')[0].headers['content-type'], 'application/json', 'Notion takes a JSON body');
  t.strictSame(await notion.fetchProfile(rt, tokens, noForm), {
    subject: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
    emails: [{ email: 'ada@notion.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
      name: 'Ada Lovelace',
      picture: 'https://s3-us-west-2.amazonaws.example/public.notion-static.com/ada.png',
      avatar_url: 'https://s3-us-west-2.amazonaws.example/public.notion-static.com/ada.png',
      full_name: 'Ada Lovelace',
      provider_id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6',
    },
  });
});
