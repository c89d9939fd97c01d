// The original decodes a discovery document into its Go struct, so a member of a JSON type its field does
// not take (a number for `issuer`, an object for `jwks_uri`, a string for `scopes_supported`...) fails the
// decoding: a 400 validation_failed quoting its decoder, and nothing is written. Such members were stored
// as sent. A null member decodes as absent, and a member under another spelling (`Issuer`) is its field's, as
// in Go: such a document was refused as not naming its issuer.
import t from 'tap';
import { startDiscoveryIdp } from './helpers/discovery-idp.js';

// Each path prefix names a document: the good one's members, with these set (or added) over them.
const OVERRIDES: Record<string, Record<string, unknown> | ((issuer: string) => Record<string, unknown>)> = {
  good: {},
  'issuer-number': { issuer: 7 },
  'jwks-object': { jwks_uri: { href: 'https://idp.example/jwks' } },
  'authorize-array': { authorization_endpoint: ['https://idp.example/auth'] },
  'userinfo-bool': { userinfo_endpoint: true },
  'scopes-string': { scopes_supported: 'openid email' },
  'response-types-number': { response_types_supported: ['code', 1] },
  'token-other-spelling': { Token_Endpoint: 5 },
  nulls: { userinfo_endpoint: null, scopes_supported: null },
  spellings: (issuer) => ({ Issuer: issuer, issuer: undefined, TOKEN_ENDPOINT: `${issuer}/token`, token_endpoint: undefined }),
};
const { base, api, token, create, discoveryUrl } = await startDiscoveryIdp(t, (name, issuer) => {
  if (name === 'list') return '[]';
  if (!(name in OVERRIDES)) return undefined;
  const good = { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` };
  const override = OVERRIDES[name];
  return JSON.stringify({ ...good, ...(typeof override === 'function' ? override(issuer) : override) });
});

const decodeFailure = (url: string, why: string) => ({
  code: 400,
  error_code: 'validation_failed',
  msg: `OIDC discovery from "${url}" failed: oidc: failed to decode discovery document from ${url}: json: ${why}`,
});
const rowsOf = async (name: string) =>
  (await api.db.query(`select cached_discovery from custom_oauth_providers where identifier = $1`, [`custom:${name}`])).rows;

const CASES: [string, string][] = [
  ['issuer-number', 'cannot unmarshal number into Go struct field OIDCDiscoveryDocument.issuer of type string'],
  ['jwks-object', 'cannot unmarshal object into Go struct field OIDCDiscoveryDocument.jwks_uri of type string'],
  ['authorize-array', 'cannot unmarshal array into Go struct field OIDCDiscoveryDocument.authorization_endpoint of type string'],
  ['userinfo-bool', 'cannot unmarshal bool into Go struct field OIDCDiscoveryDocument.userinfo_endpoint of type string'],
  ['scopes-string', 'cannot unmarshal string into Go struct field OIDCDiscoveryDocument.scopes_supported of type []string'],
  ['response-types-number', 'cannot unmarshal number into Go struct field OIDCDiscoveryDocument.response_types_supported of type string'],
  ['token-other-spelling', 'cannot unmarshal number into Go struct field OIDCDiscoveryDocument.token_endpoint of type string'],
];

for (const [name, why] of CASES) {
  t.test(`a create whose document has ${name} is refused and writes nothing`, async (t) => {
    const res = await create(name);
    t.equal(res.status, 400, res.text);
    t.strictSame(res.body, decodeFailure(discoveryUrl(name), why));
    t.equal((await rowsOf(name)).length, 0);
  });
}

t.test('a document that is not a JSON object is refused as the original decodes it', async (t) => {
  const res = await create('list');
  t.equal(res.status, 400, res.text);
  t.strictSame(
    res.body,
    decodeFailure(discoveryUrl('list'), 'cannot unmarshal array into Go value of type utilities.OIDCDiscoveryDocument'),
  );
  t.equal((await rowsOf('list')).length, 0);
});

t.test('an update fetching a mistyped document is refused and leaves the row as it was', async (t) => {
  t.equal((await create('good')).status, 201);
  const before = await rowsOf('good');
  const url = discoveryUrl('scopes-string');
  const res = await api.request('PUT', '/admin/custom-providers/custom:good', { token, body: { discovery_url: url } });
  t.equal(res.status, 400, res.text);
  t.strictSame(
    res.body,
    decodeFailure(url, 'cannot unmarshal string into Go struct field OIDCDiscoveryDocument.scopes_supported of type []string'),
  );
  t.strictSame(await rowsOf('good'), before);
  const { rows } = await api.db.query(`select discovery_url from custom_oauth_providers where identifier = 'custom:good'`);
  t.equal(rows[0].discovery_url, null);
});

t.test('null members decode as absent and are not stored', async (t) => {
  const res = await create('nulls');
  t.equal(res.status, 201, res.text);
  t.notOk('userinfo_endpoint' in res.body.discovery_document);
  t.notOk('scopes_supported' in res.body.discovery_document);
  const [row] = await rowsOf('nulls');
  t.notOk('scopes_supported' in row.cached_discovery);
});

t.test('members under another spelling of their field are read as the original reads them', async (t) => {
  const res = await create('spellings');
  t.equal(res.status, 201, res.text);
  t.equal(res.body.discovery_document?.issuer, `${base}/spellings`);
  t.equal(res.body.discovery_document?.token_endpoint, `${base}/spellings/token`);
});
