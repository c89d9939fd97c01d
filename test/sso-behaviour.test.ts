// SAML SSO as clients and operators observe it, compared with the original (internal/api/sso.go, samlacs.go,
// saml.go, ssoadmin.go): what the other sso-*.test.ts files leave out. POST /sso's answers and refusals,
// the SP metadata's headers, how the ACS reads its form (RelayState in any UUID spelling, the posted body
// before the query, only a posted SAMLResponse verified) and the shape of its error redirects, and the
// admin API's validation and resource shape. Where we depart from the original on purpose (docs/sso-saml.md),
// the test says so.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { TestIdp, metadataCertificates, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

const api = await startTestService({
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(() => api.stop());
const token = await adminToken();
const admin = (method: string, path: string, body?: unknown) => api.request(method, path, { token, ...(body ? { body } : {}) });
const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
const spCert = metadataCertificates((await api.request('GET', '/sso/saml/metadata')).text)[0];

const idp = new TestIdp();
const created = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: idp.metadata(), domains: ['behave.test'] });
const providerId: string = created.body.id;
const EMAIL = { name: 'email', values: ['bea@behave.test'] };
const SITE = 'http://localhost:3000/';

/** POST /sso with skip_http_redirect, and the AuthnRequest the IdP reads from the URL it answers. */
async function start(body: Record<string, unknown> = {}) {
  const res = await api.request('POST', '/sso', { body: { domain: 'behave.test', skip_http_redirect: true, ...body } });
  if (res.status !== 200) throw new Error(`POST /sso ${res.status} ${res.text}`);
  return idp.readRequest(res.body.url, spCert);
}

/** A post to the ACS as a browser or a proxy may make it: a form body of any content type, a query. */
async function acsPost(body: string, o: { query?: string; contentType?: string } = {}) {
  const res = await fetch(`${sp.acsUrl}${o.query ? `?${o.query}` : ''}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': o.contentType ?? 'application/x-www-form-urlencoded' },
    body,
  });
  await res.text();
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location) : null };
}
const kept = async (relayStates: string[]) =>
  (await api.db.query('select 1 from saml_relay_states where id = any($1::uuid[])', [relayStates])).rowCount;
const form = (fields: Array<[string, string]>) => new URLSearchParams(fields).toString();

/** What a redirect of the ACS says: where it goes and, for an error, every parameter it carries. */
function answer(r: { status: number; location: URL | null }) {
  const l = r.location!;
  return {
    status: r.status,
    at: `${l.origin}${l.pathname}`,
    query: Object.fromEntries(l.searchParams),
    signedIn: new URLSearchParams(l.hash.slice(1)).has('access_token'),
  };
}
const error = (error: string, error_code: string, error_description: string) => ({
  status: 303,
  at: SITE,
  query: { error, error_code, error_description },
  signedIn: false,
});
const INVALID = error('invalid_request', 'validation_failed', 'SAML Assertion is not valid');
const signedIn = (at: string) => ({ status: 302, at, query: {}, signedIn: true });

t.test('POST /sso: the IdP URL as JSON or as a 303, whatever skip_http_redirect says', async (t) => {
  const json = await api.request('POST', '/sso', { body: { provider_id: providerId, skip_http_redirect: true } });
  t.equal(json.status, 200);
  t.strictSame(Object.keys(json.body), ['url'], 'only the url');
  t.ok(json.body.url.startsWith(`${idp.ssoUrl}?SAMLRequest=`));
  for (const skip of [false, null, undefined]) {
    const res = await api.request('POST', '/sso', { body: { domain: 'behave.test', skip_http_redirect: skip } });
    t.equal(res.status, 303, `skip_http_redirect ${skip}`);
    t.ok(res.headers.get('location')!.startsWith(`${idp.ssoUrl}?SAMLRequest=`));
    t.equal(res.text, '', 'no body');
  }
});

t.test('POST /sso: PKCE needs both of its fields, in the original words', async (t) => {
  const msg = 'PKCE flow requires code_challenge_method and code_challenge';
  for (const body of [{ code_challenge: 'c'.repeat(43) }, { code_challenge_method: 's256' }]) {
    const res = await api.request('POST', '/sso', { body: { domain: 'behave.test', ...body } });
    t.strictSame([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg }], JSON.stringify(body));
  }
  const before = (await api.db.query('select count(*)::int as n from saml_relay_states')).rows[0].n;
  const res = await api.request('POST', '/sso', { body: { domain: 'behave.test', code_challenge: 'c'.repeat(43) } });
  t.equal(res.status, 400);
  t.equal((await api.db.query('select count(*)::int as n from saml_relay_states')).rows[0].n, before, 'a refusal keeps no relay state');
});

t.test('POST /sso: a domain is found ignoring case (a departure: the original matches it exactly)', async (t) => {
  const res = await api.request('POST', '/sso', { body: { domain: 'BEHAVE.Test', skip_http_redirect: true } });
  t.equal(res.status, 200);
});

t.test('POST /sso: a redirect_to the allow list does not name ends at SITE_URL, as at the original’s ACS', async (t) => {
  const request = await start({ redirect_to: 'https://evil.example.test/x' });
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { inResponseTo: request.id, nameId: 'bea-1', attributes: [EMAIL] }),
    RelayState: request.relayState,
  });
  t.strictSame(answer(acs), signedIn(SITE));
});

t.test('GET /sso/saml/metadata: a file to download only with download=true', async (t) => {
  for (const [query, disposition] of [
    ['', null],
    ['?download=true', 'attachment; filename="metadata.xml"'],
    ['?download=1', null],
    ['?download=TRUE', null],
  ] as const) {
    const res = await api.request('GET', `/sso/saml/metadata${query}`);
    t.strictSame(
      [res.status, res.headers.get('content-type'), res.headers.get('cache-control'), res.headers.get('content-disposition')],
      [200, 'application/xml', 'public, max-age=600', disposition],
      query || 'no query',
    );
  }
});

t.test('the ACS reads a RelayState in any spelling of a UUID, as the original does', async (t) => {
  const spellings: Array<[string, (id: string) => string]> = [
    ['upper case', (id) => id.toUpperCase()],
    ['braces', (id) => `{${id}}`],
    ['no hyphens', (id) => id.replace(/-/g, '')],
    ['urn:uuid:', (id) => `urn:uuid:${id}`],
  ];
  const taken: string[] = [];
  for (const [name, spell] of spellings) {
    const request = await start({ redirect_to: 'https://app.example.test/spelled' });
    taken.push(request.relayState);
    const acs = await postToAcs(api.url, {
      SAMLResponse: idp.response(sp, { inResponseTo: request.id, nameId: 'bea-1', attributes: [EMAIL] }),
      RelayState: spell(request.relayState),
    });
    t.strictSame(answer(acs), signedIn('https://app.example.test/spelled'), name);
  }
  t.equal(await kept(taken), 0, 'each relay state spent');
  // The nil UUID names nothing, and is no URL either.
  for (const nil of ['00000000-0000-0000-0000-000000000000', '{00000000000000000000000000000000}']) {
    t.strictSame(
      answer(await postToAcs(api.url, { SAMLResponse: 'x', RelayState: nil })),
      error('invalid_request', 'validation_failed', 'SAML RelayState is not a valid UUID or URL'),
      nil,
    );
  }
});

t.test('the ACS verifies only a posted SAMLResponse; the form’s fields come from the body first', async (t) => {
  const idpInitiated = idp.response(sp, { nameId: 'bea-1', attributes: [EMAIL] });
  t.strictSame(
    answer(await acsPost('', { query: form([['SAMLResponse', idpInitiated]]) })),
    INVALID,
    'an IdP-initiated response in the query names its IdP, but signs nobody in',
  );
  let request = await start();
  const answering = () => idp.response(sp, { inResponseTo: request.id, nameId: 'bea-1', attributes: [EMAIL] });
  t.strictSame(
    answer(await acsPost(form([['RelayState', request.relayState]]), { query: form([['SAMLResponse', answering()]]) })),
    INVALID,
    'nor does an SP-initiated one',
  );
  t.equal(await kept([request.relayState]), 0, 'the relay state is spent all the same');

  request = await start({ redirect_to: 'https://app.example.test/body' });
  t.strictSame(
    answer(
      await acsPost(
        form([
          ['SAMLResponse', answering()],
          ['RelayState', request.relayState],
          ['RelayState', 'not a uuid or url'],
        ]),
        { query: form([['RelayState', 'also not one']]) },
      ),
    ),
    signedIn('https://app.example.test/body'),
    "the body's first RelayState, not a second one nor the query's",
  );
  request = await start({ redirect_to: 'https://app.example.test/query' });
  t.strictSame(
    answer(await acsPost(form([['SAMLResponse', answering()]]), { query: form([['RelayState', request.relayState]]) })),
    signedIn('https://app.example.test/query'),
    'a RelayState in the query alone is read',
  );
  request = await start({ redirect_to: 'https://app.example.test/typed' });
  t.strictSame(
    answer(
      await acsPost(
        form([
          ['SAMLResponse', answering()],
          ['RelayState', request.relayState],
        ]),
        { contentType: 'Application/X-WWW-Form-URLEncoded; charset=UTF-8' },
      ),
    ),
    signedIn('https://app.example.test/typed'),
    'the media type matched ignoring case and parameters',
  );

  // A multipart/form-data post, as an IdP's form may make it: its text fields are read, after the query's.
  const multipart = async (fields: Array<[string, string]>, query?: string) => {
    const data = new FormData();
    for (const [name, value] of fields) data.append(name, value);
    const encoded = new Request('http://localhost/', { method: 'POST', body: data });
    const raw = Buffer.from(await encoded.arrayBuffer()).toString('latin1');
    return answer(await acsPost(raw, { query, contentType: encoded.headers.get('content-type')! }));
  };
  request = await start({ redirect_to: 'https://app.example.test/multipart' });
  t.strictSame(
    await multipart([
      ['SAMLResponse', answering()],
      ['RelayState', request.relayState],
    ]),
    signedIn('https://app.example.test/multipart'),
    'a multipart post signs in',
  );
  request = await start({ redirect_to: 'https://app.example.test/multipart' });
  t.strictSame(
    await multipart(
      [
        ['SAMLResponse', answering()],
        ['RelayState', 'not a uuid or url'],
      ],
      form([['RelayState', request.relayState]]),
    ),
    signedIn('https://app.example.test/multipart'),
    "with a multipart body the query's RelayState comes first, as Go's form reading puts it",
  );
  t.strictSame(
    answer(await acsPost('--x\r\nnot multipart', { contentType: 'multipart/form-data; boundary=x' })),
    error('invalid_request', 'validation_failed', 'SAMLResponse is missing'),
    'a multipart body that does not parse has no fields',
  );
});

t.test('the ACS error redirect: 303 to SITE_URL with error, error_code and error_description only', async (t) => {
  t.strictSame(answer(await postToAcs(api.url, {})), error('invalid_request', 'validation_failed', 'SAMLResponse is missing'));
  t.strictSame(
    answer(await postToAcs(api.url, { SAMLResponse: 'x', RelayState: crypto.randomUUID() })),
    error('server_error', 'saml_relay_state_not_found', 'SAML RelayState does not exist, try logging in again?'),
    'a 404 is a server_error, as the original names statuses it has no OAuth name for',
  );
  const request = await start();
  await api.db.query("update saml_relay_states set created_at = now() - interval '1 hour'");
  t.strictSame(
    answer(await postToAcs(api.url, { SAMLResponse: 'x', RelayState: request.relayState })),
    error('server_error', 'saml_relay_state_expired', 'SAML RelayState has expired. Try logging in again?'),
  );
  t.strictSame(
    answer(await postToAcs(api.url, { SAMLResponse: new TestIdp().response(sp, { attributes: [EMAIL] }) })),
    error('server_error', 'saml_idp_not_found', 'A SAML connection has not been established with this Identity Provider'),
  );
});

t.test('admin: PUT validation, in the original words and order', async (t) => {
  const other = new TestIdp();
  const made = await admin('POST', '/admin/sso/providers', { type: 'saml', metadata_xml: other.metadata(), domains: ['other.test'] });
  const id = made.body.id;
  t.teardown(() => admin('DELETE', `/admin/sso/providers/${id}`));
  const v = (msg: string) => [400, { code: 400, error_code: 'validation_failed', msg }];
  const mistyped = (words: string) => [
    400,
    { code: 400, error_code: 'bad_json', msg: `Could not parse request body as JSON: json: cannot unmarshal ${words}` },
  ];
  const cases: Array<[unknown, unknown[]]> = [
    [
      { metadata_xml: other.metadata(), metadata_url: 'https://idp.example.test/m' },
      v('Only one of metadata_xml or metadata_url needs to be set'),
    ],
    [{ metadata_url: 'ftp://idp.example.test/m' }, v('metadata_url is not a HTTPS URL')],
    [
      { name_id_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:entity' },
      v(
        'name_id_format must be unspecified or one of urn:oasis:names:tc:SAML:2.0:nameid-format:persistent, urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress, urn:oasis:names:tc:SAML:2.0:nameid-format:transient, urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
      ),
    ],
    [
      { domains: ['behave.test'] },
      [
        400,
        {
          code: 400,
          error_code: 'sso_domain_already_exists',
          msg: `SSO domain 'behave.test' already assigned to another provider (${providerId})`,
        },
      ],
    ],
    // Departures: the original decodes these into Go types, failing with bad_json and Go's message.
    [{ domains: [''] }, v('domains must be an array of domain names')],
    [{ domains: [5] }, mistyped('number into Go struct field CreateSSOProviderParams.domains of type string')],
    [
      { attribute_mapping: { keys: { email: 'mail' } } },
      mistyped('string into Go struct field SAMLAttributeMapping.attribute_mapping.keys of type models.SAMLAttribute'),
    ],
    [
      { attribute_mapping: { keys: { email: { Name: 5 } } } },
      mistyped('number into Go struct field SAMLAttribute.attribute_mapping.keys.name of type string'),
    ],
    [
      { attribute_mapping: { keys: { email: { names: ['mail', true] } } } },
      mistyped('bool into Go struct field SAMLAttribute.attribute_mapping.keys.names of type string'),
    ],
    [
      { attribute_mapping: { keys: [] } },
      mistyped('array into Go struct field SAMLAttributeMapping.attribute_mapping.keys of type map[string]models.SAMLAttribute'),
    ],
    [
      { attribute_mapping: [] },
      mistyped('array into Go struct field CreateSSOProviderParams.attribute_mapping of type models.SAMLAttributeMapping'),
    ],
    [{ disabled: 'no' }, mistyped('string into Go struct field CreateSSOProviderParams.disabled of type bool')],
  ];
  for (const [body, expected] of cases) {
    const res = await admin('PUT', `/admin/sso/providers/${id}`, body);
    t.strictSame([res.status, res.body], expected, JSON.stringify(body));
  }
  const typed = await admin('PUT', `/admin/sso/providers/${id}`, { type: 'oidc' });
  t.equal(typed.status, 200, 'type is not looked at on update');
  const withResource = await admin('PUT', `/admin/sso/providers/${id}`, { resource_id: 'res-1' });
  t.equal(withResource.body.resource_id, 'res-1');
  const cleared = await admin('PUT', `/admin/sso/providers/${id}`, { resource_id: '', domains: [] });
  t.notOk('resource_id' in cleared.body, 'an empty resource_id clears it');
  t.strictSame(cleared.body.domains, [], 'an empty list removes every domain');
  const gone = await api.request('POST', '/sso', { body: { domain: 'other.test' } });
  t.strictSame([gone.status, gone.body.error_code], [404, 'sso_provider_not_found']);
});

t.test('admin: create refusals and what is kept', async (t) => {
  const refused = await admin('POST', '/admin/sso/providers', { type: 'SAML', metadata_xml: new TestIdp().metadata() });
  t.strictSame([refused.status, refused.body.msg], [400, "Only 'saml' supported for SSO provider type"], 'type is case-sensitive');
  // An empty resource_id is stored and answered as "", as in the original (sso-admin-resource-behaviour.test.ts).
  // Departure: the original fails with a 500 on a domain repeated in one body.
  const made = await admin('POST', '/admin/sso/providers', {
    type: 'saml',
    metadata_xml: new TestIdp().metadata(),
    resource_id: '',
    domains: ['twice.test', 'TWICE.test'],
  });
  t.teardown(() => admin('DELETE', `/admin/sso/providers/${made.body.id}`));
  t.equal(made.status, 201);
  t.equal(made.body.resource_id, '');
  t.strictSame(made.body.domains, [{ domain: 'twice.test' }]);
});

t.test('admin: the resource as the original serialises it, and the list', async (t) => {
  const other = new TestIdp();
  const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
  const made = await admin('POST', '/admin/sso/providers', {
    type: 'saml',
    metadata_xml: other.metadata(),
    resource_id: 'shape-1',
    disabled: false,
    name_id_format: EMAIL_FORMAT,
    attribute_mapping: { keys: { email: { names: ['mail', 'email'] } } },
  });
  t.teardown(() => admin('DELETE', `/admin/sso/providers/${made.body.id}`));
  t.strictSame(Object.keys(made.body), ['id', 'resource_id', 'disabled', 'saml', 'domains', 'created_at', 'updated_at']);
  t.strictSame(made.body.saml, {
    entity_id: other.entityId,
    metadata_xml: other.metadata(),
    attribute_mapping: { keys: { email: { names: ['mail', 'email'] } } },
    name_id_format: EMAIL_FORMAT,
  });
  t.equal(made.body.disabled, false);
  t.strictSame(made.body.domains, []);
  t.match(made.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

  const listed = await admin('GET', '/admin/sso/providers');
  t.strictSame(Object.keys(listed.body), ['items']);
  const ids = listed.body.items.map((p: { id: string }) => p.id);
  t.equal(ids[0], providerId, 'oldest first');
  const item = listed.body.items.find((p: { id: string }) => p.id === made.body.id);
  t.strictSame(item.saml, { entity_id: other.entityId, attribute_mapping: made.body.saml.attribute_mapping, name_id_format: EMAIL_FORMAT });
  const both = await admin('GET', '/admin/sso/providers?resource_id=shape-1&resource_id_prefix=nothing');
  t.strictSame(
    both.body.items.map((p: { id: string }) => p.id),
    [made.body.id],
    'resource_id wins over resource_id_prefix',
  );
  const wildcard = await admin('GET', '/admin/sso/providers?resource_id_prefix=shape_');
  t.strictSame(
    wildcard.body.items.map((p: { id: string }) => p.id),
    [made.body.id],
    'a prefix is a LIKE pattern, as in the original: _ is any character',
  );
});
