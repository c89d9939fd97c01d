// The route table says who may call each route (src/server/routes.ts), and the dispatcher enforces it:
// every route names a guard; every user and admin route refuses a request without credentials with 401
// no_authorization, and every admin route refuses a valid user's token with 403 not_admin; the SCIM
// discovery routes are open. Every route with a body declares its schema.
import t from 'tap';
import { ROUTES } from '../dist/server/routes.js';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { spPrivateKey } from './helpers/saml-idp.js';

// Passkeys, SAML, the OAuth server and SCIM on, so that their routes reach their guards (switched off, they answer 404 first).
const api = await startTestService({
  AUTH_EXPERIMENTAL_SCIM_ENABLED: 'true',
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_PASSKEY_ENABLED: 'true',
  AUTH_OAUTH_SERVER_ENABLED: 'true',
  AUTH_WEBAUTHN_RP_ID: 'localhost',
  AUTH_WEBAUTHN_RP_DISPLAY_NAME: 'Portcullis',
  AUTH_WEBAUTHN_RP_ORIGINS: 'http://localhost:3000',
});
t.teardown(() => api.stop());

const GUARDS = ['none', 'user', 'user+identities', 'user-signing-out', 'admin'];
const NO_AUTHORIZATION = { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' };
const NOT_ADMIN = { code: 403, error_code: 'not_admin', msg: 'User not allowed' };
const SOME_ID = '00000000-0000-4000-8000-000000000001';

const pathOf = (path: string) => path.replace('{user_id}', SOME_ID);
const call = (route: { method: string; path: string }, token?: string) =>
  api.request(route.method, pathOf(route.path), { token, body: route.method === 'GET' ? undefined : {} });

t.test('every route declares one of the guards', async (t) => {
  for (const route of ROUTES) t.ok(GUARDS.includes(route.guard), `${route.method} ${route.path}: guard ${route.guard}`);
  t.ok(ROUTES.some((r) => r.guard === 'admin') && ROUTES.some((r) => r.guard === 'user'), 'both guards are in use');
  t.ok(
    ROUTES.some((r) => r.method === 'POST' && r.path === '/invite' && r.guard === 'admin'),
    '/invite is an admin route',
  );
});

// Routes whose body nobody reads, /token, whose body schema is its grant's (src/server/grants/), and
// POST /callback and POST /sso/saml/acs, whose body is a provider's form (application/x-www-form-urlencoded), not JSON, and
// POST /oauth/token, a form or JSON body read as the original reads both.
const WITHOUT_BODY_SCHEMA = [
  'POST /token',
  'POST /logout',
  'POST /sso/saml/acs',
  'POST /callback',
  'DELETE /user/identities/{identity_id}',
  'DELETE /admin/custom-providers/{identifier}',
  'POST /oauth/token',
];

t.test('every route that reads a body declares its schema in the table', async (t) => {
  for (const route of ROUTES.filter((r) => r.method !== 'GET')) {
    const name = `${route.method} ${route.path}`;
    t.equal(typeof route.body === 'function', !WITHOUT_BODY_SCHEMA.includes(name), name);
  }
});

t.test('user and admin routes refuse a request without credentials', async (t) => {
  for (const route of ROUTES.filter((r) => r.guard !== 'none')) {
    const res = await call(route);
    t.strictSame([res.status, res.body], [401, NO_AUTHORIZATION], `${route.method} ${route.path}`);
  }
});

// The original guards its SCIM router with nothing but the feature switch: discovery documents are for anyone.
t.test('the SCIM discovery routes are open', async (t) => {
  const scim = ROUTES.filter((r) => r.path.startsWith('/scim/'));
  t.strictSame(
    scim.map((r) => `${r.method} ${r.path} ${r.guard}`),
    ['GET /scim/v2/ServiceProviderConfig none', 'GET /scim/v2/ResourceTypes none', 'GET /scim/v2/Schemas none'],
  );
  for (const route of scim) t.equal((await call(route)).status, 200, `${route.path} without credentials`);
});

t.test('admin routes refuse a valid user token', async (t) => {
  const session = await signUp(api);
  for (const route of ROUTES.filter((r) => r.guard === 'admin')) {
    const res = await call(route, session.access_token);
    t.strictSame([res.status, res.body], [403, NOT_ADMIN], `${route.method} ${route.path}`);
  }
  t.equal((await api.request('GET', '/user', { token: session.access_token })).status, 200, 'the token itself is valid');
});
