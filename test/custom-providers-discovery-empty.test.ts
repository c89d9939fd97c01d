// A discovery document whose optional userinfo_endpoint is an empty string names no endpoint: the original
// reads "" as absent and saves the provider (its sign-ins then use the id_token). Held to the URL rules as
// a URL, the empty string was refused as "Invalid URL format", so such an issuer could not be added here.
import t from 'tap';
import http from 'node:http';
import type net from 'node:net';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const idp = http.createServer((req, res) => {
  const issuer = `http://127.0.0.1:${(idp.address() as net.AddressInfo).port}`;
  if (req.url !== '/.well-known/openid-configuration') return res.writeHead(404).end('{}');
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      userinfo_endpoint: '',
    }),
  );
});
await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(idp.address() as net.AddressInfo).port}`;

const api = await startTestService({ AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true' });
t.teardown(async () => {
  await api.stop();
  await new Promise<void>((resolve) => idp.close(() => resolve()));
});

t.test('an empty userinfo_endpoint is no endpoint, not a bad URL', async (t) => {
  const res = await api.request('POST', '/admin/custom-providers', {
    token: await adminToken(),
    body: { provider_type: 'oidc', identifier: 'custom:no-userinfo', name: 'n', client_id: 'c', client_secret: 's', issuer },
  });
  t.equal(res.status, 201, res.text);
  t.equal(res.body.discovery_document?.userinfo_endpoint, undefined, 'shown as absent, as the original omits an empty one');
});
