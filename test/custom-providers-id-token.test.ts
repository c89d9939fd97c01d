// The id_token a custom OIDC provider returns at /callback is verified before anyone is signed in
// (docs/custom-providers.md#signing-in): signature by a key of the issuer's JWKS with an algorithm its
// discovery document names (RS256 here; an ES256 key also in the JWKS must not pass), never HMAC or
// `none`; `iss` exactly the issuer; `aud` the client id or one of acceptable_client_ids; not expired.
// The provider is a small server in the OAuth 2.0 / OIDC wire format whose token answer carries an
// id_token the test makes, so forged ones can be handed over. Every refusal signs nobody in.
import t from 'tap';
import { SignJWT, generateKeyPair, type KeyLike } from 'jose';
import { startTestService } from './helpers/server.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf, queryOf } from './helpers/oauth.js';

const idp = await startOAuth2Server();
const api = await startTestService({
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
});
const token = await adminToken();
t.teardown(async () => {
  await api.stop();
  await idp.stop();
});

const created = await api.request('POST', '/admin/custom-providers', {
  token,
  body: {
    provider_type: 'oidc',
    identifier: 'custom:strict',
    name: 'Strict',
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    issuer: idp.base,
    pkce_enabled: false,
  },
});
if (created.status !== 201) throw new Error(created.text);

interface Forge {
  key?: KeyLike | Uint8Array;
  alg?: string;
  kid?: string;
  issuer?: string;
  audience?: string;
  expires?: string | number;
}

function mint(f: Forge = {}) {
  return (profile: Record<string, unknown>) =>
    new SignJWT(profile)
      .setProtectedHeader({ alg: f.alg ?? 'RS256', kid: f.kid ?? 'rs' })
      .setIssuer(f.issuer ?? idp.base)
      .setAudience(f.audience ?? idp.clientId)
      .setIssuedAt()
      .setExpirationTime(f.expires ?? '5m')
      .sign(f.key ?? idp.keys.rs);
}

async function signIn(sub: string, forge: Forge = {}) {
  idp.approveAs = { sub, email: `${sub}@example.com`, email_verified: true };
  idp.issueIdToken = mint(forge);
  const start = await api.request('GET', '/authorize?provider=custom:strict');
  if (start.status !== 302) throw new Error(start.text);
  const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  return (await callback(api, new URL(approved.headers.get('location')!).searchParams)).location;
}

const users = async () => (await api.db.query('select count(*)::int as n from users')).rows[0].n;

t.test('a token signed by the published RS256 key signs in, with its claims', async (t) => {
  const location = await signIn('good-1');
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'good-1@example.com');
  t.match(me.body.identities, [{ provider: 'custom:strict', id: 'good-1', identity_data: { iss: idp.base, sub: 'good-1' } }]);
});

t.test('forged, misdirected and expired tokens are refused, and nobody is signed in', async (t) => {
  const before = await users();
  const { privateKey: stranger } = await generateKeyPair('RS256');
  const cases: [string, Forge, RegExp][] = [
    [
      'an ES256 key of the JWKS, an algorithm the discovery document does not name',
      { alg: 'ES256', kid: 'es', key: idp.keys.es },
      /signature algorithm not allowed/,
    ],
    [
      'HS256 keyed with the client secret',
      { alg: 'HS256', key: new TextEncoder().encode(idp.clientSecret) },
      /signature algorithm not allowed/,
    ],
    ['a key the issuer never published', { key: stranger }, /signature verification failed/],
    ['another issuer', { issuer: 'https://evil.example.test' }, /unexpected issuer/],
    ['another audience', { audience: 'someone-else' }, /unacceptable audience/],
    ['expired', { expires: Math.floor(Date.now() / 1000) - 60 }, /token is expired/],
  ];
  for (const [name, forge, why] of cases) {
    const location = await signIn(`bad-${name.length}`, forge);
    const q = queryOf(location);
    t.match(q, { error: 'server_error', error_code: 'unexpected_failure' }, name);
    t.match(q.error_description, /^Error getting user profile from external provider: /, name);
    t.match(q.error_description, why, name);
    t.notOk(fragmentOf(location).access_token, `${name}: no session`);
  }
  t.equal(await users(), before, 'no user was created');
});

t.test('acceptable_client_ids: an audience of another registered client id is accepted once listed', async (t) => {
  const refused = queryOf(await signIn('multi-1', { audience: 'ios-client' }));
  t.match(refused.error_description, /unacceptable audience/);
  const updated = await api.request('PUT', '/admin/custom-providers/custom:strict', {
    token,
    body: { acceptable_client_ids: ['ios-client'] },
  });
  t.same(updated.body.acceptable_client_ids, ['ios-client']);
  const location = await signIn('multi-1', { audience: 'ios-client' });
  t.ok(fragmentOf(location).access_token, location.href);
});

t.test('without an id_token, the userinfo endpoint; an answer over 1 MiB is refused', async (t) => {
  idp.issueIdToken = undefined;
  idp.approveAs = { sub: 'info-1', email: 'info-1@example.com', email_verified: true };
  const start = await api.request('GET', '/authorize?provider=custom:strict');
  let approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  let { location } = await callback(api, new URL(approved.headers.get('location')!).searchParams);
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'info-1@example.com');

  idp.approveAs = { sub: 'info-2', email: 'info-2@example.com', padding: 'x'.repeat(1_100_000) };
  const again = await api.request('GET', '/authorize?provider=custom:strict');
  approved = await fetch(again.headers.get('location')!, { redirect: 'manual' });
  ({ location } = await callback(api, new URL(approved.headers.get('location')!).searchParams));
  t.match(queryOf(location), { error_code: 'unexpected_failure', error_description: /answered more than 1048576 bytes/ });
  t.equal((await api.db.query('select count(*)::int as n from users where email = $1', ['info-2@example.com'])).rows[0].n, 0);
});
