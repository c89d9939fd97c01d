// The user-created hooks on a SAML sign-up, as the original calls them from its ACS: before-user-created
// sees the SSO user about to be inserted and its refusal is redirected with no user left; after-user-created
// is told of the committed user; a returning SSO user creates nobody and calls neither.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { TestIdp, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

const hooks = await startHookServer();
const hook = (name: string, path: string) => ({
  [`AUTH_HOOK_${name}_ENABLED`]: 'true',
  [`AUTH_HOOK_${name}_URI`]: `${hooks.url}${path}`,
  [`AUTH_HOOK_${name}_SECRETS`]: `${newHookSecret()}|${hooks.secret}`,
});
const api = await startTestService({
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  ...hook('BEFORE_USER_CREATED', '/before'),
  ...hook('AFTER_USER_CREATED', '/after'),
});
t.teardown(async () => {
  await api.stop();
  await hooks.close();
});
hooks.on('/before', () => ({ body: {} }));
hooks.on('/after', () => ({ body: {} }));

const idp = new TestIdp();
const created = await api.request('POST', '/admin/sso/providers', {
  token: await adminToken(),
  body: { type: 'saml', metadata_xml: idp.metadata(), domains: ['hooked.test'] },
});
const providerId: string = created.body.id;
const spCertificate = await api.request('GET', '/sso/saml/metadata').then((r) => {
  const b64 = /<X509Certificate>([^<]+)</.exec(r.text)![1];
  return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
});
const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };

/** One SP-initiated sign-in of `nameId` with `email`, up to the ACS's redirect. */
async function signIn(nameId: string, email: string) {
  const started = await api.request('POST', '/sso', { body: { domain: 'hooked.test', skip_http_redirect: true } });
  const request = idp.readRequest(started.body.url, spCertificate);
  const response = idp.response(sp, { inResponseTo: request.id, nameId, attributes: [{ name: 'email', values: [email] }] });
  return postToAcs(api.url, { SAMLResponse: response, RelayState: request.relayState });
}
const callsFor = (path: string, email: string) => hooks.callsTo(path).filter((c) => c.payload.user.email === email);
const usersWith = async (email: string) => (await api.db.query('select 1 from users where email = $1', [email])).rowCount;

t.test('a new SSO user goes through both hooks; a returning one through neither', async (t) => {
  const email = 'grace@hooked.test';
  const first = await signIn('grace-1', email);
  t.equal(first.status, 302);
  t.ok(new URLSearchParams(first.location!.hash.slice(1)).get('access_token'), 'signed in');
  const before = callsFor('/before', email);
  t.equal(before.length, 1);
  t.match(before[0].payload.user, { email, app_metadata: { provider: `sso:${providerId}` } });
  const after = callsFor('/after', email);
  t.equal(after.length, 1);
  t.match(after[0].payload.user, { email, identities: [{ provider: `sso:${providerId}`, id: 'grace-1' }] });
  t.equal(after[0].payload.user.id, before[0].payload.user.id, 'the hook saw the id the user got');

  const again = await signIn('grace-1', email);
  t.equal(again.status, 302);
  t.equal(callsFor('/before', email).length, 1);
  t.equal(callsFor('/after', email).length, 1);
});

t.test('a refusal of before-user-created is the redirect’s error, and no user is left', async (t) => {
  hooks.once('/before', { body: { error: { http_code: 403, message: 'This IdP may not add users' } } });
  const email = 'refused@hooked.test';
  const res = await signIn('refused-1', email);
  t.equal(res.status, 303);
  t.equal(res.location!.searchParams.get('error_description'), 'This IdP may not add users');
  t.equal(await usersWith(email), 0);
  t.equal(callsFor('/after', email).length, 0);
});

t.test('an error of after-user-created is the redirect’s error; the user stays, as in the original', async (t) => {
  hooks.once('/after', { body: { error: { http_code: 409, message: 'Directory sync failed' } } });
  const email = 'after@hooked.test';
  const res = await signIn('after-1', email);
  t.equal(res.status, 303, 'a redirect, not a JSON answer');
  t.equal(res.location!.searchParams.get('error_description'), 'Directory sync failed');
  t.equal(await usersWith(email), 1);
});
