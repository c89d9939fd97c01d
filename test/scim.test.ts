// SCIM 2.0 discovery under /scim/v2 (docs/scim.md), as the original ships it: dark by default (every path and
// method there is 404 feature_disabled), and once EXPERIMENTAL_SCIM_ENABLED is on, the ServiceProviderConfig
// and two empty lists as application/scim+json, open to anyone, with RFC 7644 errors for a filter (403) and
// for any other path (404), 405 with Allow for another method, and meta.location built on API_EXTERNAL_URL.
import t from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { serviceProviderConfig } from '../dist/server/scim/documents.js';
import { startTestService } from './helpers/server.js';
import { EMPTY_LIST, FILTER_FORBIDDEN, NOT_FOUND, expectedConfig } from './helpers/scim.js';

const SCIM_JSON = 'application/scim+json';
const DOCUMENTS = ['/scim/v2/ServiceProviderConfig', '/scim/v2/ResourceTypes', '/scim/v2/Schemas'];
const LISTS = ['/scim/v2/ResourceTypes', '/scim/v2/Schemas'];
// Paths under the prefix that serve nothing: the base itself, resources not built, a wrong case, a sub-path.
const UNKNOWN = ['/scim/v2', '/scim/v2/', '/scim/v2/Users', '/scim/v2/Groups/1', '/scim/v2/serviceproviderconfig', '/scim/v2/Schemas/x'];
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
const DISABLED = { code: 404, error_code: 'feature_disabled', msg: 'SCIM server is disabled' };

t.test('off by default: every path and method under /scim/v2 is the service 404 feature_disabled', async (t) => {
  t.equal(loadConfig({ env: {}, envFile: null }).scim.enabled, false, 'EXPERIMENTAL_SCIM_ENABLED defaults to false');
  const api = await startTestService();
  t.teardown(() => api.stop());
  for (const path of [...DOCUMENTS, ...UNKNOWN]) {
    for (const method of ['GET', ...OTHER_METHODS]) {
      const res = await api.request(method, path);
      t.strictSame([res.status, res.body], [404, DISABLED], `${method} ${path}`);
      t.equal(res.headers.get('content-type'), 'application/json', `${method} ${path}: not a SCIM answer`);
      t.equal(res.headers.get('x-sb-error-code'), 'feature_disabled');
    }
  }
  const beside = await api.request('GET', '/scim/v2x/ServiceProviderConfig');
  t.strictSame([beside.status, beside.body.error_code], [404, 'not_found'], 'a path beside the prefix is no part of it');
});

t.test('on (the original name), with API_EXTERNAL_URL on a path', async (t) => {
  const api = await startTestService({
    GOTRUE_EXPERIMENTAL_SCIM_ENABLED: 'true',
    AUTH_API_EXTERNAL_URL: 'https://auth.example.com/auth/v1/',
  });
  t.teardown(() => api.stop());
  const base = 'https://auth.example.com/auth/v1/scim/v2';

  t.test('GET /scim/v2/ServiceProviderConfig is the whole document, open to anyone', async (t) => {
    for (const token of [undefined, 'not-a-token']) {
      const res = await api.request('GET', '/scim/v2/ServiceProviderConfig', { token });
      t.equal(res.status, 200, `token ${token}`);
      t.equal(res.headers.get('content-type'), SCIM_JSON);
      t.strictSame(res.body, expectedConfig(base), 'meta.location follows API_EXTERNAL_URL, its path kept');
    }
    // A filter means nothing to a single document; the original answers it unchanged.
    const filtered = await api.request('GET', '/scim/v2/ServiceProviderConfig?filter=x');
    t.strictSame([filtered.status, filtered.body], [200, expectedConfig(base)]);
  });

  t.test('GET /scim/v2/ResourceTypes and /Schemas are empty lists; a filter is 403', async (t) => {
    for (const path of LISTS) {
      const res = await api.request('GET', path, { token: 'not-a-token' });
      t.strictSame([res.status, res.body], [200, EMPTY_LIST], path);
      t.equal(res.headers.get('content-type'), SCIM_JSON);
      for (const query of ['?filter=name%20eq%20%22User%22', '?filter=', '?count=1&filter']) {
        const refused = await api.request('GET', path + query);
        t.strictSame([refused.status, refused.body], [403, FILTER_FORBIDDEN], path + query);
        t.equal(refused.headers.get('content-type'), SCIM_JSON);
      }
      const other = await api.request('GET', `${path}?count=1&startIndex=1`);
      t.strictSame([other.status, other.body], [200, EMPTY_LIST], 'other parameters are not a filter');
    }
  });

  t.test('any other path under /scim/v2 is the RFC 7644 404, whatever the method', async (t) => {
    for (const path of UNKNOWN) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await api.request(method, path);
        t.strictSame([res.status, res.body], [404, NOT_FOUND], `${method} ${path}`);
        t.equal(res.headers.get('content-type'), SCIM_JSON);
      }
    }
    const beside = await api.request('GET', '/scim/v2x');
    t.strictSame([beside.status, beside.body], [404, { code: 404, error_code: 'not_found', msg: 'Not Found' }], 'beside the prefix');
  });

  t.test('another method on a document is 405 with Allow: GET', async (t) => {
    for (const path of DOCUMENTS) {
      for (const method of OTHER_METHODS) {
        const res = await api.request(method, path, { body: {} });
        t.equal(res.status, 405, `${method} ${path}`);
        t.equal(res.headers.get('allow'), 'GET');
        t.equal(res.body.error_code, 'method_not_allowed');
      }
    }
  });
});

t.test('meta.location is API_EXTERNAL_URL + /scim/v2/ServiceProviderConfig', async (t) => {
  const location = (externalUrl: string) =>
    (serviceProviderConfig({ api: { externalUrl } } as never).meta as { location: string }).location;
  t.equal(location('http://localhost:9999'), 'http://localhost:9999/scim/v2/ServiceProviderConfig');
  t.equal(location('https://auth.example.com//'), 'https://auth.example.com/scim/v2/ServiceProviderConfig', 'trailing slashes dropped');
  t.equal(location('https://x.example/auth/v1'), 'https://x.example/auth/v1/scim/v2/ServiceProviderConfig');
  const loaded = loadConfig({ env: { API_EXTERNAL_URL: 'https://id.example.org/' }, envFile: null });
  t.equal(location(loaded.api.externalUrl), 'https://id.example.org/scim/v2/ServiceProviderConfig', 'as the setting is loaded');
});
