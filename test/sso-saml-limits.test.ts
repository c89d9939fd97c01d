// What guards POST /sso and the ACS besides their own checks: the per-client buckets RATE_LIMIT_SSO and
// SAML_RATE_LIMIT_ASSERTION, and the captcha on POST /sso, which auth-js signInWithSSO sends as
// gotrue_meta_security.captcha_token.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { startSiteverifyFake } from './helpers/captcha.js';
import { authClient } from './helpers/auth-client.js';
import { TestIdp, spPrivateKey } from './helpers/saml-idp.js';

const SECRET = 'captcha-secret-for-sso';
const fake = await startSiteverifyFake(SECRET);
t.teardown(() => fake.close());
const api = await startTestService({
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_RATE_LIMIT_HEADER: 'X-Client',
  AUTH_SAML_RATE_LIMIT_ASSERTION: '1',
  AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
  AUTH_SECURITY_CAPTCHA_SECRET: SECRET,
  AUTH_SECURITY_CAPTCHA_PROVIDER: 'hcaptcha',
  AUTH_SECURITY_CAPTCHA_VERIFY_URL: fake.url,
});
t.teardown(() => api.stop());
const idp = new TestIdp();
await api.request('POST', '/admin/sso/providers', {
  token: await adminToken(),
  body: { type: 'saml', metadata_xml: idp.metadata(), domains: ['limits.test'] },
});

t.test('POST /sso needs a captcha token the provider accepts', async (t) => {
  const missing = await api.request('POST', '/sso', { body: { domain: 'limits.test', skip_http_redirect: true } });
  t.strictSame([missing.status, missing.body.error_code], [400, 'captcha_failed']);
  fake.accept('good-token');
  const { data, error } = await authClient(api.url).signInWithSSO({ domain: 'limits.test', options: { captchaToken: 'good-token' } });
  t.equal(error, null);
  t.ok(data!.url.startsWith(idp.ssoUrl));
});

t.test('the ACS bucket: SAML_RATE_LIMIT_ASSERTION per client, burst 30, then 429', async (t) => {
  const post = (client: string) =>
    fetch(`${api.url}/sso/saml/acs`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Client': client },
      body: 'SAMLResponse=x',
    });
  for (let i = 0; i < 30; i++) t.equal((await post('203.0.113.7')).status, 303);
  const over = await post('203.0.113.7');
  t.equal(over.status, 429);
  t.equal(((await over.json()) as { error_code: string }).error_code, 'over_request_rate_limit');
  t.equal((await post('203.0.113.8')).status, 303, 'another client has its own bucket');
});
