// SAML SSO, slice one: the settings (start-up checks, GET /settings), the service provider's metadata and
// the admin API of identity providers, with each refusal's status, error_code and message.
import t from 'tap';
import forge from 'node-forge';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, spPrivateKey } from './helpers/saml-idp.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';

const SP_KEY = spPrivateKey();
const api = await startTestService({ AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: SP_KEY });
t.teardown(() => api.stop());
const token = await adminToken();
const admin = (method: string, path: string, body?: unknown) => api.request(method, path, { token, ...(body ? { body } : {}) });

t.test('start-up refuses SAML without a usable key, in the original words', async (t) => {
  const base = {
    DATABASE_URL: 'postgres://localhost/x',
    AUTH_DB_DRIVER: 'postgres',
    AUTH_JWT_SECRET: 'a-secret-of-sufficient-length',
    AUTH_SITE_URL: 'https://app.example.com',
    AUTH_API_EXTERNAL_URL: 'https://auth.example.com',
    AUTH_SAML_ENABLED: 'true',
  };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ env: { ...base, ...env }, envFile: null });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.filter((p: string) => p.includes('SAML'));
      throw err;
    }
  };
  t.strictSame(problems({}), ['AUTH_SAML_PRIVATE_KEY: is required when SAML_ENABLED is true']);
  t.strictSame(problems({ AUTH_SAML_PRIVATE_KEY: 'not base64!' }), [
    'AUTH_SAML_PRIVATE_KEY: SAML private key not in standard Base64 format',
  ]);
  t.strictSame(problems({ AUTH_SAML_PRIVATE_KEY: 'aGVsbG8=' }), ['AUTH_SAML_PRIVATE_KEY: SAML private key not in PKCS#1 format']);
  t.strictSame(problems({ AUTH_SAML_PRIVATE_KEY: spPrivateKey(1024) }), [
    'AUTH_SAML_PRIVATE_KEY: SAML private key must be at least RSA 2048',
  ]);
  t.strictSame(problems({ AUTH_SAML_PRIVATE_KEY: SP_KEY, AUTH_SAML_PRIVATE_KEY_NEXT: 'aGVsbG8=' }), [
    'AUTH_SAML_PRIVATE_KEY_NEXT: SAML next private key not in PKCS#1 format',
  ]);
  t.strictSame(problems({ AUTH_SAML_PRIVATE_KEY: SP_KEY }), []);
  t.strictSame(problems({ AUTH_SAML_ENABLED: 'false' }), [], 'no key needed with SAML off');
  const validity = (value: string) =>
    loadConfig({ env: { ...base, AUTH_SAML_PRIVATE_KEY: SP_KEY, AUTH_SAML_RELAY_STATE_VALIDITY_PERIOD: value }, envFile: null }).saml
      .relayStateValiditySeconds;
  t.equal(validity('0'), 120, 'a relay state validity period of 0 is the default two minutes, as in the original');
  t.equal(validity('5m'), 300);
});

t.test('GET /settings says SAML is on, and that no next key is configured', async (t) => {
  const res = await api.request('GET', '/settings');
  t.equal(res.body.saml_enabled, true);
  t.equal(res.body.saml_private_key_next_configured, false);
});

t.test('GET /sso/saml/metadata describes this SP with the certificate of SAML_PRIVATE_KEY', async (t) => {
  const res = await api.request('GET', '/sso/saml/metadata');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/xml');
  t.equal(res.headers.get('cache-control'), 'public, max-age=600');
  t.equal(res.headers.get('content-disposition'), null);
  t.match(res.text, `entityID="${api.url}/sso/saml/metadata"`);
  t.match(res.text, `Location="${api.url}/sso/saml/acs"`);
  t.notMatch(res.text, 'use="encryption"', 'no encryption key unless SAML_ALLOW_ENCRYPTED_ASSERTIONS');
  const certBase64 = /<X509Certificate>([^<]+)<\/X509Certificate>/.exec(res.text)![1];
  const cert = forge.pki.certificateFromAsn1(forge.asn1.fromDer(forge.util.decode64(certBase64)));
  const certKey = createPublicKey(forge.pki.publicKeyToPem(cert.publicKey)).export({ format: 'jwk' });
  const ourKey = createPublicKey(createPrivateKey({ key: Buffer.from(SP_KEY, 'base64'), format: 'der', type: 'pkcs1' })).export({
    format: 'jwk',
  });
  t.equal(certKey.n, ourKey.n, 'the certificate carries the configured key');
  t.equal(cert.subject.getField('CN').value, 'SAML 2.0 Certificate for 127.0.0.1');
  const validUntil = Date.parse(/validUntil="([^"]+)"/.exec(res.text)![1]);
  t.ok(validUntil > Date.now() + 47 * 3600_000 && validUntil < Date.now() + 49 * 3600_000, 'valid for 48 hours');

  const again = await api.request('GET', '/sso/saml/metadata');
  t.equal(/<X509Certificate>([^<]+)</.exec(again.text)![1], certBase64, 'the same key gives the same certificate');

  const download = await api.request('GET', '/sso/saml/metadata?download=true');
  t.equal(download.headers.get('content-disposition'), 'attachment; filename="metadata.xml"');
  const longer = Date.parse(/validUntil="([^"]+)"/.exec(download.text)![1]);
  t.ok(longer > Date.now() + 4 * 365 * 24 * 3600_000, 'a downloaded file is valid for years');
});

t.test('admin CRUD of SSO providers', async (t) => {
  const idp = new TestIdp();
  const created = await admin('POST', '/admin/sso/providers', {
    type: 'saml',
    metadata_xml: idp.metadata(),
    domains: ['Example.COM', 'example.org'],
    attribute_mapping: { keys: { name: { name: 'displayName' } } },
    resource_id: 'acme',
  });
  t.equal(created.status, 201);
  const id = created.body.id;
  t.strictSame(created.body, {
    id,
    resource_id: 'acme',
    disabled: null,
    saml: { entity_id: idp.entityId, metadata_xml: idp.metadata(), attribute_mapping: { keys: { name: { name: 'displayName' } } } },
    domains: [{ domain: 'example.com' }, { domain: 'example.org' }],
    created_at: created.body.created_at,
    updated_at: created.body.updated_at,
  });

  const list = await admin('GET', '/admin/sso/providers');
  t.equal(list.status, 200);
  t.equal(list.body.items.length, 1);
  t.equal(list.body.items[0].saml.metadata_xml, undefined, 'the list leaves the metadata out');
  t.equal((await admin('GET', '/admin/sso/providers?resource_id_prefix=ac')).body.items.length, 1);
  t.equal((await admin('GET', '/admin/sso/providers?resource_id=other')).body.items.length, 0);

  const byId = await admin('GET', `/admin/sso/providers/${id}`);
  t.strictSame(byId.body, created.body);
  t.strictSame((await admin('GET', '/admin/sso/providers/resource_acme')).body.id, id);
  // Any spelling the original's UUID reading takes names the provider.
  for (const spelling of [id.replace(/-/g, ''), `{${id.toUpperCase()}}`, `urn:uuid:${id}`, `urn:uuid:${id.replace(/-/g, '')}`]) {
    const res = await admin('GET', `/admin/sso/providers/${encodeURIComponent(spelling)}`);
    t.strictSame([res.status, res.body.id], [200, id], spelling);
  }

  const updated = await admin('PUT', `/admin/sso/providers/${id}`, {
    domains: ['example.com', 'example.net'],
    disabled: true,
    name_id_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  });
  t.equal(updated.status, 200);
  t.strictSame(updated.body.domains, [{ domain: 'example.com' }, { domain: 'example.net' }]);
  t.equal(updated.body.disabled, true);
  t.equal(
    updated.body.saml.name_id_format,
    undefined,
    'name_id_format is written only with new metadata or a changed mapping, as the original writes it',
  );
  t.strictSame(updated.body.saml.attribute_mapping, { keys: { name: { name: 'displayName' } } }, 'absent fields are kept');

  const other = new TestIdp();
  const dupEntity = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: idp.metadata() });
  t.strictSame(
    [dupEntity.status, dupEntity.body],
    [
      422,
      {
        code: 422,
        error_code: 'saml_idp_already_exists',
        msg: `SAML Identity Provider with this EntityID (${idp.entityId}) already exists`,
      },
    ],
  );
  const dupDomain = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: other.metadata(), domains: ['EXAMPLE.net'] });
  t.strictSame(
    [dupDomain.status, dupDomain.body],
    [
      400,
      {
        code: 400,
        error_code: 'sso_domain_already_exists',
        msg: `SSO Domain 'example.net' is already assigned to an SSO identity provider (${id})`,
      },
    ],
  );
  const dupResource = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: other.metadata(), resource_id: 'ACME' });
  t.strictSame([dupResource.status, dupResource.body.error_code], [422, 'conflict'], 'resource_id is unique, ignoring case');
  t.equal((await admin('GET', '/admin/sso/providers')).body.items.length, 1, 'a refused create writes nothing');

  const mismatch = await admin('PUT', `/admin/sso/providers/${id}`, { metadata_xml: other.metadata() });
  t.strictSame(
    [mismatch.status, mismatch.body],
    [
      400,
      {
        code: 400,
        error_code: 'saml_entity_id_mismatch',
        msg: `SAML Metadata can be updated only if the EntityID matches for the provider; expected '${idp.entityId}' but got '${other.entityId}'`,
      },
    ],
  );

  const deleted = await admin('DELETE', `/admin/sso/providers/${encodeURIComponent(`{${id.replace(/-/g, '')}}`)}`);
  t.equal(deleted.status, 200);
  t.equal(deleted.body.id, id);
  const gone = await admin('GET', `/admin/sso/providers/${id}`);
  t.strictSame(
    [gone.status, gone.body],
    [404, { code: 404, error_code: 'sso_provider_not_found', msg: 'SSO Identity Provider not found' }],
  );
  const { rows } = await api.db.query('select count(*)::int as n from sso_domains');
  t.equal(rows[0].n, 0, 'its domains went with it');
});

t.test('PUT writes the SAML row only with new metadata or a changed mapping, as the original', async (t) => {
  const idp = new TestIdp();
  const EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
  const mapping = { keys: { name: { name: 'displayName' } } };
  const created = await admin('POST', '/admin/sso/providers', {
    type: 'saml',
    metadata_xml: idp.metadata(),
    attribute_mapping: mapping,
    name_id_format: EMAIL,
  });
  const id = created.body.id;
  t.teardown(() => admin('DELETE', `/admin/sso/providers/${id}`));
  const stamps = async () =>
    (
      await api.db.query(
        `select p.updated_at as provider, s.updated_at as saml from sso_providers p join saml_providers s on s.sso_provider_id = p.id
          where p.id = $1`,
        [id],
      )
    ).rows[0];
  const before = await stamps();

  const disabled = await admin('PUT', `/admin/sso/providers/${id}`, { disabled: true, name_id_format: EMAIL });
  t.equal(disabled.body.disabled, true);
  t.equal(disabled.body.saml.name_id_format, EMAIL);
  const afterDisable = await stamps();
  t.equal(afterDisable.saml.getTime(), before.saml.getTime(), 'the SAML row, and its metadata freshness, untouched');
  t.ok(afterDisable.provider > before.provider, 'the provider row written');

  const onlyDisabled = await admin('PUT', `/admin/sso/providers/${id}`, { disabled: false });
  t.equal(onlyDisabled.body.saml.name_id_format, EMAIL, 'PUT {disabled} keeps name_id_format');
  const emptyMapping = await admin('PUT', `/admin/sso/providers/${id}`, { attribute_mapping: {}, name_id_format: EMAIL });
  t.strictSame(emptyMapping.body.saml.attribute_mapping, mapping, 'a mapping without keys leaves the stored one');
  const sameMapping = await admin('PUT', `/admin/sso/providers/${id}`, { attribute_mapping: mapping, name_id_format: EMAIL });
  t.equal(sameMapping.status, 200);
  const noOp = await stamps();
  t.equal(noOp.saml.getTime(), before.saml.getTime(), 'the same mapping again writes nothing');
  await admin('PUT', `/admin/sso/providers/${id}`, { name_id_format: EMAIL });
  t.equal((await stamps()).provider.getTime(), noOp.provider.getTime(), 'a PUT that changes nothing writes nothing');

  const remapped = await admin('PUT', `/admin/sso/providers/${id}`, {
    attribute_mapping: { keys: { name: { name: 'cn', names: [], array: false, extra: 1 } } },
  });
  t.strictSame(remapped.body.saml.attribute_mapping, { keys: { name: { name: 'cn' } } }, 'stored in the original shape');
  t.equal(remapped.body.saml.name_id_format, undefined, "written with the mapping, name_id_format is the body's (none)");
  t.ok((await stamps()).saml > before.saml);
});

t.test('admin refusals', async (t) => {
  const idp = new TestIdp();
  const v = (msg: string) => [400, { code: 400, error_code: 'validation_failed', msg }];
  const cases: Array<[string, unknown, unknown[]]> = [
    ['no type', { metadata_xml: idp.metadata() }, v("Only 'saml' supported for SSO provider type")],
    [
      'both sources',
      { type: 'saml', metadata_xml: 'x', metadata_url: 'https://idp.example.test/m' },
      v('Only one of metadata_xml or metadata_url needs to be set'),
    ],
    ['no source', { type: 'saml' }, v('Either metadata_xml or metadata_url must be set')],
    ['bad url', { type: 'saml', metadata_url: 'not a url' }, v('metadata_url is not a valid URL')],
    ['http url', { type: 'saml', metadata_url: 'http://idp.example.test/m' }, v('metadata_url is not a HTTPS URL')],
    // The original's own example: a backslash, which a WHATWG parser would read as a slash, is refused unfetched.
    ['backslash url', { type: 'saml', metadata_url: 'https://idp.example.test\\o/saml2?idpid=X' }, v('metadata_url is not a valid URL')],
    ['tab in url', { type: 'saml', metadata_url: 'https://idp.example.test/m\tx' }, v('metadata_url is not a valid URL')],
    [
      'name id format',
      { type: 'saml', metadata_xml: idp.metadata(), name_id_format: 'nope' },
      v(
        'name_id_format must be unspecified or one of urn:oasis:names:tc:SAML:2.0:nameid-format:persistent, urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress, urn:oasis:names:tc:SAML:2.0:nameid-format:transient, urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
      ),
    ],
    ['not xml', { type: 'saml', metadata_xml: '<EntityDescriptor' }, [400, { code: 400, error_code: 'validation_failed' }]],
    [
      'doctype',
      { type: 'saml', metadata_xml: '<!DOCTYPE x [<!ENTITY a "b">]><x/>' },
      [400, { code: 400, error_code: 'validation_failed' }],
    ],
    [
      'no entity id',
      { type: 'saml', metadata_xml: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>' },
      v('SAML Metadata does not contain an EntityID'),
    ],
    [
      'no idp',
      { type: 'saml', metadata_xml: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>' },
      v('SAML Metadata does not contain any IDPSSODescriptor'),
    ],
    [
      'two idps',
      {
        type: 'saml',
        metadata_xml:
          '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><IDPSSODescriptor/><IDPSSODescriptor/></EntityDescriptor>',
      },
      v('SAML Metadata contains multiple IDPSSODescriptors'),
    ],
    [
      'domains not a list',
      { type: 'saml', metadata_xml: idp.metadata(), domains: 'example.com' },
      [
        400,
        {
          code: 400,
          error_code: 'bad_json',
          msg: 'Could not parse request body as JSON: json: cannot unmarshal string into Go struct field CreateSSOProviderParams.domains of type []string',
        },
      ],
    ],
  ];
  for (const [name, body, expected] of cases) {
    const res = await admin('POST', '/admin/sso/providers', body);
    t.match([res.status, res.body], expected, name);
  }
  t.equal((await admin('GET', '/admin/sso/providers')).body.items.length, 0);
  const notUuid = await admin('GET', '/admin/sso/providers/not-a-uuid');
  t.strictSame([notUuid.status, notUuid.body.error_code], [404, 'sso_provider_not_found']);
  // The provider is looked up before the body is read, as the original's loader runs first.
  const notFound = [404, { code: 404, error_code: 'sso_provider_not_found', msg: 'SSO Identity Provider not found' }];
  for (const body of [{ metadata_url: 'http://idp.example.test/m' }, { domains: 'example.com' }, { disabled: 'yes' }]) {
    const res = await admin('PUT', `/admin/sso/providers/${crypto.randomUUID()}`, body);
    t.strictSame([res.status, res.body], notFound, JSON.stringify(body));
  }
  const badJson = await api.request('PUT', '/admin/sso/providers/resource_nobody', {
    token,
    raw: '{not json',
    headers: { 'content-type': 'application/json' },
  });
  t.strictSame([badJson.status, badJson.body], notFound, 'a body that does not parse');
  const noAdmin = await api.request('GET', '/admin/sso/providers');
  t.equal(noAdmin.status, 401);
});

t.test('with SAML off the sign-in routes are 404 saml_provider_disabled; the admin routes still work, as the original', async (t) => {
  const off = await startTestService();
  t.teardown(() => off.stop());
  const disabled = { code: 404, error_code: 'saml_provider_disabled', msg: 'SAML 2.0 is disabled' };
  for (const [method, path] of [
    ['GET', '/sso/saml/metadata'],
    ['POST', '/sso/saml/acs'],
    ['POST', '/sso'],
  ]) {
    const res = await off.request(method, path, { token, ...(method === 'GET' ? {} : { body: {} }) });
    t.strictSame([res.status, res.body], [404, disabled], `${method} ${path}`);
  }
  const listed = await off.request('GET', '/admin/sso/providers', { token });
  t.strictSame([listed.status, listed.body], [200, { items: [] }], 'providers can be managed before SAML is turned on');
  const unknown = await off.request('GET', `/admin/sso/providers/${crypto.randomUUID()}`, { token });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error_code, 'sso_provider_not_found');
  t.equal((await off.request('GET', '/settings')).body.saml_enabled, false);
});
