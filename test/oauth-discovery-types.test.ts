// A built-in OIDC provider's discovery document (docs/oauth.md#discovery-documents) is decoded as the
// original's OIDC library decodes it: a member of a JSON type its struct's field does not take fails the
// discovery, so the provider cannot be built, 400 validation_failed "Unsupported provider: " and the
// library's words (the answer's Content-Type, then the Go decoder's). Google's issuer is moved to a small
// local server that serves whatever document the test sets; the cache is off, so every request fetches it.
// The mistyped documents come first: once a sound one was had, a failed fetch keeps it in use, as the
// original keeps its last provider.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService } from './helpers/server.js';
import { providerEnv } from './helpers/oauth.js';

let answer: { type: string; doc: Record<string, unknown> } = { type: 'application/json', doc: {} };
const issuerServer = http.createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': answer.type }).end(JSON.stringify(answer.doc));
});
await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
const sound = {
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  jwks_uri: `${issuer}/keys`,
  userinfo_endpoint: `${issuer}/userinfo`,
  id_token_signing_alg_values_supported: ['RS256'],
};
const api = await startTestService({
  ...providerEnv('google', { clientId: 'g-client', secret: 'g-secret', redirectUri: 'https://app.example.test/callback', url: issuer }),
  AUTH_EXTERNAL_OIDC_PROVIDER_CACHE_TTL: '0',
});
t.teardown(async () => {
  await api.stop();
  await new Promise((resolve) => issuerServer.close(resolve));
});

const unsupported = (why: string) => ({
  code: 400,
  error_code: 'validation_failed',
  msg: `Unsupported provider: oidc: failed to decode provider discovery object: ${why}`,
});

t.test('a member of the wrong JSON type fails the discovery in the decoder words', async (t) => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'application/json; charset=utf-8',
      { ...sound, issuer: 1 },
      'got Content-Type = application/json, but could not unmarshal as JSON: json: cannot unmarshal number into Go struct field providerJSON.issuer of type string',
    ],
    [
      'application/json',
      { ...sound, device_authorization_endpoint: true },
      'got Content-Type = application/json, but could not unmarshal as JSON: json: cannot unmarshal bool into Go struct field providerJSON.device_authorization_endpoint of type string',
    ],
    [
      'text/plain',
      { ...sound, id_token_signing_alg_values_supported: 'RS256' },
      'expected Content-Type = application/json, got "text/plain": json: cannot unmarshal string into Go struct field providerJSON.id_token_signing_alg_values_supported of type []string',
    ],
    [
      'application/json',
      { ...sound, JWKS_URI: { url: `${issuer}/keys` } },
      'got Content-Type = application/json, but could not unmarshal as JSON: json: cannot unmarshal object into Go struct field providerJSON.jwks_uri of type string',
    ],
  ];
  for (const [type, doc, why] of cases) {
    answer = { type, doc };
    const res = await api.request('GET', '/authorize?provider=google');
    t.same([res.status, res.body], [400, unsupported(why)], why);
  }
});

t.test('a sound document: the provider is built', async (t) => {
  answer = { type: 'application/json', doc: sound };
  const res = await api.request('GET', '/authorize?provider=google');
  t.equal(res.status, 302, res.text);
  t.match(res.headers.get('location'), `${issuer}/authorize?`);
});

t.test('members under another spelling of their field are read as the decoder reads them', async (t) => {
  const { authorization_endpoint: _a, token_endpoint: _t, jwks_uri: _j, ...rest } = sound;
  answer = {
    type: 'application/json',
    doc: { ...rest, AUTHORIZATION_ENDPOINT: `${issuer}/other-authorize`, Token_Endpoint: `${issuer}/token`, JWKS_uri: `${issuer}/keys` },
  };
  const res = await api.request('GET', '/authorize?provider=google');
  t.equal(res.status, 302, res.text);
  t.match(res.headers.get('location'), `${issuer}/other-authorize?`);
});

t.test('members the struct does not declare, and null members, are not checked', async (t) => {
  answer = { type: 'application/json', doc: { ...sound, scopes_supported: 'openid', userinfo_endpoint: null, claims_supported: 7 } };
  const res = await api.request('GET', '/authorize?provider=google');
  t.equal(res.status, 302, res.text);
});

t.test('a mistyped document after a sound one: the last sound one stays in use', async (t) => {
  answer = { type: 'application/json', doc: { ...sound, issuer: 1 } };
  const res = await api.request('GET', '/authorize?provider=google');
  t.equal(res.status, 302, res.text);
});
