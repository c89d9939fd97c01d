// A custom OIDC provider's issuer for discovery tests: a local HTTP server whose path's first segment
// names a document, with the service started to be allowed to call it (CUSTOM_OAUTH_ALLOW_PRIVATE_URLS) and
// an admin create of a provider pointed at that issuer. Both are stopped at the test's end.
import http from 'node:http';
import type net from 'node:net';
import type { Test } from 'tap';
import { startTestService, type TestService } from './server.js';
import { adminToken } from './admin.js';

export interface DiscoveryIdp {
  /** the issuer server's origin */
  base: string;
  api: TestService;
  /** the service-role token the admin calls carry */
  token: string;
  /** POST /admin/custom-providers for `custom:<name>`, whose issuer is `<base>/<name>` */
  create: (name: string) => ReturnType<TestService['request']>;
  discoveryUrl: (name: string) => string;
}

/** `documentOf` gives a name's document text for its issuer, or undefined for a 404. */
export async function startDiscoveryIdp(t: Test, documentOf: (name: string, issuer: string) => string | undefined): Promise<DiscoveryIdp> {
  const idp = http.createServer((req, res) => {
    const name = req.url?.split('/')[1] ?? '';
    const document = documentOf(name, `${base}/${name}`);
    if (document === undefined) return res.writeHead(404).end('{}');
    res.setHeader('content-type', 'application/json');
    res.end(document);
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(idp.address() as net.AddressInfo).port}`;
  const api = await startTestService({ AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true' });
  const token = await adminToken();
  t.teardown(async () => {
    await api.stop();
    await new Promise<void>((resolve) => idp.close(() => resolve()));
  });
  const create = (name: string) =>
    api.request('POST', '/admin/custom-providers', {
      token,
      body: { provider_type: 'oidc', identifier: `custom:${name}`, name, client_id: 'c', client_secret: 's', issuer: `${base}/${name}` },
    });
  return { base, api, token, create, discoveryUrl: (name) => `${base}/${name}/.well-known/openid-configuration` };
}
