// LinkedIn (legacy), Slack (deprecated v1 and OIDC), Zoom and WorkOS modules against local fakes speaking
// each provider's token and user API wire format, including Slack's errors inside HTTP 200 answers.
import t from 'tap';
import { linkedin } from '../dist/server/providers/linkedin.js';
import { ProviderError } from '../dist/server/providers/outbound.js';
import { slack } from '../dist/server/providers/slack.js';
import { slackOidc } from '../dist/server/providers/slack_oidc.js';
import { workos } from '../dist/server/providers/workos.js';
import { zoom } from '../dist/server/providers/zoom.js';
import { providerConfig, startProviderFake, testRuntime, tokenEndpoint, userEndpoint, type FakeRequest } from './helpers/provider-fakes.js';

const noForm = new URLSearchParams();

t.test('linkedin: body credentials, the localized name and the emailAddress API, the address verified', async (t) => {
  const projection = (expected: string) => (req: FakeRequest) =>
    req.query.get('projection') === expected ? null : { status: 400, json: { message: 'bad projection', status: 400 } };
  const localized = (value: string) => ({
    localized: { en_US: value, de_DE: `${value} (de)` },
    preferredLocale: { country: 'US', language: 'en' },
  });
  const fake = await startProviderFake({
    'POST /oauth/v2/accessToken': tokenEndpoint(
      { code: 'li-code', credentials: 'body' },
      { access_token: 'li-access', expires_in: 5184000, scope: 'r_emailaddress,r_liteprofile' },
    ),
    'GET /v2/me': userEndpoint(
      'li-access',
      {
        id: 'yrZCpj2Z12',
        firstName: localized('Ada'),
        lastName: localized('Lovelace'),
        profilePicture: {
          displayImage: 'urn:li:digitalmediaAsset:C4D00AAAAbBCDEFGhiJ',
          'displayImage~': {
            paging: { count: 10, start: 0, links: [] },
            elements: [
              {
                authorizationMethod: 'PUBLIC',
                identifiers: [
                  {
                    identifier: 'https://media.licdn.example/dms/image/100_100/photo.jpg',
                    index: 0,
                    mediaType: 'image/jpeg',
                    identifierType: 'EXTERNAL_URL',
                    identifierExpiresInSeconds: 1700000000,
                  },
                ],
              },
            ],
          },
        },
      },
      projection('(id,firstName,lastName,profilePicture(displayImage~:playableStreams))'),
    ),
    'GET /v2/emailAddress': userEndpoint(
      'li-access',
      { elements: [{ handle: 'urn:li:emailAddress:3775708763', 'handle~': { emailAddress: 'ada@linkedin.example' } }] },
      (req) => (req.query.get('q') === 'members' ? projection('(elements*(handle~))')(req) : { status: 400, json: { message: 'q' } }),
    ),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await linkedin.authorizationEndpoint(testRuntime(providerConfig())), 'https://api.linkedin.com/oauth/v2/authorization');
  t.equal(await linkedin.authorizationEndpoint(rt), `${fake.url}/oauth/v2/authorization`);
  t.strictSame(linkedin.defaultScopes, ['r_emailaddress', 'r_liteprofile']);
  const tokens = await linkedin.exchangeCode(rt, 'li-code', undefined);
  t.strictSame(await linkedin.fetchProfile(rt, tokens, noForm), {
    subject: 'yrZCpj2Z12',
    emails: [{ email: 'ada@linkedin.example', verified: true, primary: true }],
    claims: {
      iss: fake.url,
      sub: 'yrZCpj2Z12',
      name: 'Ada Lovelace',
      picture: 'https://media.licdn.example/dms/image/100_100/photo.jpg',
      email: 'ada@linkedin.example',
      email_verified: true,
      avatar_url: 'https://media.licdn.example/dms/image/100_100/photo.jpg',
      full_name: 'Ada Lovelace',
      provider_id: 'yrZCpj2Z12',
    },
  });
});

const slackUserInfo = {
  ok: true,
  sub: 'U0R7JM',
  'https://slack.com/user_id': 'U0R7JM',
  'https://slack.com/team_id': 'T0R7GR',
  email: 'krane@slack.example',
  email_verified: false,
  date_email_verified: 1622128723,
  name: 'krane',
  picture: 'https://secure.gravatar.example/avatar/krane-512.png',
  given_name: 'Bront',
  family_name: 'Labradoodle',
  locale: 'en-US',
  'https://slack.com/team_name': 'kraneflannel',
  'https://slack.com/team_domain': 'kraneflannel',
};

t.test('slack (deprecated): oauth.access, openid.connect.userInfo, the address counted verified; ok:false refused', async (t) => {
  let userInfo: Record<string, unknown> = slackUserInfo;
  const fake = await startProviderFake({
    'POST /api/oauth.access': (req) =>
      req.form.get('code') === 'revoked-code'
        ? { json: { ok: false, error: 'invalid_code' } } // Slack reports errors inside a 200
        : tokenEndpoint(
            { code: 'sl-code', credentials: 'body' },
            { ok: true, access_token: 'xoxp-sl-access', scope: 'identify,users:read', user_id: 'U0R7JM', team_id: 'T0R7GR' },
          )(req),
    'GET /api/openid.connect.userInfo': (req) => userEndpoint('xoxp-sl-access', userInfo)(req),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await slack.authorizationEndpoint(testRuntime(providerConfig())), 'https://slack.com/oauth/authorize');
  t.equal(await slack.authorizationEndpoint(rt), `${fake.url}/oauth/authorize`);
  t.strictSame(slack.defaultScopes, ['profile', 'email', 'openid']);
  const tokens = await slack.exchangeCode(rt, 'sl-code', undefined);
  const expectedClaims = {
    iss: `${fake.url}/api`,
    sub: 'U0R7JM',
    name: 'krane',
    picture: 'https://secure.gravatar.example/avatar/krane-512.png',
    custom_claims: { 'https://slack.com/team_id': 'T0R7GR' },
    avatar_url: 'https://secure.gravatar.example/avatar/krane-512.png',
    full_name: 'krane',
    provider_id: 'U0R7JM',
  };
  t.strictSame(await slack.fetchProfile(rt, tokens, noForm), {
    subject: 'U0R7JM',
    emails: [{ email: 'krane@slack.example', verified: true, primary: true }],
    claims: expectedClaims,
  });

  await t.rejects(
    slack.exchangeCode(rt, 'revoked-code', undefined),
    { name: 'ProviderError', message: /invalid_code/ },
    'ok:false in a 200',
  );
  userInfo = { ok: false, error: 'invalid_auth' };
  await t.rejects(slack.fetchProfile(rt, tokens, noForm), ProviderError, 'an error body is not a person');
});

t.test('slack_oidc: openid.connect.token, userInfo decides email_verified', async (t) => {
  let userInfo: Record<string, unknown> = slackUserInfo;
  const fake = await startProviderFake({
    'POST /api/openid.connect.token': tokenEndpoint(
      { code: 'so-code', credentials: 'body' },
      { ok: true, access_token: 'xoxp-so-access', token_type: 'Bearer', id_token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln' },
    ),
    'GET /api/openid.connect.userInfo': (req) => userEndpoint('xoxp-so-access', userInfo)(req),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await slackOidc.authorizationEndpoint(testRuntime(providerConfig())), 'https://slack.com/openid/connect/authorize');
  t.equal(await slackOidc.authorizationEndpoint(rt), `${fake.url}/openid/connect/authorize`);
  t.equal(slackOidc.name, 'slack_oidc');
  t.strictSame(slackOidc.defaultScopes, ['profile', 'email', 'openid']);
  const tokens = await slackOidc.exchangeCode(rt, 'so-code', undefined);
  t.match(tokens, { accessToken: 'xoxp-so-access', idToken: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln', refreshToken: '' });
  const unverified = await slackOidc.fetchProfile(rt, tokens, noForm);
  t.strictSame(unverified, {
    subject: 'U0R7JM',
    emails: [{ email: 'krane@slack.example', verified: false, primary: true }],
    claims: {
      iss: `${fake.url}/api`,
      sub: 'U0R7JM',
      name: 'krane',
      picture: 'https://secure.gravatar.example/avatar/krane-512.png',
      custom_claims: { 'https://slack.com/team_id': 'T0R7GR' },
      avatar_url: 'https://secure.gravatar.example/avatar/krane-512.png',
      full_name: 'krane',
      provider_id: 'U0R7JM',
    },
  });
  userInfo = { ...slackUserInfo, email_verified: true };
  t.strictSame((await slackOidc.fetchProfile(rt, tokens, noForm)).emails, [
    { email: 'krane@slack.example', verified: true, primary: true },
  ]);
});

t.test('zoom: Basic credentials, /v2/users/me; an unconfirmed email login is not verified', async (t) => {
  let user: Record<string, unknown> = {
    id: 'KDcuGIm1QgePTO8WbOqwIQ',
    first_name: 'Jill',
    last_name: 'Chill',
    display_name: 'Jill Chill',
    email: 'jchill@zoom.example',
    type: 1,
    role_name: 'Owner',
    pmi: 3542471135,
    timezone: 'Asia/Shanghai',
    verified: 1,
    dept: '',
    created_at: '2019-06-01T07:58:03Z',
    pic_url: 'https://zoom.example/p/KDcuGIm1QgePTO8WbOqwIQ/photo.jpg',
    account_id: 'q6gBJVO5TzexKYTb_I2rpg',
    language: 'en-US',
    status: 'active',
    login_type: 100,
  };
  const fake = await startProviderFake({
    'POST /oauth/token': tokenEndpoint(
      { code: 'zm-code', credentials: 'basic' },
      { access_token: 'zm-access', token_type: 'bearer', refresh_token: 'zm-refresh', expires_in: 3599, scope: 'user:read' },
    ),
    'GET /v2/users/me': (req) => userEndpoint('zm-access', user)(req),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));

  t.equal(await zoom.authorizationEndpoint(testRuntime(providerConfig())), 'https://zoom.us/oauth/authorize');
  t.equal(await zoom.authorizationEndpoint(rt), `${fake.url}/oauth/authorize`);
  t.strictSame(zoom.defaultScopes, []);
  t.strictSame(zoom.scopesFor?.('meeting:read'), [], 'requested scopes are not asked for, as the original');
  const tokens = await zoom.exchangeCode(rt, 'zm-code', undefined);
  t.strictSame(await zoom.fetchProfile(rt, tokens, noForm), {
    subject: 'KDcuGIm1QgePTO8WbOqwIQ',
    emails: [{ email: 'jchill@zoom.example', verified: true, primary: true }],
    claims: {
      iss: `${fake.url}/v2`,
      sub: 'KDcuGIm1QgePTO8WbOqwIQ',
      name: 'Jill Chill',
      picture: 'https://zoom.example/p/KDcuGIm1QgePTO8WbOqwIQ/photo.jpg',
      avatar_url: 'https://zoom.example/p/KDcuGIm1QgePTO8WbOqwIQ/photo.jpg',
      full_name: 'Jill Chill',
      provider_id: 'KDcuGIm1QgePTO8WbOqwIQ',
    },
  });
  user = { ...user, verified: 0 };
  t.equal((await zoom.fetchProfile(rt, tokens, noForm)).emails[0].verified, false, 'email login (100) never confirmed');
  user = { ...user, login_type: 1 };
  t.equal(
    (await zoom.fetchProfile(rt, tokens, noForm)).emails[0].verified,
    true,
    'another login type: vouched for by its identity provider',
  );
});

t.test(
  'workos: workos_provider forwarded as provider, connection/organization passed through, profile from the token answer',
  async (t) => {
    const fake = await startProviderFake({
      'POST /sso/token': tokenEndpoint(
        { code: 'wo-code', credentials: 'body' },
        {
          access_token: '01DMEK0J53CVMC32CK5SE0KZ8Q',
          profile: {
            object: 'profile',
            id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
            connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
            connection_type: 'OktaSAML',
            organization_id: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
            email: 'todd@workos.example',
            first_name: 'Todd',
            last_name: 'Rundgren',
            idp_id: '00u1a0ufowBJlzPlk357',
            role: { slug: 'admin' },
            raw_attributes: {},
          },
        },
      ),
    });
    t.teardown(fake.close);
    const rt = testRuntime(providerConfig({ url: fake.url }));

    t.equal(await workos.authorizationEndpoint(testRuntime(providerConfig())), 'https://api.workos.com/sso/authorize');
    t.equal(await workos.authorizationEndpoint(rt), `${fake.url}/sso/authorize`);
    t.strictSame(workos.defaultScopes, []);
    t.strictSame(workos.scopesFor?.('profile'), [], 'requested scopes are not asked for, as the original');
    const query = new URLSearchParams({
      provider: 'workos',
      workos_provider: 'GoogleOAuth',
      connection: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
      organization: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
      redirect_to: 'https://app.example/welcome',
    });
    t.strictSame(workos.authorizationParams?.(rt, query), {
      connection: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
      organization: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY',
      provider: 'GoogleOAuth',
    });
    t.strictSame(workos.authorizationParams?.(rt, new URLSearchParams('provider=workos')), {}, 'nothing to forward');

    const tokens = await workos.exchangeCode(rt, 'wo-code', undefined);
    t.strictSame(await workos.fetchProfile(rt, tokens, noForm), {
      subject: 'prof_01DMC79VCBZ0NY2099737PSVF1',
      emails: [{ email: 'todd@workos.example', verified: true, primary: true }],
      claims: {
        iss: fake.url,
        sub: 'prof_01DMC79VCBZ0NY2099737PSVF1',
        name: 'Todd Rundgren',
        custom_claims: { connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5', organization_id: 'org_01EHWNCE74X7JSDV0X3SZ3KJNY' },
        full_name: 'Todd Rundgren',
        provider_id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
      },
    });
    t.equal(fake.requests.length, 1, 'no user API call: the profile came with the token');
    await t.rejects(
      workos.fetchProfile(rt, { ...tokens, response: { access_token: 'x' } }, noForm),
      ProviderError,
      'a token answer without a profile',
    );
  },
);
