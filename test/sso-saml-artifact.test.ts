// SAML's HTTP-Artifact binding (docs/sso-saml.md#artifacts): in an SP-initiated flow the IdP may post a
// `SAMLart` instead of the response; the service resolves it over the IdP's back channel (a signed
// ArtifactResolve in SOAP to the metadata's ArtifactResolutionService) and verifies the response it gets
// exactly as a posted one. A test IdP signs the responses; its artifact service (a real SOAP endpoint)
// checks each ArtifactResolve's signature against the SP metadata's certificate and hands a response out once.
import t from 'tap';
import net from 'node:net';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, metadataCertificates, postToAcs, spPrivateKey } from './helpers/saml-idp.js';
import { startArtifactService } from './helpers/saml-artifact-service.js';

const api = await startTestService({
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
const idp = new TestIdp();
const service = await startArtifactService(idp.entityId);
const noResolver = new TestIdp();
t.teardown(async () => {
  await api.stop();
  await service.stop();
});
const token = await adminToken();
const spMetadata = (await api.request('GET', '/sso/saml/metadata')).text;
service.spCertificatePem = metadataCertificates(spMetadata)[0];
const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };

for (const [provider, domain] of [
  [idp.metadata({ artifactResolutionUrl: service.url }), 'artifact.test'],
  [noResolver.metadata(), 'no-resolver.test'],
] as const) {
  const created = await api.request('POST', '/admin/sso/providers', {
    token,
    body: { type: 'saml', metadata_xml: provider, domains: [domain] },
  });
  if (created.status !== 201) throw new Error(`provider: ${created.status} ${created.text}`);
}

/** POST /sso for `domain`, as auth-js sends it, and the AuthnRequest the browser brings the IdP. */
async function start(domain = 'artifact.test', by: TestIdp = idp) {
  const res = await api.request('POST', '/sso', { body: { domain, skip_http_redirect: true, redirect_to: 'https://app.example.test/in' } });
  if (res.status !== 200) throw new Error(`POST /sso ${res.status} ${res.text}`);
  return by.readRequest(res.body.url, service.spCertificatePem);
}
const signedResponse = (inResponseTo: string, email: string, by: TestIdp = idp) =>
  by.sign(by.responseXml(sp, { inResponseTo, nameId: email, attributes: [{ name: 'email', values: [email] }] }));
const usersNamed = async (email: string) => (await api.db.query('select 1 from users where email = $1', [email])).rowCount;
const INVALID = { error_code: 'validation_failed', error_description: 'SAML Assertion is not valid' };
const refusal = (r: { location: URL | null }) => ({
  error_code: r.location?.searchParams.get('error_code'),
  error_description: r.location?.searchParams.get('error_description'),
});

t.test('the SP metadata offers the artifact binding at the ACS', async (t) => {
  t.match(spMetadata, `Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="${sp.acsUrl}" index="2"`);
});

t.test('an artifact is resolved with a signed ArtifactResolve, and its response signs the user in', async (t) => {
  const request = await start();
  const artifact = service.issue(signedResponse(request.id, 'art@artifact.test'));
  const before = service.seen.length;
  const acs = await postToAcs(api.url, { SAMLart: artifact, RelayState: request.relayState });
  t.equal(acs.status, 302, String(acs.location));
  t.equal(`${acs.location!.origin}${acs.location!.pathname}`, 'https://app.example.test/in');
  const fragment = new URLSearchParams(acs.location!.hash.slice(1));
  t.ok(fragment.get('access_token'));
  const user = await api.request('GET', '/user', { token: fragment.get('access_token')! });
  t.equal(user.body.email, 'art@artifact.test');

  const [resolve] = service.seen.slice(before);
  t.ok(resolve.signatureValid, 'signed with the key of the SP metadata');
  t.equal(resolve.issuer, sp.entityId);
  t.equal(resolve.artifact, artifact);
  t.equal(resolve.contentType, 'text/xml');
  t.equal(service.seen.length, before + 1, 'resolved once');
});

t.test('a response signed where it sits in the answer, a prefix of the answer named in its canonical form, verifies', async (t) => {
  // As OpenSAML signs: typed values (xsi:type="xs:string") whose `xs` is declared on the ArtifactResponse
  // only, and named in the signature's InclusiveNamespaces. The response taken out of the answer must keep it.
  const request = await start();
  const unsigned = idp.responseXml(sp, {
    inResponseTo: request.id,
    nameId: 'typed',
    typedValues: true,
    attributes: [{ name: 'email', values: ['typed@artifact.test'] }],
  });
  const artifact = service.issue(unsigned, { signInPlace: (soap) => idp.sign(soap, 'Assertion', idp.keys, ['xs']) });
  const acs = await postToAcs(api.url, { SAMLart: artifact, RelayState: request.relayState });
  t.equal(acs.status, 302, String(acs.location));
  t.ok(new URLSearchParams(acs.location!.hash.slice(1)).get('access_token'));
  t.equal(await usersNamed('typed@artifact.test'), 1);
});

t.test('an ArtifactResponse that does not answer the request, fails, or is old: refused, nobody signed in', async (t) => {
  const cases = [
    { inResponseTo: 'id-someone-elses' },
    { status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' },
    { issueInstant: new Date(Date.now() - 5 * 60_000) },
    { issuer: 'https://other-idp.example.test/metadata' },
    { httpStatus: 500 },
  ];
  for (const [i, answer] of cases.entries()) {
    const email = `bent-${i}@artifact.test`;
    const request = await start();
    const acs = await postToAcs(api.url, {
      SAMLart: service.issue(signedResponse(request.id, email), answer),
      RelayState: request.relayState,
    });
    t.same(refusal(acs), INVALID, JSON.stringify(answer));
    t.equal(await usersNamed(email), 0);
  }
});

t.test('the resolved response is verified as a posted one: unsigned, or answering another request, it is refused', async (t) => {
  let request = await start();
  const unsigned = idp.responseXml(sp, {
    inResponseTo: request.id,
    nameId: 'u',
    attributes: [{ name: 'email', values: ['unsigned@artifact.test'] }],
  });
  let acs = await postToAcs(api.url, { SAMLart: service.issue(unsigned), RelayState: request.relayState });
  t.same(refusal(acs), INVALID, 'an unsigned response is not trusted for coming over the back channel');
  t.equal(await usersNamed('unsigned@artifact.test'), 0);

  request = await start();
  acs = await postToAcs(api.url, {
    SAMLart: service.issue(signedResponse('id-another-request', 'other@artifact.test')),
    RelayState: request.relayState,
  });
  t.same(refusal(acs), INVALID, "the response must answer this flow's AuthnRequest");
  t.equal(await usersNamed('other@artifact.test'), 0);

  request = await start();
  const forged = signedResponse(request.id, 'forged@artifact.test', noResolver);
  acs = await postToAcs(api.url, { SAMLart: service.issue(forged), RelayState: request.relayState });
  t.same(refusal(acs), INVALID, "signed by another IdP's key");
  t.equal(await usersNamed('forged@artifact.test'), 0);
});

t.test('an unknown artifact, or an IdP whose metadata names no resolution service: refused', async (t) => {
  let request = await start();
  let acs = await postToAcs(api.url, { SAMLart: 'AAQAAAAAAAAAAAAAAAAAAAAAAAAA', RelayState: request.relayState });
  t.same(refusal(acs), INVALID);
  request = await start('no-resolver.test', noResolver);
  acs = await postToAcs(api.url, {
    SAMLart: service.issue(signedResponse(request.id, 'nores@artifact.test')),
    RelayState: request.relayState,
  });
  t.same(refusal(acs), INVALID);
  t.equal(await usersNamed('nores@artifact.test'), 0);
});

t.test('an IdP-initiated post of an artifact is still refused in the original words', async (t) => {
  const acs = await postToAcs(api.url, { SAMLart: service.issue(signedResponse('', 'idp@artifact.test')) });
  t.same(refusal(acs), {
    error_code: 'validation_failed',
    error_description: 'SAML Artifact response can only be used with SP initiated flow',
  });
});

t.test('a resolution service slower than the request deadline: the ACS still redirects with the refusal, no 504', async (t) => {
  // Its own bound far past the request's: without the cap the deadline's JSON 504 always came first.
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const hurried = await startTestService({
    AUTH_SAML_ENABLED: 'true',
    AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
    AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
    AUTH_API_MAX_REQUEST_DURATION: '1',
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
  });
  t.teardown(async () => {
    await hurried.stop();
    silent.close();
  });
  const slowIdp = new TestIdp();
  const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/soap`;
  const created = await hurried.request('POST', '/admin/sso/providers', {
    token,
    body: { type: 'saml', metadata_xml: slowIdp.metadata({ artifactResolutionUrl: silentUrl }), domains: ['slow.test'] },
  });
  t.equal(created.status, 201, created.text);
  const res = await hurried.request('POST', '/sso', { body: { domain: 'slow.test', skip_http_redirect: true } });
  const request = slowIdp.readRequest(res.body.url, service.spCertificatePem);
  const acs = await postToAcs(hurried.url, { SAMLart: 'AAQAAAAAAAAAAAAAAAAAAAAAAAAA', RelayState: request.relayState });
  t.equal(acs.status, 303);
  t.same(refusal(acs), INVALID);
});
