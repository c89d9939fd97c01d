// EXTERNAL_OIDC_PROVIDER_CACHE_TTL (docs/oauth.md#discovery-documents): an OIDC issuer's discovery document
// is used for that long before it is fetched again (an hour by default), and, as in the original, when a
// fetch fails the last document stays in use, so an outage of the issuer's discovery endpoint does not stop
// its sign-ins. Before any document was fetched, the failure is the request's. Shown through the id_token
// grant of a listed issuer (EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS), which reads the issuer's keys from its
// discovery document; the issuer is a small OIDC-format server that counts the documents it serves.
import t from 'tap';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { startTestService } from './helpers/server.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';

const idp = await startOAuth2Server();
const everyTime = await startTestService({ AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: idp.base, AUTH_EXTERNAL_OIDC_PROVIDER_CACHE_TTL: '0' });
const byDefault = await startTestService({ AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: idp.base });
t.teardown(async () => {
  await everyTime.stop();
  await byDefault.stop();
  await idp.stop();
});

const nonce = 'raw-nonce-0123456789';
let subjects = 0;
async function grant(api: typeof everyTime) {
  const sub = `discovery-${++subjects}`;
  const token = await new SignJWT({
    sub,
    email: `${sub}@example.com`,
    email_verified: true,
    nonce: createHash('sha256').update(nonce).digest('hex'),
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'rs' })
    .setIssuer(idp.base)
    .setAudience('mobile-app')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(idp.keys.rs);
  return api.request('POST', '/token?grant_type=id_token', { body: { id_token: token, issuer: idp.base, client_id: 'mobile-app', nonce } });
}
const users = async (api: typeof everyTime) => (await api.db.query('select count(*)::int as n from users')).rows[0].n;

t.test('no document yet and the issuer down: the sign-in fails and nobody is created', async (t) => {
  idp.discoveryDown = true;
  const before = idp.discoveryRequests;
  const res = await grant(everyTime);
  t.same([res.status, res.body], [400, { error: 'invalid request', error_description: 'Bad ID token' }], 'as any unverifiable token');
  t.equal(idp.discoveryRequests, before + 1, 'the document was asked for');
  t.equal(await users(everyTime), 0);
  idp.discoveryDown = false;
});

t.test('TTL 0: each sign-in fetches the document again; while the issuer is down the last one is used', async (t) => {
  const start = idp.discoveryRequests;
  t.equal((await grant(everyTime)).status, 200);
  t.equal((await grant(everyTime)).status, 200);
  t.equal(idp.discoveryRequests, start + 2, 'one fetch per sign-in');

  idp.discoveryDown = true;
  const down = await grant(everyTime);
  t.equal(down.status, 200, `the last document serves while the issuer is down: ${down.text}`);
  t.equal(idp.discoveryRequests, start + 3, 'it was still asked for');
  idp.discoveryDown = false;
  t.equal(await users(everyTime), 3);
});

t.test('the default, an hour: the document fetched once serves every sign-in after it', async (t) => {
  const start = idp.discoveryRequests;
  for (let i = 0; i < 3; i++) t.equal((await grant(byDefault)).status, 200);
  t.equal(idp.discoveryRequests, start + 1, 'one fetch for three sign-ins');
  idp.discoveryDown = true;
  t.equal((await grant(byDefault)).status, 200, 'and the issuer is not asked again within the hour');
  t.equal(idp.discoveryRequests, start + 1);
  idp.discoveryDown = false;
});
