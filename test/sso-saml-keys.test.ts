// SAML SSO keys: encrypted assertions (SAML_ALLOW_ENCRYPTED_ASSERTIONS) and a key rotation
// (SAML_PRIVATE_KEY_NEXT): the metadata publishes both keys for signing and encryption with a short cache,
// an assertion encrypted to either key signs in, one encrypted to any other key is refused, and with
// encryption not allowed an encrypted assertion is refused.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, encryptedResponse, makeKeyPair, metadataCertificates, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

const idp = new TestIdp();
const token = await adminToken();

async function serviceWith(env: Record<string, string>) {
  const api = await startTestService({ AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey(), ...env });
  const created = await api.request('POST', '/admin/sso/providers', {
    token,
    body: { type: 'saml', metadata_xml: idp.metadata(), domains: ['enc.test'] },
  });
  if (created.status !== 201) throw new Error(created.text);
  const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
  const metadata = (await api.request('GET', '/sso/saml/metadata')).text;
  /** POST /sso, then the IdP's encrypted answer posted to the ACS */
  const signIn = async (encryptTo: string) => {
    const res = await api.request('POST', '/sso', { body: { domain: 'enc.test', skip_http_redirect: true } });
    const request = idp.readRequest(res.body.url, metadataCertificates(metadata)[0]);
    const response = await encryptedResponse(
      idp,
      sp,
      { inResponseTo: request.id, nameId: 'eve-1', attributes: [{ name: 'email', values: ['eve@enc.test'] }] },
      encryptTo,
    );
    return postToAcs(api.url, { SAMLResponse: response, RelayState: request.relayState });
  };
  return { api, metadata, signIn };
}

t.test('rotation: both keys published, either one decrypts', async (t) => {
  const { api, metadata, signIn } = await serviceWith({
    AUTH_SAML_ALLOW_ENCRYPTED_ASSERTIONS: 'true',
    AUTH_SAML_PRIVATE_KEY_NEXT: spPrivateKey(),
  });
  t.teardown(() => api.stop());
  t.equal((await api.request('GET', '/settings')).body.saml_private_key_next_configured, true);
  const res = await api.request('GET', '/sso/saml/metadata');
  t.equal(res.headers.get('cache-control'), 'public, max-age=60', 'a shorter cache while a next key waits');
  t.match(res.text, 'cacheDuration="PT1H"');
  t.strictSame(
    [...metadata.matchAll(/use="(\w+)"/g)].map((m) => m[1]),
    ['signing', 'encryption', 'signing', 'encryption'],
  );
  const [current, , next] = metadataCertificates(metadata);
  t.not(current, next);

  for (const [name, cert] of [
    ['current', current],
    ['next', next],
  ]) {
    const acs = await signIn(cert);
    t.equal(acs.status, 302, `encrypted to the ${name} key`);
    t.ok(new URLSearchParams(acs.location!.hash.slice(1)).get('access_token'), `a session with the ${name} key`);
  }
  const stranger = await signIn(makeKeyPair('Someone else').certificatePem);
  t.equal(stranger.status, 303);
  t.equal(stranger.location!.searchParams.get('error_description'), 'SAML Assertion is not valid', 'encrypted to a key that is not ours');
});

t.test('without SAML_ALLOW_ENCRYPTED_ASSERTIONS an encrypted assertion is refused, and no encryption key is published', async (t) => {
  const { api, metadata, signIn } = await serviceWith({});
  t.teardown(() => api.stop());
  t.strictSame(
    [...metadata.matchAll(/use="(\w+)"/g)].map((m) => m[1]),
    ['signing'],
  );
  const acs = await signIn(metadataCertificates(metadata)[0]);
  t.equal(acs.status, 303);
  t.equal(acs.location!.searchParams.get('error_description'), 'SAML Assertion is not valid');
});

t.test('a key in lines of 76 characters (base64 without -w0) loads and signs, as in the original', async (t) => {
  const wrapped = spPrivateKey()
    .match(/.{1,76}/g)!
    .join('\n');
  const { api, metadata } = await serviceWith({ AUTH_SAML_PRIVATE_KEY: `${wrapped}\n` });
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/sso', { body: { domain: 'enc.test', skip_http_redirect: true } });
  t.equal(res.status, 200);
  const request = idp.readRequest(res.body.url, metadataCertificates(metadata)[0]);
  t.equal(request.signatureValid, true, "the AuthnRequest's signature checks against the metadata certificate");
});

t.test(
  'the entity ID and ACS URL are the external URL as written, its host capitals and explicit port kept, as the original',
  async (t) => {
    const api = await startTestService({
      AUTH_SAML_ENABLED: 'true',
      AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
      AUTH_SAML_EXTERNAL_URL: 'https://Auth.Example.COM:443/auth/v1',
    });
    t.teardown(() => api.stop());
    const metadata = (await api.request('GET', '/sso/saml/metadata')).text;
    t.match(metadata, 'entityID="https://Auth.Example.COM:443/auth/v1/sso/saml/metadata"');
    t.match(metadata, 'Location="https://Auth.Example.COM:443/auth/v1/sso/saml/acs"');
  },
);
