// EXTERNAL_OIDC_PROVIDER_CACHE_TTL (docs/oauth.md#discovery-documents): an OIDC issuer's discovery document
// is used for that long before it is fetched again (an hour by default), and, as in the original, when a
// fetch fails the last document stays in use, so an outage of the issuer's discovery endpoint does not stop
// its sign-ins. Before any document was fetched, the failure is the request's. Shown through the id_token
// grant of a listed issuer (EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS), which reads the issuer's keys from its
// discovery document; the issuer is a small OIDC-format server that counts the documents it serves.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { mobileIdToken, startOAuth2Server } from './helpers/oauth2-server.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProviderRuntime } from '../dist/server/providers/runtime.js';

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
  const token = await mobileIdToken(idp, idp.base, sub, { nonce: createHash('sha256').update(nonce).digest('hex') });
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

t.test(
  'the cache is bounded: a client naming issuer after issuer evicts the least recently used, never grows it without end',
  async (t) => {
    // Any Microsoft tenant may name itself in an Azure id_token's issuer, so the issuers cached are the
    // client's to choose. Here an issuer for every path, each counted.
    const served = new Map<string, number>();
    const issuers = http.createServer((req, res) => {
      const tenant = (req.url ?? '').split('/')[1];
      served.set(tenant, (served.get(tenant) ?? 0) + 1);
      const base = `http://127.0.0.1:${(issuers.address() as AddressInfo).port}/${tenant}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: base, authorization_endpoint: `${base}/a`, token_endpoint: `${base}/t`, jwks_uri: `${base}/k` }));
    });
    await new Promise<void>((resolve) => issuers.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => issuers.close(() => resolve())));
    const rt = createProviderRuntime({} as never, { httpTimeoutSeconds: 5, oidcProviderCacheTtlSeconds: 3600 });
    const issuer = (n: number) => `http://127.0.0.1:${(issuers.address() as AddressInfo).port}/tenant-${n}`;

    await rt.discover(issuer(0));
    await rt.discover(issuer(1));
    for (let n = 2; n <= 256; n++) {
      await rt.discover(issuer(n));
      if (n === 100) await rt.discover(issuer(1)); // used again: it is not the least recent any more
    }
    t.equal(served.get('tenant-1'), 1, 'a document used recently stays');
    await rt.discover(issuer(1));
    t.equal(served.get('tenant-1'), 1, 'and is served from the cache');
    await rt.discover(issuer(0));
    t.equal(served.get('tenant-0'), 2, 'the least recently used one was dropped, and is fetched again');
    await rt.discover(issuer(256));
    t.equal(served.get('tenant-256'), 1, 'the newest is still cached');
  },
);
