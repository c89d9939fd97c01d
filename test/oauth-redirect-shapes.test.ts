// The shapes the original gives a flow's failures (docs/oauth.md#errors): a provider whose discovery
// document cannot be had is one it cannot build (400 validation_failed "Unsupported provider: …", and no
// flow stored); an error redirect keeps every value of a repeated parameter of redirect_to, and its fragment
// carries only the error fields that have a value.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { authorizeUrl, callback, providerEnv } from './helpers/oauth.js';
import { unusedPort } from './helpers/template-server.js';

const nobody = `http://127.0.0.1:${await unusedPort()}`;
const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-client', secret: 'g-secret', redirectUri: 'http://localhost:9999/callback', url: nobody }),
  ...providerEnv('github', {
    clientId: 'gh-client',
    secret: 'gh-secret',
    redirectUri: 'http://localhost:9999/callback',
    url: nobody,
    apiUrl: nobody,
  }),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(() => api.stop());

const flows = async () => (await api.db.query('select count(*)::int as n from flow_state')).rows[0].n as number;

t.test('an OIDC provider whose discovery cannot be fetched: 400 validation_failed, no flow stored', async (t) => {
  const before = await flows();
  const res = await api.request('GET', '/authorize?provider=google');
  t.equal(res.status, 400);
  t.equal(res.body.error_code, 'validation_failed');
  t.match(res.body.msg, /^Unsupported provider: \S/);
  t.equal(await flows(), before);
});

t.test("the provider's refusal without a description: the query keeps it empty, the fragment leaves it out", async (t) => {
  const url = await authorizeUrl(api, `provider=github&redirect_to=${encodeURIComponent('https://app.example.test/done?a=1&a=2')}`);
  const state = url.searchParams.get('state')!;
  const { location } = await callback(api, new URLSearchParams({ state, error: 'access_denied' }));
  t.equal(location.origin + location.pathname, 'https://app.example.test/done');
  t.same(
    [...location.searchParams],
    [
      ['a', '1'],
      ['a', '2'],
      ['error', 'access_denied'],
      ['error_description', ''],
    ],
    "both values of redirect_to's repeated parameter are kept",
  );
  t.equal(location.hash, '#error=access_denied&sb=');
});
