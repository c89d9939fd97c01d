// Adopting the original's custom OAuth providers (docs/adopting-gotrue.md#custom-oauth-providers): a
// database built with the original's schema, plus its custom_oauth_providers table in an older shape
// (before custom_claims_allowlist) holding an OIDC provider with its secret in clear and an OAuth2 provider
// whose secret the original sealed, and a user who signed in with one of them. After adoption the rows are
// ours (ids kept, the clear secret sealed, the source dropped), the service lists them, and the user signs
// in again through each provider to the same account.
import t from 'tap';
import { migrate } from '../dist/db/migrate.js';
import { secretBox } from '../dist/server/mfa/encryption.js';
import { JWT_SECRET, startTestService } from './helpers/server.js';
import { ALICE, ORIGINAL_KEY, createOriginalDatabase, sealLikeOriginal } from './helpers/gotrue-db.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf } from './helpers/oauth.js';

const idp = await startOidcProvider({ clientId: 'legacy-client' });
const plain = await startOAuth2Server();
t.teardown(async () => {
  await Promise.all([idp.stop(), plain.stop()]);
});

const OIDC_ID = 'c1c1c1c1-c1c1-4c1c-8c1c-c1c1c1c1c1c1';
const OAUTH2_ID = 'c2c2c2c2-c2c2-4c2c-8c2c-c2c2c2c2c2c2';
const box = () =>
  secretBox({
    jwt: { secret: JWT_SECRET },
    security: { dbEncryption: { encrypt: false, encryptionKeyId: '', encryptionKey: '', decryptionKeys: {} } },
  } as any);
const sealSecret = (rowId: string, stored: string) => box().sealIfClear(rowId, stored);

// The original's table in the shape of its first migration (no custom_claims_allowlist). Its https-only
// checks are left out so the rows can point at the test's local providers.
const ORIGINAL_TABLE = `
  create table auth.custom_oauth_providers (
    id uuid primary key default gen_random_uuid(), provider_type text not null, identifier text not null unique,
    name text not null, client_id text not null, client_secret text not null, acceptable_client_ids text[] not null default '{}',
    scopes text[] not null default '{}', pkce_enabled boolean not null default true, attribute_mapping jsonb not null default '{}',
    authorization_params jsonb not null default '{}', enabled boolean not null default true,
    email_optional boolean not null default false, issuer text, discovery_url text, skip_nonce_check boolean not null default false,
    cached_discovery jsonb, discovery_cached_at timestamptz, authorization_url text, token_url text, userinfo_url text, jwks_uri text,
    created_at timestamptz not null default now(), updated_at timestamptz not null default now())`;

const original = await createOriginalDatabase(async (c) => {
  await c.query(ORIGINAL_TABLE);
  await c.query(
    `insert into auth.custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret, scopes, issuer,
                                              attribute_mapping, created_at)
     values ($1, 'oidc', 'custom:legacy', 'Legacy IdP', $2, $3, '{openid,email,profile}', $4, '{"nickname":"name"}', now() - interval '30 days')`,
    [OIDC_ID, idp.clientId, idp.clientSecret, idp.issuer],
  );
  await c.query(
    `insert into auth.custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret, scopes, pkce_enabled,
                                              authorization_url, token_url, userinfo_url)
     values ($1, 'oauth2', 'custom:plain-legacy', 'Plain', $2, $3, '{profile}', false, $4, $5, $6)`,
    [
      OAUTH2_ID,
      plain.clientId,
      sealLikeOriginal(OAUTH2_ID, plain.clientSecret),
      `${plain.base}/oauth/authorize`,
      `${plain.base}/oauth/token`,
      `${plain.base}/api/me`,
    ],
  );
  await c.query(
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ('alice-legacy', $1, $2, 'custom:legacy', now(), now(), now())`,
    [ALICE.id, { sub: 'alice-legacy', email: ALICE.email, email_verified: true }],
  );
});
t.teardown(() => original.drop());

t.test('adoption copies the rows, seals the clear secret, keeps the sealed one, drops the source', async (t) => {
  const lines: string[] = [];
  const result = await migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret });
  t.equal(result.adopted, true);
  for (const line of [
    'custom OAuth providers copied: 2 rows',
    'custom OAuth client secrets sealed: 1 rows',
    'moved into ours and dropped: gotrue_custom_oauth_providers',
  ]) {
    t.ok(lines.includes(line), line);
  }
  const { rows } = await original.query(
    'select id, identifier, client_secret, custom_claims_allowlist, attribute_mapping from auth.custom_oauth_providers order by identifier',
  );
  t.match(rows, [
    { id: OIDC_ID, identifier: 'custom:legacy', custom_claims_allowlist: [], attribute_mapping: { nickname: 'name' } },
    { id: OAUTH2_ID, identifier: 'custom:plain-legacy', custom_claims_allowlist: [] },
  ]);
  t.not(rows[0].client_secret, idp.clientSecret, 'no secret left in clear');
  t.equal(box().open(OIDC_ID, rows[0].client_secret).value, idp.clientSecret);
  t.match(JSON.parse(rows[1].client_secret), { key_id: ORIGINAL_KEY.id }, "the original's envelope is kept");
  t.notOk((await original.query(`select to_regclass('auth.gotrue_custom_oauth_providers') as r`)).rows[0].r);
  const again: string[] = [];
  await migrate(original.url, 'auth', (line: string) => again.push(line), { sealSecret });
  t.strictSame(again, [], 'the next start has nothing to do');
});

t.test('the service serves the adopted providers; their users sign in to the same accounts', async (t) => {
  const api = await startTestService({
    DATABASE_URL: original.url,
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
    AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
    // The original's key, so the secret it sealed opens.
    AUTH_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `${ORIGINAL_KEY.id}:${ORIGINAL_KEY.key}`,
  });
  t.teardown(() => api.stop());
  const list = await api.request('GET', '/admin/custom-providers', { token: await adminToken() });
  t.same(
    list.body.providers.map((p: { identifier: string }) => p.identifier),
    ['custom:plain-legacy', 'custom:legacy'],
  );

  idp.accounts.set('alice-legacy', { sub: 'alice-legacy', email: ALICE.email, email_verified: true, name: 'Alice A' });
  const start = await api.request('GET', '/authorize?provider=custom:legacy');
  t.equal(start.status, 302, start.text);
  const { location } = await callback(api, await idp.signIn(start.headers.get('location')!, 'alice-legacy'));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.id, ALICE.id, 'the identity made under the original signs in its user');
  const legacy = me.body.identities.find((i: { provider: string }) => i.provider === 'custom:legacy');
  t.match(legacy, { id: 'alice-legacy', identity_data: { nickname: 'Alice A' } }, 'refreshed with the mapped claims');

  plain.approveAs = { sub: 'p-1', email: 'pat@example.com', email_verified: true };
  const plainStart = await api.request('GET', '/authorize?provider=custom:plain-legacy');
  const approved = await fetch(plainStart.headers.get('location')!, { redirect: 'manual' });
  const back = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  t.ok(fragmentOf(back.location).access_token, 'the secret the original sealed opened with its key');
  t.equal(plain.tokenRequests.at(-1)?.get('client_secret'), plain.clientSecret);
});
