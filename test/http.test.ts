// The HTTP core: health and settings bodies, 404/405 (with Allow), CORS, both error shapes, request ids in logs.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { preflight } from '../dist/server/http/cors.js';

const EXTERNAL_OFF = Object.fromEntries(
  [
    'anonymous_users',
    'apple',
    'azure',
    'bitbucket',
    'discord',
    'facebook',
    'figma',
    'fly',
    'github',
    'gitlab',
    'google',
    'kakao',
    'keycloak',
    'linkedin',
    'linkedin_oidc',
    'notion',
    'slack',
    'slack_oidc',
    'snapchat',
    'spotify',
    'twitch',
    'twitter',
    'workos',
    'zoom',
  ].map((name) => [name, false]),
);

const api = await startTestService({
  AUTH_REQUEST_ID_HEADER: 'X-Request-Id',
  AUTH_CORS_ALLOWED_HEADERS: 'X-Tenant, x-trace-id',
  AUTH_EXTERNAL_GITHUB_ENABLED: 'true',
  AUTH_EXTERNAL_GITHUB_CLIENT_ID: 'id',
  AUTH_EXTERNAL_GITHUB_SECRET: 's',
  AUTH_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost/callback',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
t.teardown(() => api.stop());

t.test("GET /health answers the original's body", async (t) => {
  const res = await api.request('GET', '/health');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.same(res.body, { version: '0.1.0', name: 'GoTrue', description: 'GoTrue is a user registration and authentication API' });
});

t.test("GET /settings has the spec's and the original's keys, one boolean per provider", async (t) => {
  const res = await api.request('GET', '/settings');
  t.equal(res.status, 200);
  t.strictSame(res.body, {
    external: { ...EXTERNAL_OFF, anonymous_users: true, github: true, email: true, phone: true },
    disable_signup: false,
    autoconfirm: false,
    mailer_autoconfirm: false,
    phone_autoconfirm: true,
    sms_provider: '',
    saml_enabled: false,
    saml_private_key_next_configured: false,
    passkeys_enabled: false,
  });
});

t.test('GET /.well-known/jwks.json publishes no symmetric key', async (t) => {
  const res = await api.request('GET', '/.well-known/jwks.json');
  t.equal(res.status, 200);
  t.strictSame(res.body, { keys: [] });
  t.equal(res.headers.get('cache-control'), 'public, max-age=600');
});

t.test('unknown route is a JSON 404, wrong method a JSON 405', async (t) => {
  const missing = await api.request('GET', '/no/such/route');
  t.equal(missing.status, 404);
  t.strictSame(missing.body, { code: 404, error_code: 'not_found', msg: 'Not Found' });
  t.equal(missing.headers.get('x-sb-error-code'), 'not_found');
  const wrong = await api.request('DELETE', '/settings');
  t.equal(wrong.status, 405);
  t.strictSame(wrong.body, { code: 405, error_code: 'method_not_allowed', msg: 'Method Not Allowed' });
  t.equal(wrong.headers.get('allow'), 'GET', 'a 405 names the methods the path serves, as the original');
  t.equal((await api.request('GET', '/user')).headers.get('allow'), null, 'other refusals carry no Allow');
  t.equal((await api.request('PATCH', '/user')).headers.get('allow'), 'GET, PUT');
});

t.test('X-Supabase-Api-Version 2024-01-01 selects the newer error shape and is echoed', async (t) => {
  const res = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': '2024-01-01' } });
  t.equal(res.status, 404);
  t.strictSame(res.body, { code: 'not_found', message: 'Not Found' });
  t.equal(res.headers.get('x-supabase-api-version'), '2024-01-01');
  const later = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': '2025-06-30' } });
  t.strictSame(later.body, { code: 'not_found', message: 'Not Found' }, 'any later date selects 2024-01-01');
  const older = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': '2023-12-31' } });
  t.strictSame(older.body, { code: 404, error_code: 'not_found', msg: 'Not Found' }, 'an earlier date is the initial shape');
  t.equal(older.headers.get('x-supabase-api-version'), null);
  const garbage = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': 'yesterday' } });
  t.strictSame(garbage.body, { code: 404, error_code: 'not_found', msg: 'Not Found' });
  // The original parses the date; a day that does not exist is no version, however late it looks.
  for (const noDay of ['2024-02-30', '2025-13-01', '9999-99-99', '2024-00-10']) {
    const res = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': noDay } });
    t.strictSame(res.body, { code: 404, error_code: 'not_found', msg: 'Not Found' }, noDay);
  }
  const leapDay = await api.request('GET', '/nowhere', { headers: { 'X-Supabase-Api-Version': '2024-02-29' } });
  t.strictSame(leapDay.body, { code: 'not_found', message: 'Not Found' }, 'a leap day is a day');
});

t.test('CORS: preflight answered, origin echoed with credentials, headers exposed', async (t) => {
  const pre = await api.request('OPTIONS', '/token?grant_type=password', {
    headers: {
      Origin: 'https://app.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type, authorization, x-supabase-api-version, x-client-info',
    },
  });
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), '*', "the original's wildcard, never the caller's origin echoed");
  t.equal(pre.headers.get('access-control-allow-credentials'), 'true');
  t.equal(pre.headers.get('access-control-allow-methods'), 'POST');
  t.equal(pre.headers.get('access-control-allow-headers'), 'content-type, authorization, x-supabase-api-version, x-client-info');
  t.match(pre.headers.get('vary'), /Origin/);

  const refused = await api.request('OPTIONS', '/token', {
    headers: {
      Origin: 'https://app.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'x-unknown',
    },
  });
  t.equal(refused.headers.get('access-control-allow-origin'), null, 'a header outside the allow list gets no grant');

  // CORS_ALLOWED_HEADERS adds to the list, in any case, as the original appends them to its own.
  const extra = await api.request('OPTIONS', '/token', {
    headers: {
      Origin: 'https://app.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type, x-tenant, X-Trace-Id',
    },
  });
  t.equal(extra.headers.get('access-control-allow-origin'), '*');
  t.equal(extra.headers.get('access-control-allow-headers'), 'content-type, x-tenant, x-trace-id');

  const simple = await api.request('GET', '/settings', { headers: { Origin: 'https://app.example' } });
  t.equal(simple.headers.get('access-control-allow-origin'), '*');
  t.equal(simple.headers.get('access-control-allow-credentials'), 'true');
  t.equal(simple.headers.get('access-control-expose-headers'), 'X-Total-Count, Link, X-Supabase-Api-Version, Retry-After');
  t.equal(simple.headers.get('vary'), 'Origin');
  const errored = await api.request('GET', '/missing', { headers: { Origin: 'https://app.example' } });
  t.equal(errored.headers.get('access-control-allow-origin'), '*', 'errors carry CORS headers too');

  // `*` among CORS_ALLOWED_HEADERS allows any header, as the original's CORS library reads it (the list read as configured).
  const wanted = {
    origin: 'https://app.example',
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type,traceparent',
  };
  t.equal(preflight('OPTIONS', wanted, ['X-Tenant'])?.headers['Access-Control-Allow-Origin'], undefined, 'a list without it');
  t.strictSame(preflight('OPTIONS', wanted, ['*'])?.headers['Access-Control-Allow-Headers'], 'content-type, traceparent', 'with it');

  // A preflight that names no Origin is answered as one (204, nothing allowed), not routed to a 405.
  const originless = await api.request('OPTIONS', '/token', { headers: { 'Access-Control-Request-Method': 'POST' } });
  t.equal(originless.status, 204);
  t.equal(originless.headers.get('access-control-allow-origin'), null);
  t.match(originless.headers.get('vary'), /Access-Control-Request-Method/);
});

t.test('the request id comes from REQUEST_ID_HEADER and reaches the request log; /health is not logged', async (t) => {
  await api.request('GET', '/settings', { headers: { 'X-Request-Id': 'trace-me-123' } });
  await api.request('GET', '/health', { headers: { 'X-Request-Id': 'health-probe' } });
  await api.request('GET', '/settings?token=secret-value&x=1');
  await api.stop();
  const lines = api.logs().filter((l) => l.msg === 'request completed');
  const line = lines.find((l) => l.request_id === 'trace-me-123');
  t.ok(line, 'logged with the inherited id');
  t.equal(line?.route, '/settings');
  t.equal(line?.status, 200);
  t.type(line?.duration_ms, 'number');
  t.notOk(
    lines.find((l) => l.request_id === 'health-probe'),
    '/health is quiet',
  );
  const masked = lines.find((l) => typeof l.query === 'string' && l.query.includes('x=1'));
  t.equal(masked?.query, 'token=[redacted]&x=1', 'credential query parameters are masked');
  t.notOk(JSON.stringify(lines).includes('secret-value'));
  const generated = lines.find((l) => l.request_id !== 'trace-me-123');
  t.match(generated?.request_id, /^[0-9a-f-]{36}$/, 'a request id is generated when the header is absent');
});

t.test('a quiet service writes its lines out without waiting for a full buffer or a stop', async (t) => {
  // Lines are buffered up to 4 KiB per thread; the periodic flush (log.ts) must still deliver a lone
  // request's line and the start-up lines while the service keeps running.
  const quiet = await startTestService({});
  t.teardown(() => quiet.stop());
  await quiet.request('GET', '/settings?probe=lone');
  const lone = () => quiet.logs().some((l) => l.query === 'probe=lone');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !lone()) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(lone(), 'the request line, before any stop');
  t.ok(
    quiet.logs().some((l) => l.msg === 'listening'),
    'the start-up lines too',
  );
});
