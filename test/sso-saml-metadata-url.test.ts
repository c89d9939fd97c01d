// metadata_url: fetched at create (HTTPS only, bounded in time and size, non-200 refused with the original's
// message, an IdP slower than the request's deadline refused before it) and fetched again at the ACS once
// stale, so an IdP that rotated its signing key is followed.
// The IdP's metadata is served over HTTPS by a local server with a certificate made here; this test process
// (and so the service it starts) accepts that certificate through NODE_TLS_REJECT_UNAUTHORIZED, a switch
// of Node's, not of the service.
import t from 'tap';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, makeKeyPair, metadataCertificates, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const tls = makeKeyPair('127.0.0.1');
const rotatedKeys = makeKeyPair('Test IdP, rotated');
const idp = new TestIdp();
let served = idp.metadata();
let hits = 0;
const server = https.createServer({ key: tls.privateKeyPem, cert: tls.certificatePem }, (req, res) => {
  hits++;
  if (req.url === '/metadata') return res.writeHead(200, { 'Content-Type': 'application/xml' }).end(served);
  if (req.url === '/huge') return res.writeHead(200).end('<x>' + 'a'.repeat(2 * 1024 * 1024) + '</x>');
  if (req.url === '/silent') return; // never answers: INTERNAL_HTTP_TIMEOUT ends the wait
  if (req.url === '/moved') return res.writeHead(301, { Location: '/metadata' }).end();
  if (req.url === '/to-http')
    return res.writeHead(302, { Location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata` }).end();
  if (req.url === '/loop') return res.writeHead(307, { Location: '/loop' }).end();
  res.writeHead(404).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});

const api = await startTestService({ AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey(), AUTH_INTERNAL_HTTP_TIMEOUT: '1' });
t.teardown(() => api.stop());
const token = await adminToken();
const create = (metadata_url: string, domains: string[] = []) =>
  api.request('POST', '/admin/sso/providers', { token, body: { type: 'saml', metadata_url, domains } });

t.test('refusals name the URL', async (t) => {
  const missing = await create(`${base}/missing`);
  t.strictSame(
    [missing.status, missing.body],
    [400, { code: 400, error_code: 'saml_metadata_fetch_failed', msg: `HTTP 404 error fetching SAML Metadata from URL '${base}/missing'` }],
  );
  const huge = await create(`${base}/huge`);
  t.strictSame(
    [huge.status, huge.body],
    [400, { code: 400, error_code: 'saml_metadata_fetch_failed', msg: `SAML Metadata at URL '${base}/huge' is larger than 1048576 bytes` }],
  );
  const silent = await create(`${base}/silent`);
  t.strictSame(
    [silent.status, silent.body],
    [400, { code: 400, error_code: 'saml_metadata_fetch_failed', msg: `Error fetching SAML Metadata from URL '${base}/silent'` }],
  );
  t.equal((await api.request('GET', '/admin/sso/providers', { token })).body.items.length, 0);
});

t.test('redirects are followed, as the original follows them: at most 10, and never to plain HTTP', async (t) => {
  for (const path of ['/to-http', '/loop']) {
    const res = await create(`${base}${path}`);
    t.strictSame(
      [res.status, res.body],
      [400, { code: 400, error_code: 'saml_metadata_fetch_failed', msg: `Error fetching SAML Metadata from URL '${base}${path}'` }],
      path,
    );
  }
  const moved = await create(`${base}/moved`);
  t.equal(moved.status, 201, JSON.stringify(moved.body));
  t.equal(moved.body.saml.metadata_url, `${base}/moved`, 'the URL as given is kept');
  t.equal((await api.request('DELETE', `/admin/sso/providers/${moved.body.id}`, { token })).status, 200);
});

t.test('a URL a WHATWG parser would silently rewrite is refused before anything is fetched', async (t) => {
  const before = hits;
  // Each would otherwise be read as ${base}/metadata, and fetched.
  for (const url of [`${base}\\metadata`, `${base}/meta\tdata`, `${base}/metadata\n`, ` ${base}/metadata`]) {
    const res = await create(url);
    t.strictSame(
      [res.status, res.body],
      [400, { code: 400, error_code: 'validation_failed', msg: 'metadata_url is not a valid URL' }],
      JSON.stringify(url),
    );
  }
  t.equal(hits, before, 'nothing fetched');
  t.equal((await api.request('GET', '/admin/sso/providers', { token })).body.items.length, 0);
});

t.test('fetched at create, and again at the ACS once stale', async (t) => {
  const created = await create(`${base}/metadata`, ['url.test']);
  t.equal(created.status, 201);
  t.equal(created.body.saml.metadata_url, `${base}/metadata`);
  t.equal(created.body.saml.metadata_xml, served);

  // The IdP rotates its signing key; the stored copy (no validUntil, no cacheDuration) is a day old.
  const rotated = new TestIdp(idp.entityId, rotatedKeys);
  served = rotated.metadata();
  await api.db.query(`update saml_providers set updated_at = now() - interval '25 hours'`);
  const start = await api.request('POST', '/sso', { body: { domain: 'url.test', skip_http_redirect: true } });
  const spCert = metadataCertificates((await api.request('GET', '/sso/saml/metadata')).text)[0];
  const request = rotated.readRequest(start.body.url, spCert);
  const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
  const acs = await postToAcs(api.url, {
    SAMLResponse: rotated.response(sp, { inResponseTo: request.id, attributes: [{ name: 'email', values: ['kim@url.test'] }] }),
    RelayState: request.relayState,
  });
  t.equal(acs.status, 302, 'signed with the new key, verified against the refetched metadata');
  const { rows } = await api.db.query('select metadata_xml from saml_providers');
  t.equal(rows[0].metadata_xml, served, 'the refetched metadata is stored');
});

t.test('a metadata_url slower than the request deadline: POST and PUT answer its refusal, no 504', async (t) => {
  // The fetch's own bound far past the request's: without the cap the deadline's 504 always came first.
  const hurried = await startTestService({
    AUTH_SAML_ENABLED: 'true',
    AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
    AUTH_API_MAX_REQUEST_DURATION: '1',
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
  });
  t.teardown(() => hurried.stop());
  const refusal = [
    400,
    { code: 400, error_code: 'saml_metadata_fetch_failed', msg: `Error fetching SAML Metadata from URL '${base}/silent'` },
  ];
  const created = await hurried.request('POST', '/admin/sso/providers', {
    token,
    body: { type: 'saml', metadata_url: `${base}/silent`, domains: ['stalled.test'] },
  });
  t.strictSame([created.status, created.body], refusal);
  t.equal((await hurried.request('GET', '/admin/sso/providers', { token })).body.items.length, 0, 'nothing created');

  const slowIdp = new TestIdp();
  const made = await hurried.request('POST', '/admin/sso/providers', { token, body: { type: 'saml', metadata_xml: slowIdp.metadata() } });
  t.equal(made.status, 201, made.text);
  const updated = await hurried.request('PUT', `/admin/sso/providers/${made.body.id}`, { token, body: { metadata_url: `${base}/silent` } });
  t.strictSame([updated.status, updated.body], refusal);
  const kept = await hurried.request('GET', `/admin/sso/providers/${made.body.id}`, { token });
  t.equal(kept.body.saml.metadata_url, undefined, 'the provider is unchanged');
});
