// An issuer's key set (JWKS) is fetched within INTERNAL_HTTP_TIMEOUT, its answer included, and read up to
// the cap every provider answer has (providers/key-set.ts). A key set endpoint that sent its headers and
// then stalled used to hold the thread's one pending fetch of it for good: every later id_token of that
// issuer waited on it, so the issuer stayed unusable after it recovered. A huge key set was read whole.
// The issuers are EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS served by a small server in front of the test issuer's keys.
import t from 'tap';
import http from 'node:http';
import type net from 'node:net';
import { startTestService } from './helpers/server.js';
import { mobileIdToken, startOAuth2Server } from './helpers/oauth2-server.js';

const idp = await startOAuth2Server();
const keys = await (await fetch(`${idp.base}/jwks`)).text();
let stallNext = true;
// /stalling: its first key set answer stops after the headers and a few bytes; later ones are whole.
// /huge: a valid key set padded past 1 MiB.
const issuerServer = http.createServer((req, res) => {
  const [, name, rest] = /^\/([a-z]+)(\/.*)$/.exec(req.url ?? '') ?? [];
  const issuer = `http://${req.headers.host}/${name}`;
  if (rest === '/.well-known/openid-configuration') {
    const doc = { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` };
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  }
  if (rest !== '/jwks') return res.writeHead(404).end();
  if (name === 'huge') {
    const padded = JSON.stringify({ ...JSON.parse(keys), padding: 'x'.repeat(2 * 1024 * 1024) });
    return res.writeHead(200, { 'content-type': 'application/json' }).end(padded);
  }
  if (!stallNext) return res.writeHead(200, { 'content-type': 'application/json' }).end(keys);
  stallNext = false;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"keys":[');
});
await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(issuerServer.address() as net.AddressInfo).port}`;

const api = await startTestService({
  AUTH_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: `${base}/stalling,${base}/huge`,
  AUTH_INTERNAL_HTTP_TIMEOUT: '1',
  AUTH_API_MAX_REQUEST_DURATION: '3',
  // One thread: each keeps its own key sets, and the second request must meet the first one's.
  AUTH_HTTP_WORKERS: '1',
});
t.teardown(async () => {
  await api.stop();
  issuerServer.closeAllConnections();
  issuerServer.close();
  await idp.stop();
});

const sign = (issuer: string, sub: string) => mobileIdToken(idp, issuer, sub);
const grant = async (issuer: string, sub: string) =>
  api.request('POST', '/token?grant_type=id_token', { body: { id_token: await sign(issuer, sub), issuer, client_id: 'mobile-app' } });
const bad = [400, { error: 'invalid request', error_description: 'Bad ID token' }];

t.test('a key set answer that stalls fails that sign-in alone: the next one fetches the keys again', async (t) => {
  const first = await grant(`${base}/stalling`, 'stall-1');
  t.same([first.status, first.body], bad, 'the stalled key set verifies nothing');
  const second = await grant(`${base}/stalling`, 'stall-2');
  t.equal(second.status, 200, second.text);
  t.equal(second.body.user?.email, 'stall-2@example.com');
});

t.test('a key set larger than a provider answer may be is refused', async (t) => {
  const res = await grant(`${base}/huge`, 'huge-1');
  t.same([res.status, res.body], bad);
  t.equal((await api.db.query(`select 1 from users where email = 'huge-1@example.com'`)).rowCount, 0, 'nobody signed in');
});
