// What an identity provider's SCIM client (Okta, Entra ID) observes at /scim/v2, checked against the original's
// SCIM server (docs/scim.md): the exact bytes of the discovery documents and of every refusal, that nothing
// there asks for credentials, that paging parameters are ignored, what counts as a filter, and that the
// provisioning endpoints a client probes (Users, Groups, Bulk, .search) are the SCIM 404 whatever the method
// or body, never a 501, a 400 bad_json or a 401. test/scim.test.ts covers the switch and the routing basics.
import t, { type Test } from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { startTestService, type Reply } from './helpers/server.js';
import { EMPTY_LIST, FILTER_FORBIDDEN, NOT_FOUND, expectedConfig } from './helpers/scim.js';

const SCIM_JSON = 'application/scim+json';
const BASE = 'https://auth.example.com/auth/v1/scim/v2';

const SERVICE_PROVIDER_CONFIG = expectedConfig(BASE);
const DISABLED = { code: 404, error_code: 'feature_disabled', msg: 'SCIM server is disabled' };

/** The answer is exactly `status` with `body` as the original's bytes, as application/scim+json and nothing else. */
function isScim(t: Test, res: Reply, status: number, body: unknown, what: string): void {
  t.equal(res.status, status, `${what}: status`);
  t.equal(res.text, JSON.stringify(body), `${what}: body, byte for byte`);
  t.equal(res.headers.get('content-type'), SCIM_JSON, `${what}: content type, no charset`);
  t.equal(res.headers.get('x-sb-error-code'), null, `${what}: not the service's own error`);
}

t.test('the switch: off by default, on under the original name, its ParseBool spellings and ours', async (t) => {
  const enabled = (env: Record<string, string>) => loadConfig({ env, envFile: null }).scim.enabled;
  t.equal(enabled({}), false);
  for (const value of ['true', 'TRUE', 'True', '1', 't']) {
    t.equal(enabled({ GOTRUE_EXPERIMENTAL_SCIM_ENABLED: value }), true, `GOTRUE_ ${value}`);
  }
  t.equal(enabled({ AUTH_EXPERIMENTAL_SCIM_ENABLED: 'true' }), true, 'AUTH_ name');
  t.equal(enabled({ GOTRUE_EXPERIMENTAL_SCIM_ENABLED: 'false' }), false);
  t.equal(enabled({ GOTRUE_SCIM_ENABLED: 'true' }), false, 'the name without EXPERIMENTAL_ is not the switch');
});

t.test('off: whatever is sent under /scim/v2 is the service 404 feature_disabled, before method, body or query', async (t) => {
  const api = await startTestService();
  t.teardown(() => api.stop());
  const requests: Array<[string, string, Parameters<typeof api.request>[2]?]> = [
    ['GET', '/scim/v2/Schemas?filter=name%20eq%20%22x%22'],
    ['GET', '/scim/v2/Schemas/'],
    ['OPTIONS', '/scim/v2/Schemas'],
    ['POST', '/scim/v2/Users', { raw: '{not json', headers: { 'content-type': SCIM_JSON } }],
    ['PATCH', '/scim/v2/Users/1', { body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [] } }],
    ['GET', '/scim/v2/ServiceProviderConfig', { token: 'not-a-token' }],
  ];
  for (const [method, path, options] of requests) {
    const res = await api.request(method, path, options);
    t.strictSame([res.status, res.body], [404, DISABLED], `${method} ${path}`);
    t.equal(res.headers.get('content-type'), 'application/json');
    t.equal(res.headers.get('x-sb-error-code'), 'feature_disabled');
  }
  for (const path of ['/scim/v2/Schemas', '/scim/v2/Users']) {
    const head = await api.request('HEAD', path);
    t.strictSame([head.status, head.text, head.headers.get('x-sb-error-code')], [404, '', 'feature_disabled'], `HEAD ${path}`);
  }
});

t.test('on', async (t) => {
  const api = await startTestService({
    GOTRUE_EXPERIMENTAL_SCIM_ENABLED: 'true',
    AUTH_API_EXTERNAL_URL: 'https://auth.example.com/auth/v1',
    // a second external host the service answers for: SCIM's base URL stays API_EXTERNAL_URL regardless
    GOTRUE_MAILER_EXTERNAL_HOSTS: 'other.example',
  });
  t.teardown(() => api.stop());

  t.test('the discovery documents, byte for byte', async (t) => {
    isScim(t, await api.request('GET', '/scim/v2/ServiceProviderConfig'), 200, SERVICE_PROVIDER_CONFIG, 'ServiceProviderConfig');
    isScim(t, await api.request('GET', '/scim/v2/ResourceTypes'), 200, EMPTY_LIST, 'ResourceTypes');
    isScim(t, await api.request('GET', '/scim/v2/Schemas'), 200, EMPTY_LIST, 'Schemas');
    const forwarded = await api.request('GET', '/scim/v2/ServiceProviderConfig', {
      headers: { 'x-forwarded-host': 'other.example', 'x-forwarded-proto': 'https' },
    });
    isScim(t, forwarded, 200, SERVICE_PROVIDER_CONFIG, 'meta.location ignores X-Forwarded-Host, even an allowed one');
  });

  t.test('no credentials are asked for, and none are refused', async (t) => {
    const credentials: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer not-a-token' },
      { authorization: 'Bearer' },
      { authorization: 'Basic Zm9vOmJhcg==' },
      { apikey: 'not-a-key' },
    ];
    for (const headers of credentials) {
      const what = JSON.stringify(headers);
      isScim(t, await api.request('GET', '/scim/v2/Schemas', { headers }), 200, EMPTY_LIST, `Schemas ${what}`);
      isScim(t, await api.request('GET', '/scim/v2/Users', { headers }), 404, NOT_FOUND, `Users ${what}: 404, not 401`);
    }
    const xml = await api.request('GET', '/scim/v2/ServiceProviderConfig', { headers: { accept: 'application/xml' } });
    isScim(t, xml, 200, SERVICE_PROVIDER_CONFIG, 'an Accept it cannot meet is ignored');
  });

  t.test('paging and attribute parameters are ignored: the list is always one whole page', async (t) => {
    const queries = [
      '?startIndex=5&count=1',
      '?count=0',
      '?count=abc&startIndex=-4',
      '?sortBy=name&sortOrder=descending',
      '?attributes=id',
    ];
    for (const query of queries) {
      for (const path of ['/scim/v2/ResourceTypes', '/scim/v2/Schemas']) {
        isScim(t, await api.request('GET', path + query), 200, EMPTY_LIST, path + query);
      }
    }
    const excluded = await api.request('GET', '/scim/v2/ServiceProviderConfig?excludedAttributes=meta&filter=x');
    isScim(t, excluded, 200, SERVICE_PROVIDER_CONFIG, 'a single document ignores every parameter');
  });

  t.test('what counts as a filter on a list', async (t) => {
    // The parameter name decoded and matched exactly, as Go's query parsing does.
    for (const query of ['?filter=name%20eq%20%22User%22', '?%66ilter=x', '?filter=a&filter=b', '?filter']) {
      isScim(t, await api.request('GET', `/scim/v2/Schemas${query}`), 403, FILTER_FORBIDDEN, query);
    }
    // Go's query parser leaves out a pair it cannot read (a bad escape or a ';' in it), and the original's
    // r.URL.Query().Has("filter") ignores its error: such a filter was never asked for.
    const noFilter = ['?Filter=x', '?filters=x', '?filter%zz', '?a;filter=x', '?filter=%zz', '?filter=x;', '?filter=%zz&a=1', '??filter=x'];
    for (const query of noFilter) {
      isScim(t, await api.request('GET', `/scim/v2/Schemas${query}`), 200, EMPTY_LIST, `${query} is no filter`);
    }
    isScim(t, await api.request('GET', '/scim/v2/Schemas?a=%zz&filter=x'), 403, FILTER_FORBIDDEN, 'the pairs beside a bad one are kept');
  });

  t.test('provisioning endpoints are the SCIM 404 for every method and body: nothing is 501 or reads JSON', async (t) => {
    const paths = [
      '/scim/v2/Users',
      '/scim/v2/Users/2819c223-7f76-453a-919d-413861904646',
      '/scim/v2/Groups',
      '/scim/v2/Me',
      '/scim/v2/Bulk',
      '/scim/v2/.search',
      '/scim/v2/Users/.search',
      '/scim/v2/ResourceTypes/User',
      '/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User',
      '/scim/v2?filter=x',
      '/scim/v2//ServiceProviderConfig',
    ];
    const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ada@example.com', active: true };
    for (const path of paths) {
      isScim(
        t,
        await api.request('GET', `${path}${path.includes('?') ? '&' : '?'}filter=userName%20eq%20%22a%22`),
        404,
        NOT_FOUND,
        `GET ${path}`,
      );
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        isScim(
          t,
          await api.request(method, path, { body: user, headers: { 'content-type': SCIM_JSON } }),
          404,
          NOT_FOUND,
          `${method} ${path}`,
        );
      }
      const broken = await api.request('POST', path, { raw: '{"userName":', headers: { 'content-type': SCIM_JSON } });
      isScim(t, broken, 404, NOT_FOUND, `POST ${path} with broken JSON`);
      const head = await api.request('HEAD', path);
      t.strictSame([head.status, head.text, head.headers.get('content-type')], [404, '', SCIM_JSON], `HEAD ${path}`);
    }
  });

  t.test('a body sent to a document is never read: 405 with Allow: GET, not 400', async (t) => {
    for (const path of ['/scim/v2/ServiceProviderConfig', '/scim/v2/Schemas']) {
      const res = await api.request('POST', path, { raw: '{not json', headers: { 'content-type': SCIM_JSON } });
      t.strictSame([res.status, res.headers.get('allow'), res.body.error_code], [405, 'GET', 'method_not_allowed'], path);
    }
  });

  // Departures kept (docs/scim.md#departures-from-the-original): this service's routing conventions hold here too.
  t.test('HEAD on a document is its GET without a body, and a trailing / is the same document', async (t) => {
    for (const [path, body] of [
      ['/scim/v2/ServiceProviderConfig', SERVICE_PROVIDER_CONFIG],
      ['/scim/v2/Schemas', EMPTY_LIST],
    ] as const) {
      const head = await api.request('HEAD', path);
      t.strictSame(
        [head.status, head.text, head.headers.get('content-type'), head.headers.get('content-length')],
        [200, '', SCIM_JSON, String(JSON.stringify(body).length)],
        `HEAD ${path}`,
      );
      isScim(t, await api.request('GET', `${path}/`), 200, body, `${path}/`);
    }
    isScim(t, await api.request('GET', '/scim/v2/Schemas/?filter=x'), 403, FILTER_FORBIDDEN, 'the filter refusal holds with a trailing /');
  });

  t.test('the prefix is case-sensitive: another spelling is no part of SCIM', async (t) => {
    for (const path of ['/SCIM/v2/ServiceProviderConfig', '/scim/V2/ServiceProviderConfig']) {
      const res = await api.request('GET', path);
      t.strictSame(
        [res.status, res.body, res.headers.get('content-type')],
        [404, { code: 404, error_code: 'not_found', msg: 'Not Found' }, 'application/json'],
        path,
      );
    }
  });
});
