// Hostile input that gets further than bad-input.test.ts's: each request starts from a body that would
// succeed (a sign-up, a factor's challenge with a real factor id, an admin update of a real user) and
// changes one to three of its fields, drops some, or adds others, with odd headers and queries on the
// way, eight requests in flight. The sequence is fixed by a seed (BAD_INPUT_SEED to try another), so a
// failure is replayed by running the file again. Every answer must be a success, or an error in one of the
// service's JSON shapes with a 4xx status; and the service must log no error while answering them.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { startSmsGatewayFake, twilioEnv } from './helpers/sms.js';
import { spPrivateKey } from './helpers/saml-idp.js';
import { PASSKEY_ENV } from './helpers/passkeys.js';
import { seeded } from './helpers/seeded.js';
import { inFlight } from './helpers/in-flight.js';
import { errorMessages } from './helpers/log.js';

const REQUESTS = 3000;
const IN_FLIGHT = 8;

const { random, one: pick } = seeded(Number(process.env.BAD_INPUT_SEED ?? 1));

const sms = await startSmsGatewayFake();
// Every feature that has routes is on, and the send limits are out of the way, so requests reach the
// handlers instead of stopping at a 404 or a 429.
const api = await startTestService({
  ...PASSKEY_ENV,
  AUTH_MAILER_AUTOCONFIRM: 'false',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  ...twilioEnv(sms.baseUrl),
  AUTH_SMS_TEST_OTP: '+15550001111:123456',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
  AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
  AUTH_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
  AUTH_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
  AUTH_OAUTH_SERVER_ENABLED: 'true',
  AUTH_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
  AUTH_OAUTH_SERVER_AUTHORIZATION_PATH: '/consent',
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_EXTERNAL_WEB3_SOLANA_ENABLED: 'true',
  AUTH_EXTERNAL_WEB3_ETHEREUM_ENABLED: 'true',
  AUTH_CUSTOM_OAUTH_ENABLED: 'true',
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'false',
  ...Object.fromEntries(
    ['EMAIL_SENT', 'SMS_SENT', 'VERIFY', 'TOKEN_REFRESH', 'OTP', 'ANONYMOUS_USERS', 'SSO', 'PASSKEY', 'OAUTH_DYNAMIC_CLIENT_REGISTER'].map(
      (limit) => [`AUTH_RATE_LIMIT_${limit}`, '100000'],
    ),
  ),
});
t.teardown(async () => {
  await api.stop();
  await sms.close();
});

const admin = await adminToken();
const VICTIM = { email: 'victim@example.com', password: 'secret99' };
await api.request('POST', '/admin/users', { token: admin, body: { ...VICTIM, email_confirm: true } });
const session = (await api.request('POST', '/token?grant_type=password', { body: VICTIM })).body;
const userId: string = session.user.id;
const enroll = (body: object) => api.request('POST', '/factors', { token: session.access_token, body });
const totpId: string = (await enroll({ factor_type: 'totp', friendly_name: 'app' })).body.id;
const phoneId: string = (await enroll({ factor_type: 'phone', phone: '+15550006666' })).body.id;
const NONE = '00000000-0000-4000-8000-000000000000';

/** Bodies that would be accepted, or nearly, per route. */
const SEEDS: Record<string, Array<Record<string, unknown>>> = {
  'POST /signup': [{ email: 'new@example.com', password: 'secret99', data: { a: 1 } }, { phone: '+15550002222', password: 'secret99' }, {}],
  'POST /token?grant_type=password': [VICTIM, { phone: '+15550001111', password: 'secret99' }],
  'POST /token?grant_type=refresh_token': [{ refresh_token: session.refresh_token }],
  'POST /token?grant_type=pkce': [{ auth_code: NONE, code_verifier: 'v'.repeat(50) }],
  'POST /token?grant_type=id_token': [{ provider: 'google', id_token: 'a.b.c', nonce: 'n' }],
  'POST /token?grant_type=web3': [{ chain: 'ethereum', message: 'm', signature: '0x00' }],
  'POST /otp': [
    { email: VICTIM.email, create_user: true },
    { phone: '+15550001111', channel: 'sms' },
  ],
  'POST /magiclink': [{ email: VICTIM.email }],
  'POST /recover': [{ email: VICTIM.email }],
  'POST /resend': [
    { type: 'signup', email: VICTIM.email },
    { type: 'sms', phone: '+15550001111' },
  ],
  'POST /verify': [
    { type: 'email', email: VICTIM.email, token: '123456' },
    { type: 'sms', phone: '+15550001111', token: '123456' },
    { type: 'signup', token_hash: 'abc' },
  ],
  'PUT /user': [{ email: 'other@example.com' }, { password: 'newpass99' }, { data: { x: 1 } }, { phone: '+15550003333' }],
  'POST /logout': [{}],
  'POST /invite': [{ email: 'invited@example.com', data: {} }],
  'POST /admin/users': [
    { email: 'made@example.com', password: 'secret99', email_confirm: true, user_metadata: {}, app_metadata: {}, ban_duration: '1h' },
    { phone: '+15550004444', phone_confirm: true },
  ],
  [`PUT /admin/users/${userId}`]: [
    { ban_duration: 'none', user_metadata: { x: 1 }, app_metadata: { provider: 'x' }, role: 'authenticated' },
  ],
  [`DELETE /admin/users/${NONE}`]: [{ should_soft_delete: true }],
  'POST /admin/generate_link': [
    { type: 'signup', email: 'linked@example.com', password: 'secret99' },
    { type: 'magiclink', email: VICTIM.email },
    { type: 'email_change_new', email: VICTIM.email, new_email: 'changed@example.com' },
  ],
  'POST /factors': [
    { factor_type: 'totp', friendly_name: 'f', issuer: 'x' },
    { factor_type: 'phone', phone: '+15550005555' },
    { factor_type: 'webauthn' },
  ],
  [`POST /factors/${totpId}/challenge`]: [{}],
  [`POST /factors/${phoneId}/challenge`]: [{ channel: 'sms' }, { channel: 'whatsapp' }],
  [`POST /factors/${totpId}/verify`]: [{ challenge_id: NONE, code: '123456' }],
  [`POST /factors/${phoneId}/verify`]: [{ challenge_id: NONE, code: '123456' }],
  [`DELETE /factors/${phoneId}`]: [{}],
  [`PUT /admin/users/${userId}/factors/${totpId}`]: [{ friendly_name: 'renamed' }],
  [`DELETE /admin/users/${userId}/factors/${phoneId}`]: [{}],
  'POST /sso': [{ domain: 'example.com', redirect_to: 'http://localhost:3000', skip_http_redirect: true }, { provider_id: NONE }],
  'POST /admin/sso/providers': [{ type: 'saml', metadata_xml: '<x/>', domains: ['example.org'], attribute_mapping: { keys: {} } }],
  'POST /admin/custom-providers': [
    {
      provider_type: 'oidc',
      identifier: 'custom:acme',
      name: 'Acme',
      client_id: 'c',
      client_secret: 's',
      issuer: 'https://idp.example',
      scopes: ['openid'],
    },
  ],
  'POST /admin/oauth/clients': [{ client_name: 'c', redirect_uris: ['https://app.example/cb'], client_type: 'public' }],
  'POST /oauth/clients/register': [{ client_name: 'c', redirect_uris: ['https://app.example/cb'] }],
  'POST /oauth/token': [
    { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://app.example/cb', client_id: NONE, code_verifier: 'v'.repeat(50) },
  ],
  'POST /passkeys/registration/options': [{}],
  'POST /passkeys/registration/verify': [{ challenge_id: NONE, credential: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }],
  'POST /passkeys/authentication/options': [{}],
  'POST /passkeys/authentication/verify': [{ challenge_id: NONE, credential: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }],
};
const GETS = [
  '/user',
  '/settings',
  '/authorize',
  '/callback',
  '/verify',
  '/admin/users',
  `/admin/users/${userId}`,
  `/admin/users/${userId}/factors`,
  '/admin/audit',
  '/admin/sso/providers',
  '/admin/custom-providers',
  '/admin/oauth/clients',
  '/passkeys',
  '/user/oauth/grants',
  '/oauth/authorize',
  '/reauthenticate',
  '/sso/saml/metadata',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/user/identities/authorize',
];
const QUERIES = [
  '',
  'redirect_to=http://localhost:3000/x',
  'provider=google',
  'type=signup&token=x&redirect_to=x',
  'page=2&per_page=1000000',
  'filter=%ff',
  'scopes=a%00b',
  'code_challenge=x&code_challenge_method=s256',
];
const FIELDS = [
  'email', 'phone', 'password', 'data', 'token', 'token_hash', 'type', 'refresh_token', 'auth_code', 'code_verifier',
  'code_challenge', 'code_challenge_method', 'channel', 'create_user', 'nonce', 'redirect_to', 'user_metadata',
  'app_metadata', 'ban_duration', 'role', 'email_confirm', 'phone_confirm', 'password_hash', 'id', 'new_email',
  'should_soft_delete', 'scope', 'redirect_uris', 'grant_types', 'client_type', 'token_endpoint_auth_method',
  'client_name', 'client_id', 'client_secret', 'factor_type', 'friendly_name', 'issuer', 'challenge_id', 'code',
  'provider', 'domain', 'provider_id', 'skip_http_redirect', 'gotrue_meta_security', 'message', 'signature', 'chain',
  'credential', 'metadata_url', 'metadata_xml', 'domains', 'attribute_mapping', 'identifier', 'scopes', 'current_password',
]; // prettier-ignore
const VALUES: unknown[] = [
  null, 0, -1, 1.5, 1e308, -1e308, true, false, [], [null], ['a', 1], {}, { a: { b: [1] } }, '', ' ', 'x'.repeat(3000),
  '\u0000', '\uD800', 'é', 'a@b', VICTIM.email, '+15550001111', '15550001111', '+1', 'pkce_x', NONE, userId, totpId,
  'not-a-uuid', 'https://evil.example/x', 'http://localhost:3000/cb', 'javascript:alert(1)', '123456', '0'.repeat(40),
  'signup', 'email', 'sms', 'phone_change', 'email_change', 'recovery', 'invite', 'magiclink', 'totp', 'phone',
  'webauthn', 'S256', 'plain', 'ethereum', 'solana', '__proto__', 'constructor', '1h', '876000h', '-5h', 'none', 'all',
  'whatsapp', { toString: 1 }, '2026-01-01T00:00:00Z', 1e20, '{{ .Token }}', 'a'.repeat(73), 'a\r\nb',
]; // prettier-ignore
const HEADERS = [
  'x-jwt-aud',
  'x-client-ip',
  'x-forwarded-for',
  'apikey',
  'referer',
  'origin',
  'accept-language',
  'x-supabase-api-version',
  'cookie',
  'user-agent',
  'x-request-id',
];
const HEADER_VALUES = [
  '',
  ' ',
  'x',
  'authenticated',
  '2024-01-01',
  '2099-99-99',
  '1.2.3.4',
  '::1',
  'not an ip',
  'http://localhost:3000/x',
  'https://evil.example',
  'a'.repeat(2000),
  'de-DE,de;q=0.9',
  '*;q=abc',
];

const anyValue = (): unknown => {
  const r = random();
  if (r < 0.8) return pick(VALUES);
  if (r < 0.9) return { [pick(FIELDS)]: pick(VALUES), [pick(FIELDS)]: pick(VALUES) };
  return [pick(VALUES), pick(VALUES)];
};

function mutated(seed: Record<string, unknown>): Record<string, unknown> {
  const body = { ...seed };
  for (let changes = 1 + Math.floor(random() * 3); changes > 0; changes--) {
    const keys = Object.keys(body);
    const r = random();
    if (r < 0.5 && keys.length) body[pick(keys)] = anyValue();
    else if (r < 0.7 && keys.length) delete body[pick(keys)];
    else body[pick(FIELDS)] = anyValue();
  }
  return body;
}

/** The next request, drawn from the seed: a GET with an odd query, or a mutated body. */
function draw() {
  const token = pick([undefined, 'user', 'admin', 'user', 'admin'] as const);
  const headers: Record<string, string> = {};
  for (let i = 0; i < 2; i++) if (random() < 0.3) headers[pick(HEADERS)] = pick(HEADER_VALUES);
  const query = pick(QUERIES);
  if (random() < 0.15) return { method: 'GET', path: pick(GETS) + (query && `?${query}`), token, headers, body: undefined };
  const [route, seeds] = pick(Object.entries(SEEDS));
  const [method, path] = route.split(' ') as [string, string];
  const joined = query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path;
  return { method, path: joined, token, headers, body: mutated(pick(seeds)) };
}

t.test('no 5xx and no error logged, from bodies that would otherwise succeed', async (t) => {
  const failures: string[] = [];
  const requests = Array.from({ length: REQUESTS }, draw);
  const send = async ({ method, path, token, headers, body }: ReturnType<typeof draw>) => {
    const bearer = token === 'admin' ? admin : token === 'user' ? session.access_token : undefined;
    const res = await api.request(method, path, { token: bearer, headers, body });
    // The error shapes: {code, error_code, msg}; {code, message} for a client that sent
    // X-Supabase-Api-Version; RFC 6749's {error, error_description} on /token's id_token grant and POST /oauth/token.
    const shaped =
      typeof res.body?.error_code === 'string' ||
      (typeof res.body?.code === 'string' && typeof res.body?.message === 'string') ||
      typeof res.body?.error === 'string';
    if (res.status >= 500 || (res.status >= 400 && !shaped)) {
      failures.push(
        `${method} ${path} ${token ?? '-'} ${JSON.stringify(headers)} ${JSON.stringify(body)?.slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}`,
      );
    }
    // A mutated POST /logout or PUT /user may end the victim's session; a new one keeps the routes
    // behind it reachable.
    if (res.body?.error_code === 'session_not_found') {
      const again = await api.request('POST', '/token?grant_type=password', { body: VICTIM });
      if (again.status === 200) Object.assign(session, again.body);
    }
  };
  await inFlight(IN_FLIGHT, requests, send);
  t.same(failures, [], `${REQUESTS} requests`);
  t.equal((await api.request('GET', '/health')).status, 200, 'still healthy');
  t.same(errorMessages(api.logs()), [], 'no error logged');
});
