// Hostile input against every route in the table: wrong JSON types, nulls, huge and odd strings, broken
// JSON, with and without credentials. Every answer must be a JSON 4xx (or a success), never a 5xx.
import t from 'tap';
import { ROUTES } from '../dist/server/routes.js';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { inFlight } from './helpers/in-flight.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  // the OAuth 2.1 server's routes answer, not 404 (docs/oauth-server.md)
  AUTH_OAUTH_SERVER_ENABLED: 'true',
  AUTH_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
  AUTH_OAUTH_SERVER_AUTHORIZATION_PATH: '/consent',
});
t.teardown(() => api.stop());
const session = (await api.request('POST', '/signup', { body: { email: 'victim@example.com', password: 'secret99' } })).body;
const admin = await adminToken();

const FIELDS = [
  'email',
  'phone',
  'password',
  'data',
  'token',
  'token_hash',
  'type',
  'refresh_token',
  'auth_code',
  'code_verifier',
  'code_challenge',
  'code_challenge_method',
  'channel',
  'create_user',
  'nonce',
  'redirect_to',
  'user_metadata',
  'app_metadata',
  'ban_duration',
  'role',
  'email_confirm',
  'phone_confirm',
  'password_hash',
  'id',
  'new_email',
  'should_soft_delete',
  'scope',
  'redirect_uris',
  'grant_types',
  'client_type',
  'token_endpoint_auth_method',
  'client_name',
  'client_uri',
  'action',
  'client_id',
  'client_secret',
];
const VALUES: unknown[] = [
  null,
  0,
  -1,
  1e308,
  true,
  [],
  [1, 'a'],
  {},
  { nested: { deep: [null] } },
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000\uFFFF\uD800',
  '../../etc/passwd',
  "' or 1=1 --",
  '{{ .Token }}',
  'pkce_',
  'signup',
  '+',
  '1h',
  'none',
  'not-a-uuid',
];
const BROKEN = ['{', '[]', 'null', '"string"', '12', '{"email": "a@b.co",}', '\u0000'];

function* bodies(): Generator<string> {
  for (const raw of BROKEN) yield raw;
  for (const value of VALUES) yield JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, value])));
  for (const field of FIELDS) for (const value of VALUES) yield JSON.stringify({ [field]: value });
}

const pathOf = (route: string) => route.replace('{user_id}', session.user.id);
const QUERIES = [
  '',
  '?grant_type=password',
  '?grant_type=refresh_token',
  '?grant_type=pkce',
  '?type=signup&token=x',
  '?scope=weird',
  '?page=-1&per_page=abc',
  '?redirect_to=javascript:alert(1)',
  '?grant_type=%00',
  '?type=signup&token=%00',
  '?redirect_to=http://localhost:3000/%00',
  '?client_id=00000000-0000-4000-8000-000000000000&redirect_uri=%00',
  '?client_id=x&redirect_uri=https://evil.example&code_challenge=%00',
];

t.test('no 5xx, and errors are JSON with an error_code', async (t) => {
  const requests: Array<{ method: string; path: string; token: string | undefined; raw?: string }> = [];
  for (const route of ROUTES) {
    const add = (token: string | undefined, query: string, raw?: string) =>
      requests.push({ method: route.method, path: pathOf(route.path) + query, token, raw });
    for (const token of [undefined, 'garbage', session.access_token, admin]) for (const query of QUERIES) add(token, query);
    if (route.method === 'GET') continue;
    // Bodies go with the credentials that get a request past authentication on this route.
    const token = /^\/(admin|invite)/.test(route.path)
      ? admin
      : /^\/(user|logout|reauthenticate|oauth\/authorizations)/.test(route.path)
        ? session.access_token
        : undefined;
    const queries = route.path === '/token' ? ['?grant_type=password', '?grant_type=refresh_token', '?grant_type=pkce'] : [''];
    for (const query of queries) for (const raw of bodies()) add(token, query, raw);
  }
  const failures: string[] = [];
  const send = async ({ method, path, token, raw }: (typeof requests)[number]) => {
    const res = await api.request(method, path, { raw, token, headers: raw ? { 'content-type': 'application/json' } : {} });
    // POST /oauth/token refuses a grant with an RFC 6749 body {error, error_description}, as the original
    const oauthError = path.split('?')[0] === '/oauth/token' && typeof res.body?.error === 'string';
    const ok = res.status < 500 && (res.status < 400 || typeof res.body?.error_code === 'string' || oauthError);
    if (!ok)
      failures.push(
        `${method} ${path} token=${token ? token.slice(0, 6) : '-'} ${raw?.slice(0, 80)} → ${res.status} ${res.text.slice(0, 160)}`,
      );
  };
  await inFlight(8, requests, send);
  t.same(failures, [], `${requests.length} requests`);
  t.equal((await api.request('GET', '/health')).status, 200, 'still healthy');
});

t.test('a body nested deeper than the original decodes (10,000 levels): 400 bad_json, not a stack overflow 500', async (t) => {
  const nested = (levels: number, open = '{"a":', close = '}') => `${open.repeat(levels)}1${close.repeat(levels)}`;
  const victim = (await api.request('POST', '/signup', { body: { email: 'deep-victim@example.com', password: 'secret99' } })).body;
  const user = await api.request('POST', '/admin/users', { token: admin, body: { email: 'deep-admin@example.com' } });
  const routes: Array<[string, string, string | undefined, (inner: string) => string]> = [
    // Checked by the JSON reader for every body, not per field: here in a field the grant never reads.
    ['POST', '/token?grant_type=password', undefined, (data) => `{"email":"deep-victim@example.com","password":"secret99","x":${data}}`],
    ['POST', '/signup', undefined, (data) => `{"email":"deep-${crypto.randomUUID()}@example.com","password":"secret99","data":${data}}`],
    ['POST', '/otp', undefined, (data) => `{"email":"deep-${crypto.randomUUID()}@example.com","data":${data}}`],
    ['PUT', '/user', victim.access_token, (data) => `{"data":${data}}`],
    ['POST', '/admin/users', admin, (data) => `{"email":"deep-${crypto.randomUUID()}@example.com","user_metadata":${data}}`],
    ['PUT', `/admin/users/${user.body.id}`, admin, (data) => `{"app_metadata":${data}}`],
  ];
  const send = (method: string, path: string, token: string | undefined, raw: string) =>
    api.request(method, path, { token, raw, headers: { 'content-type': 'application/json' } });
  for (const [method, path, token, body] of routes) {
    // The body is the first level: a field's value may hold 9,999 more.
    const deepest = await send(method, path, token, body(nested(9_999)));
    t.equal(deepest.status, 200, `${method} ${path}: 10,000 levels ${deepest.text.slice(0, 120)}`);
    for (const [label, data, opener] of [
      ['objects', nested(10_000), '{'],
      ['arrays', `{"a":${nested(100_000, '[', ']')}}`, '['],
    ] as const) {
      const res = await send(method, path, token, body(data));
      // Only a refusal is compared whole: an accepted body echoes the metadata, too deep for the comparison.
      t.equal(res.status, 400, `${method} ${path}: ${label} ${res.text.slice(0, 120)}`);
      if (res.status === 400) {
        t.strictSame(res.body, {
          code: 400,
          error_code: 'bad_json',
          msg: `Could not parse request body as JSON: invalid character '${opener}' exceeded max depth`,
        });
      }
    }
  }
});
