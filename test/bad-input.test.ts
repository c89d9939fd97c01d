// Hostile input against every route in the table: wrong JSON types, nulls, huge and odd strings, broken
// JSON, with and without credentials. Every answer must be a JSON 4xx (or a success), never a 5xx.
import t from 'tap';
import { ROUTES } from '../dist/server/routes.js';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
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
];

t.test('no 5xx, and errors are JSON with an error_code', async (t) => {
  let requests = 0;
  const failures: string[] = [];
  for (const route of ROUTES) {
    const send = async (token: string | undefined, query: string, raw?: string) => {
      requests++;
      const res = await api.request(route.method, pathOf(route.path) + query, {
        raw,
        token,
        headers: raw ? { 'content-type': 'application/json' } : {},
      });
      const ok = res.status < 500 && (res.status < 400 || typeof res.body?.error_code === 'string');
      if (!ok)
        failures.push(
          `${route.method} ${route.path}${query} token=${token ? token.slice(0, 6) : '-'} ${raw?.slice(0, 80)} → ${res.status} ${res.text.slice(0, 160)}`,
        );
    };
    for (const token of [undefined, 'garbage', session.access_token, admin]) for (const query of QUERIES) await send(token, query);
    if (route.method === 'GET') continue;
    // Bodies go with the credentials that get a request past authentication on this route.
    const token = /^\/(admin|invite)/.test(route.path)
      ? admin
      : /^\/(user|logout|reauthenticate)/.test(route.path)
        ? session.access_token
        : undefined;
    const queries = route.path === '/token' ? ['?grant_type=password', '?grant_type=refresh_token', '?grant_type=pkce'] : [''];
    for (const query of queries) for (const raw of bodies()) await send(token, query, raw);
  }
  t.same(failures, [], `${requests} requests`);
  t.equal((await api.request('GET', '/health')).status, 200, 'still healthy');
});
