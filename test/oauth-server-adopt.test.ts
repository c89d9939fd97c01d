// Adopting a GoTrue database that ran the OAuth 2.1 server (docs/adopting-gotrue.md#oauth-server-clients-and-consents):
// its clients keep their client_id and secret, its users' consents their grants, and the original's
// tables are dropped once moved; the signed-in user then lists the grant through @supabase/auth-js.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { ALICE, createOriginalDatabase, withClient } from './helpers/gotrue-db.js';
import { authClient } from './helpers/auth-client.js';
import { basic, oauthServerEnv, tokenRequest } from './helpers/oauth-server.js';

const CLIENT = { id: '55555555-5555-4555-8555-555555555555', secret: 'adopted-client-secret' };
const PUBLIC_CLIENT = '66666666-6666-4666-8666-666666666666';

/** The original's OAuth server tables as its migrations leave them (enum types included) and a few rows. */
const originalOAuthServer = `
  create type auth.oauth_registration_type as enum ('dynamic', 'manual');
  create type auth.oauth_client_type as enum ('public', 'confidential');
  create type auth.oauth_authorization_status as enum ('pending', 'approved', 'denied', 'expired');
  create table auth.oauth_clients (
    id uuid primary key, client_secret_hash text, registration_type auth.oauth_registration_type not null,
    redirect_uris text not null, grant_types text not null, client_name text, client_uri text, logo_uri text,
    created_at timestamptz not null default now(), updated_at timestamptz not null default now(), deleted_at timestamptz,
    client_type auth.oauth_client_type not null default 'confidential', token_endpoint_auth_method text);
  create table auth.oauth_authorizations (
    id uuid primary key, authorization_id text not null unique, client_id uuid not null references auth.oauth_clients (id) on delete cascade,
    user_id uuid references auth.users (id) on delete cascade, redirect_uri text not null, scope text not null, state text,
    resource text, code_challenge text, code_challenge_method text, response_type text not null default 'code',
    status auth.oauth_authorization_status not null default 'pending', authorization_code text unique,
    created_at timestamptz not null default now(), expires_at timestamptz not null default now() + interval '3 minutes',
    approved_at timestamptz, nonce text);
  create table auth.oauth_consents (
    id uuid primary key, user_id uuid not null references auth.users (id) on delete cascade,
    client_id uuid not null references auth.oauth_clients (id) on delete cascade, scopes text not null,
    granted_at timestamptz not null default now(), revoked_at timestamptz, unique (user_id, client_id));
  insert into auth.oauth_clients (id, client_secret_hash, registration_type, redirect_uris, grant_types, client_name, client_type, token_endpoint_auth_method)
  values ('${CLIENT.id}', '${createHash('sha256').update(CLIENT.secret).digest('base64url')}', 'manual',
          'https://app.example/cb,http://localhost:4000/cb', 'authorization_code,refresh_token', 'Adopted app', 'confidential', null),
         ('${PUBLIC_CLIENT}', null, 'dynamic', 'myapp://cb', 'authorization_code', null, 'public', null);
  insert into auth.oauth_consents (id, user_id, client_id, scopes)
  values ('77777777-7777-4777-8777-777777777777', '${ALICE.id}', '${CLIENT.id}', 'openid email');
  insert into auth.oauth_authorizations (id, authorization_id, client_id, user_id, redirect_uri, scope, status, authorization_code)
  values ('88888888-8888-4888-8888-888888888888', 'inflight', '${CLIENT.id}', '${ALICE.id}', 'https://app.example/cb', 'email', 'approved', 'plain-code');
`;

t.test('the original clients and consents are moved, the in-flight request is not', async (t) => {
  const original = await createOriginalDatabase((c) => c.query(originalOAuthServer));
  t.teardown(() => original.drop());
  // the service's first start adopts the database
  const api = await startTestService({ ...oauthServerEnv(), DATABASE_URL: original.url, AUTH_SITE_URL: 'http://localhost:3000' });
  t.teardown(() => api.stop());
  const logged = api.logs().map((l) => String(l.msg));
  t.ok(
    logged.some((m) => m.includes('OAuth server clients copied: 2 rows')),
    'the adoption says what it moved',
  );
  t.ok(logged.some((m) => m.includes('OAuth server consents copied: 1 rows')));
  const state = await withClient(original.url, async (c) => ({
    clients: (
      await c.query(
        `select id, client_type, token_endpoint_auth_method, registration_type, redirect_uris from auth.oauth_clients order by id`,
      )
    ).rows,
    consents: (await c.query('select user_id, client_id, scopes from auth.oauth_consents')).rows,
    authorizations: (await c.query('select count(*)::int as n from auth.oauth_authorizations')).rows[0].n,
    leftovers: (await c.query(`select tablename from pg_tables where schemaname = 'auth' and tablename like 'gotrue_oauth_c%s'`)).rows,
  }));
  t.strictSame(state.clients, [
    {
      id: CLIENT.id,
      client_type: 'confidential',
      token_endpoint_auth_method: 'client_secret_basic',
      registration_type: 'manual',
      redirect_uris: 'https://app.example/cb,http://localhost:4000/cb',
    },
    {
      id: PUBLIC_CLIENT,
      client_type: 'public',
      token_endpoint_auth_method: 'none',
      registration_type: 'dynamic',
      redirect_uris: 'myapp://cb',
    },
  ]);
  t.strictSame(state.consents, [{ user_id: ALICE.id, client_id: CLIENT.id, scopes: 'openid email' }]);
  t.equal(state.authorizations, 0, 'an authorization in flight is not carried over');
  t.strictSame(state.leftovers, [], 'the sources are dropped');

  const noCode = await tokenRequest(api, { grant_type: 'authorization_code', code: 'plain-code' }, basic(CLIENT.id, CLIENT.secret));
  t.strictSame(
    noCode,
    { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid authorization code' } },
    'the adopted secret authenticates the client; the old code is gone',
  );
  const wrong = await tokenRequest(api, { grant_type: 'authorization_code', code: 'x' }, basic(CLIENT.id, 'not-it'));
  t.equal(wrong.body.msg, 'invalid client credentials');

  const alice = authClient(api.url);
  const signedIn = await alice.signInWithPassword({ email: ALICE.email, password: ALICE.password });
  t.equal(signedIn.error, null);
  const grants = await alice.oauth.listGrants();
  t.strictSame(
    grants.data!.map((g) => [g.client, g.scopes]),
    [[{ id: CLIENT.id, name: 'Adopted app' }, ['openid', 'email']]],
  );
});
