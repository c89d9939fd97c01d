// SAML SSO end to end: the real @supabase/auth-js client starts the flow (signInWithSSO by domain and by
// provider id, implicit and PKCE), a test IdP (its own key and certificate; responses signed by xml-crypto)
// reads the AuthnRequest the browser brings it and answers, and its response is posted to the ACS as a
// browser posts the IdP's form; then getUser(). Every refusal of the ACS is a 303 to SITE_URL carrying its
// error_code, and no garbage SAMLResponse is ever a 500.
import t from 'tap';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { authClient } from './helpers/auth-client.js';
import { TestIdp, makeKeyPair, postToAcs, spPrivateKey, type Assertion } from './helpers/saml-idp.js';

const api = await startTestService({
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(() => api.stop());
const token = await adminToken();
const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
const spCert = (() => {
  return api.request('GET', '/sso/saml/metadata').then((r) => {
    const b64 = /<X509Certificate>([^<]+)</.exec(r.text)![1];
    return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  });
})();

const idp = new TestIdp();
const created = await api.request('POST', '/admin/sso/providers', {
  token,
  body: {
    type: 'saml',
    metadata_xml: idp.metadata(),
    domains: ['acme.test'],
    attribute_mapping: { keys: { full_name: { name: 'displayName' }, groups: { name: 'groups', array: true }, tier: { default: 'gold' } } },
  },
});
const providerId: string = created.body.id;
const EMAIL_ATTR = { name: 'email', values: ['ada@acme.test'] };

/** POST /sso as auth-js sends it (skip_http_redirect), and what the IdP reads from the URL. */
async function start(body: Record<string, unknown> = { domain: 'acme.test' }) {
  const res = await api.request('POST', '/sso', { body: { skip_http_redirect: true, ...body } });
  if (res.status !== 200) throw new Error(`POST /sso ${res.status} ${res.text}`);
  return idp.readRequest(res.body.url, await spCert);
}

/** The refusal carried by a 303 to SITE_URL. */
function refusal(r: { status: number; location: URL | null }) {
  return {
    status: r.status,
    at: r.location ? `${r.location.origin}${r.location.pathname}` : null,
    error_code: r.location?.searchParams.get('error_code'),
    error_description: r.location?.searchParams.get('error_description'),
  };
}
const refused = (error_code: string, error_description: string) => ({
  status: 303,
  at: 'http://localhost:3000/',
  error_code,
  error_description,
});
const INVALID = refused('validation_failed', 'SAML Assertion is not valid');

t.test('signInWithSSO by domain, the IdP, the ACS, then getUser (implicit flow)', async (t) => {
  const client = authClient(api.url);
  const { data, error } = await client.signInWithSSO({ domain: 'acme.test', options: { redirectTo: 'https://app.example.test/welcome' } });
  t.equal(error, null);
  t.ok(data!.url.startsWith(`${idp.ssoUrl}?SAMLRequest=`), 'auth-js gets the IdP URL');
  const request = idp.readRequest(data!.url, await spCert);
  t.ok(request.signatureValid, 'the AuthnRequest is signed with the key of the SP metadata');
  t.equal(request.issuer, sp.entityId);
  t.equal(request.acsUrl, sp.acsUrl);
  t.equal(request.nameIdFormat, 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');

  const response = idp.response(sp, {
    inResponseTo: request.id,
    nameId: 'ada-1',
    attributes: [
      EMAIL_ATTR,
      { name: 'urn:oid:2.16.840.1.113730.3.1.241', friendlyName: 'displayName', values: ['Ada L'] },
      { name: 'groups', values: ['eng', 'ops'] },
    ],
  });
  const acs = await postToAcs(api.url, { SAMLResponse: response, RelayState: request.relayState });
  t.equal(acs.status, 302);
  t.equal(`${acs.location!.origin}${acs.location!.pathname}`, 'https://app.example.test/welcome');
  const fragment = Object.fromEntries(new URLSearchParams(acs.location!.hash.slice(1)));
  t.strictSame(Object.keys(fragment), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type']);
  t.equal(fragment.sb, '');

  await client.setSession({ access_token: fragment.access_token, refresh_token: fragment.refresh_token });
  const { data: got } = await client.getUser();
  const user = got.user!;
  t.equal(user.email, 'ada@acme.test');
  t.ok(user.email_confirmed_at, 'the IdP vouches for the address');
  t.equal(user.app_metadata.provider, `sso:${providerId}`);
  t.match(user.user_metadata, {
    full_name: 'Ada L',
    custom_claims: { groups: ['eng', 'ops'], tier: 'gold' },
    iss: idp.entityId,
    sub: 'ada-1',
  });
  t.match(user.identities, [
    { provider: `sso:${providerId}`, identity_data: { sub: 'ada-1', email: 'ada@acme.test', email_verified: true } },
  ]);
  const claims = decodeJwt(fragment.access_token) as { amr: Array<Record<string, unknown>> };
  t.match(claims.amr, [{ method: 'sso/saml', provider: providerId }]);
  const { rows } = await api.db.query('select is_sso_user from users where id = $1', [user.id]);
  t.equal(rows[0].is_sso_user, true);
  t.equal((await api.db.query('select 1 from saml_relay_states')).rowCount, 0, 'the relay state is spent');
  const refreshed = await client.refreshSession();
  t.equal(refreshed.error, null);
  const audited = await api.db.query(
    `select payload->>'action' as action, (payload->>'actor_via_sso')::boolean as via_sso from audit_log_entries
      where payload->>'actor_id' = $1 order by created_at, payload->>'action'`,
    [user.id],
  );
  t.same(
    audited.rows.map((r) => r.action),
    ['user_signedup', 'token_refreshed', 'token_revoked'],
  );
  t.ok(
    audited.rows.every((r) => r.via_sso === true),
    'an SSO user is audited as acting via SSO, as the original marks it (sign-in and refresh alike)',
  );

  const replay = await postToAcs(api.url, { SAMLResponse: response, RelayState: request.relayState });
  t.strictSame(
    refusal(replay),
    refused('saml_relay_state_not_found', 'SAML RelayState does not exist, try logging in again?'),
    'a replay is refused',
  );

  const update = await api.request('PUT', '/user', { token: fragment.access_token, body: { password: 'a-new-password-1' } });
  t.strictSame(
    [update.status, update.body],
    [422, { code: 422, error_code: 'user_sso_managed', msg: 'Updating email, phone, password of a SSO account only possible via SSO' }],
  );
  const data2 = await api.request('PUT', '/user', { token: fragment.access_token, body: { data: { nick: 'ada' } } });
  t.equal(data2.status, 200, 'metadata stays the user’s to change');
});

t.test('signInWithSSO by providerId with PKCE: the ACS answers a code, exchangeCodeForSession signs in', async (t) => {
  const client = authClient(api.url, { flowType: 'pkce' });
  const { data } = await client.signInWithSSO({ providerId, options: { redirectTo: 'https://app.example.test/pkce' } });
  const request = idp.readRequest(data!.url, await spCert);
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { inResponseTo: request.id, nameId: 'ada-1', attributes: [EMAIL_ATTR] }),
    RelayState: request.relayState,
  });
  t.equal(acs.status, 302);
  t.equal(`${acs.location!.origin}${acs.location!.pathname}`, 'https://app.example.test/pkce');
  t.equal(acs.location!.hash, '', 'no tokens in the URL');
  const code = acs.location!.searchParams.get('code')!;
  const { data: exchanged, error } = await client.exchangeCodeForSession(code);
  t.equal(error, null);
  t.equal(exchanged.user!.email, 'ada@acme.test');
  const { data: got } = await client.getUser();
  t.equal(got.user!.identities!.length, 1, 'the same IdP user is the same account');
  t.match((decodeJwt(exchanged.session!.access_token) as { amr: unknown }).amr, [{ method: 'sso/saml', provider: providerId }]);
});

/** The audit entries of the user with this address: action and traits, oldest first (one transaction's sorted by action). */
async function auditOf(email: string) {
  const { rows } = await api.db.query(
    `select a.payload->>'action' as action, a.payload->'traits' as traits from audit_log_entries a
      join users u on u.id::text = a.payload->>'actor_id' where u.email = $1 order by a.created_at, a.payload->>'action'`,
    [email],
  );
  return rows;
}

t.test('a PKCE sign-in is audited at the ACS, as the implicit one is', async (t) => {
  const client = authClient(api.url, { flowType: 'pkce' });
  const { data } = await client.signInWithSSO({ domain: 'acme.test', options: { redirectTo: 'https://app.example.test/pkce' } });
  const request = idp.readRequest(data!.url, await spCert);
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { inResponseTo: request.id, nameId: 'cy-1', attributes: [{ name: 'email', values: ['cy@acme.test'] }] }),
    RelayState: request.relayState,
  });
  t.ok(acs.location!.searchParams.get('code'));
  t.strictSame(await auditOf('cy@acme.test'), [{ action: 'user_signedup', traits: { provider: `sso:${providerId}` } }]);
});

t.test('a second subject of the IdP with the same address is linked to the user, merged and audited', async (t) => {
  const signIn = async (nameId: string, attributes: Array<{ name: string; values: string[] }>) => {
    const request = await start();
    const acs = await postToAcs(api.url, {
      SAMLResponse: idp.response(sp, {
        inResponseTo: request.id,
        nameId,
        attributes: [{ name: 'email', values: ['dee@acme.test'] }, ...attributes],
      }),
      RelayState: request.relayState,
    });
    t.equal(acs.status, 302);
  };
  await signIn('dee-1', []);
  await signIn('dee-2', [{ name: 'displayName', values: ['Dee D'] }]);
  const { rows: users } = await api.db.query('select id, raw_user_meta_data, raw_app_meta_data from users where email = $1', [
    'dee@acme.test',
  ]);
  t.equal(users.length, 1, 'one account');
  t.match(users[0].raw_user_meta_data, { sub: 'dee-2', full_name: 'Dee D' }, 'the new claims are merged into user_metadata');
  t.match(users[0].raw_app_meta_data, { provider: `sso:${providerId}`, providers: [`sso:${providerId}`] });
  const { rows: identities } = await api.db.query('select id, provider_id from identities where user_id = $1 order by created_at', [
    users[0].id,
  ]);
  t.strictSame(
    identities.map((i) => i.provider_id),
    ['dee-1', 'dee-2'],
  );
  const provider = `sso:${providerId}`;
  t.strictSame(await auditOf('dee@acme.test'), [
    { action: 'user_signedup', traits: { provider } },
    { action: 'identity_linked', traits: { identity_id: identities[1].id, provider, provider_id: 'dee-2' } },
    { action: 'login', traits: { provider } },
  ]);
});

t.test('identity_data as the original fills it: phone_verified false, custom_claims even when empty', async (t) => {
  const plain = new TestIdp();
  const made = await api.request('POST', '/admin/sso/providers', { token, body: { type: 'saml', metadata_xml: plain.metadata() } });
  t.teardown(() => api.request('DELETE', `/admin/sso/providers/${made.body.id}`, { token }));
  const acs = await postToAcs(api.url, {
    SAMLResponse: plain.response(sp, { nameId: 'fay-1', attributes: [{ name: 'email', values: ['fay@plain.test'] }] }),
  });
  t.equal(acs.status, 302);
  const expected = {
    iss: plain.entityId,
    sub: 'fay-1',
    email: 'fay@plain.test',
    email_verified: true,
    phone_verified: false,
    custom_claims: {},
  };
  const { rows } = await api.db.query(
    'select i.identity_data, u.raw_user_meta_data from identities i join users u on u.id = i.user_id where i.provider = $1',
    [`sso:${made.body.id}`],
  );
  t.strictSame(rows[0].identity_data, expected);
  t.strictSame(rows[0].raw_user_meta_data, expected);
});

t.test("a new identity stores the IdP's email lower-cased, user_metadata as sent, as the original", async (t) => {
  const mixed = new TestIdp();
  const made = await api.request('POST', '/admin/sso/providers', { token, body: { type: 'saml', metadata_xml: mixed.metadata() } });
  t.teardown(() => api.request('DELETE', `/admin/sso/providers/${made.body.id}`, { token }));
  for (const nameId of ['gil-1', 'gil-2']) {
    // gil-2: another subject with the same address, linked as a new identity of the same user
    const acs = await postToAcs(api.url, {
      SAMLResponse: mixed.response(sp, { nameId, attributes: [{ name: 'email', values: ['Gil.Moss@Mixed.test'] }] }),
    });
    t.equal(acs.status, 302);
  }
  const { rows } = await api.db.query(
    `select i.provider_id, i.identity_data->>'email' as identity_email, i.email, u.email as user_email,
            u.raw_user_meta_data->>'email' as metadata_email
     from identities i join users u on u.id = i.user_id where i.provider = $1 order by i.created_at`,
    [`sso:${made.body.id}`],
  );
  const stored = (provider_id: string) => ({
    provider_id,
    identity_email: 'gil.moss@mixed.test',
    email: 'gil.moss@mixed.test',
    user_email: 'gil.moss@mixed.test',
    metadata_email: 'Gil.Moss@Mixed.test',
  });
  t.strictSame(rows, [stored('gil-1'), stored('gil-2')]);
});

t.test('an SSO account stays apart from a password account with the same address', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'bob@acme.test', password: 'password-of-bob-1' } });
  t.equal(signup.status, 200);
  const request = await start();
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, {
      inResponseTo: request.id,
      nameId: 'bob-1',
      attributes: [{ name: 'mail', values: ['bob@acme.test'] }],
    }),
    RelayState: request.relayState,
  });
  t.equal(acs.status, 302);
  const { rows } = await api.db.query('select is_sso_user from users where email = $1 order by is_sso_user', ['bob@acme.test']);
  t.strictSame(
    rows.map((r) => r.is_sso_user),
    [false, true],
  );
});

t.test('IdP-initiated sign-in: no RelayState, or a URL one', async (t) => {
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR] }),
    RelayState: 'https://app.example.test/from-idp',
  });
  t.equal(acs.status, 302);
  t.equal(`${acs.location!.origin}${acs.location!.pathname}`, 'https://app.example.test/from-idp');
  t.ok(new URLSearchParams(acs.location!.hash.slice(1)).get('access_token'));

  const toSite = await postToAcs(api.url, { SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR] }) });
  t.equal(toSite.location!.origin, 'http://localhost:3000', 'no RelayState lands on SITE_URL');

  const notAllowed = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR] }),
    RelayState: 'https://evil.example.test/',
  });
  t.equal(notAllowed.location!.origin, 'http://localhost:3000', 'a target the allow list does not name becomes SITE_URL');

  // As the original: InResponseTo is not looked at in an IdP-initiated post (Rippling sends one there).
  const answering = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { inResponseTo: 'abc', nameId: 'ada-1', attributes: [EMAIL_ATTR] }),
  });
  t.equal(answering.status, 302, 'an unsolicited response naming a request is taken');
  t.ok(new URLSearchParams(answering.location!.hash.slice(1)).get('access_token'));

  const old = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], issueInstant: new Date(Date.now() - 300_000) }),
  });
  t.strictSame(refusal(old), INVALID, 'a response issued five minutes ago is refused');
  const recent = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], issueInstant: new Date(Date.now() - 60_000) }),
  });
  t.equal(recent.status, 302, 'one issued a minute ago is taken');
  const elsewhere = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], recipient: 'https://other/acs' }),
  });
  t.strictSame(refusal(elsewhere), INVALID, 'a subject confirmed for another ACS is refused');
  const otherAcs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], destination: 'https://other.example.test/sso/saml/acs' }),
  });
  t.strictSame(refusal(otherAcs), INVALID, 'a response sent to another ACS is refused');
  const noDestination = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], destination: null }),
  });
  t.equal(noDestination.status, 302, 'an unsigned Response may leave Destination out');
  const signedNoDestination = await postToAcs(api.url, {
    SAMLResponse: Buffer.from(
      idp.sign(idp.responseXml(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], destination: null }), 'Response'),
    ).toString('base64'),
  });
  t.strictSame(refusal(signedNoDestination), INVALID, 'a signed Response must name this ACS');

  const stranger = new TestIdp();
  const unknown = await postToAcs(api.url, { SAMLResponse: stranger.response(sp, { attributes: [EMAIL_ATTR] }) });
  t.strictSame(refusal(unknown), refused('saml_idp_not_found', 'A SAML connection has not been established with this Identity Provider'));
});

// docs/sso-saml.md#replay: each assertion signs in once. Without this, a response posted again with no
// RelayState was read as IdP-initiated (InResponseTo not looked at) and taken while under 90 s old.
t.test('an assertion signs in once, posted again with or without a RelayState', async (t) => {
  const sessionsOf = async (email: string) =>
    (await api.db.query('select count(*)::int as n from sessions s join users u on u.id = s.user_id where u.email = $1', [email])).rows[0]
      .n as number;
  const grace = { nameId: 'grace-1', attributes: [{ name: 'email', values: ['grace@acme.test'] }] };

  const unsolicited = idp.response(sp, grace);
  const first = await postToAcs(api.url, { SAMLResponse: unsolicited });
  t.equal(first.status, 302, 'an IdP-initiated response signs in');
  t.ok(new URLSearchParams(first.location!.hash.slice(1)).get('access_token'));
  t.equal(await sessionsOf('grace@acme.test'), 1);
  const again = await postToAcs(api.url, { SAMLResponse: unsolicited });
  t.strictSame(refusal(again), INVALID, 'the same response posted again is refused');
  t.equal(await sessionsOf('grace@acme.test'), 1, 'and makes no second session');
  const withTarget = await postToAcs(api.url, { SAMLResponse: unsolicited, RelayState: 'https://app.example.test/from-idp' });
  t.strictSame(refusal(withTarget), INVALID, 'with a URL RelayState too');

  const request = await start();
  const solicited = idp.response(sp, { ...grace, inResponseTo: request.id });
  const answered = await postToAcs(api.url, { SAMLResponse: solicited, RelayState: request.relayState });
  t.equal(answered.status, 302, 'an SP-initiated response signs in');
  t.equal(await sessionsOf('grace@acme.test'), 2);
  const withoutRelayState = await postToAcs(api.url, { SAMLResponse: solicited });
  t.strictSame(refusal(withoutRelayState), INVALID, 'replayed without its RelayState it is refused, not taken as IdP-initiated');
  const emptyRelayState = await postToAcs(api.url, { SAMLResponse: solicited, RelayState: '' });
  t.strictSame(refusal(emptyRelayState), INVALID, 'or with an empty one');
  t.equal(await sessionsOf('grace@acme.test'), 2, 'no session from either');

  const [one, two] = [idp.response(sp, grace), idp.response(sp, grace)];
  t.equal((await postToAcs(api.url, { SAMLResponse: one })).status, 302, 'another assertion of the IdP signs in');
  t.equal((await postToAcs(api.url, { SAMLResponse: two })).status, 302, 'and another');
  t.equal(await sessionsOf('grace@acme.test'), 4);

  const { rows } = await api.db.query(
    `select count(*)::int as n, bool_and(usable_until > created_at and usable_until <= created_at + interval '91 seconds') as until
       from saml_assertion_uses where sso_provider_id = $1`,
    [providerId],
  );
  t.ok(rows[0].n >= 4, 'each accepted assertion is kept');
  t.equal(rows[0].until, true, 'until its IssueInstant window ends');

  const withoutId = Buffer.from(idp.sign(idp.responseXml(sp, grace).replace(/(<saml:Assertion [^>]*?) ID="[^"]*"/, '$1'), 'Response'));
  const noId = await postToAcs(api.url, { SAMLResponse: withoutId.toString('base64') });
  t.strictSame(refusal(noId), INVALID, 'an assertion without an ID is refused: it could not be refused a second time');
  t.equal(await sessionsOf('grace@acme.test'), 4);
});

t.test("the audience as the original's SAML library judges it: no AudienceRestriction, or any one naming us", async (t) => {
  const signIn = async (audience: string | string[] | null) => {
    const acs = await postToAcs(api.url, { SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], audience }) });
    return acs.status === 302 ? new URLSearchParams(acs.location!.hash.slice(1)).get('access_token') : refusal(acs);
  };
  t.type(await signIn(null), 'string', 'an assertion without an AudienceRestriction signs in');
  t.type(await signIn(['https://other-sp.example.test', sp.entityId]), 'string', 'the second of two restrictions names us');
  t.strictSame(await signIn(['https://other-sp.example.test', 'https://third-sp.example.test']), INVALID, 'none names us');
});

t.test('a target with its own fragment keeps it: the session is appended after it, as the original does', async (t) => {
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR] }),
    RelayState: 'https://app.example.test/#/from-idp',
  });
  t.equal(acs.status, 302);
  const href = acs.location!.href;
  t.ok(href.startsWith('https://app.example.test/#/from-idp#access_token='), href);
  const session = new URLSearchParams(href.slice(href.lastIndexOf('#') + 1));
  t.equal((await api.request('GET', '/user', { token: session.get('access_token')! })).body.email, 'ada@acme.test');
});

t.test('the ACS refuses what it must not accept', async (t) => {
  const base = (request: { id: string }): Assertion => ({ inResponseTo: request.id, nameId: 'ada-1', attributes: [EMAIL_ATTR] });
  const post = async (build: (request: { id: string }) => string) => {
    const request = await start();
    return refusal(await postToAcs(api.url, { SAMLResponse: build(request), RelayState: request.relayState }));
  };
  const b64 = (xml: string) => Buffer.from(xml).toString('base64');

  t.strictSame(await post((r) => b64(idp.responseXml(sp, base(r)))), INVALID, 'unsigned');
  const mallory = makeKeyPair('Mallory');
  t.strictSame(await post((r) => b64(idp.sign(idp.responseXml(sp, base(r)), 'Assertion', mallory))), INVALID, 'signed by another key');
  t.strictSame(
    await post((r) =>
      idp.response(sp, { ...base(r), notBefore: new Date(Date.now() - 3600_000), notOnOrAfter: new Date(Date.now() - 600_000) }),
    ),
    INVALID,
    'expired',
  );
  t.strictSame(await post((r) => idp.response(sp, { ...base(r), audience: 'https://other-sp.example.test' })), INVALID, 'another audience');
  t.strictSame(await post(() => idp.response(sp, { ...base({ id: 'id-other' }) })), INVALID, 'answering another request');
  t.strictSame(await post((r) => idp.response(sp, { ...base(r), issuer: 'https://other-idp.example.test' })), INVALID, 'another issuer');
  t.strictSame(await post((r) => idp.response(sp, { ...base(r), recipient: 'https://other/acs' })), INVALID, 'another Recipient');
  t.strictSame(
    await post((r) => idp.response(sp, { ...base(r), destination: 'https://other.example.test/sso/saml/acs' })),
    INVALID,
    'another Destination',
  );
  t.strictSame(
    await post((r) => idp.response(sp, { ...base(r), issueInstant: new Date(Date.now() - 300_000) })),
    INVALID,
    'issued five minutes ago',
  );
  t.strictSame(
    await post((r) => {
      // Signature wrapping: the genuinely signed assertion (for ada) is hidden in an Extensions element and
      // a forged one for eve takes its place; the signature still verifies over the hidden one.
      const signed = idp.sign(idp.responseXml(sp, base(r)));
      const genuine = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0];
      const forged = genuine
        .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
        .replace('ada-1', 'eve-1')
        .replace('ada@acme.test', 'eve@acme.test')
        .replace(/ID="_a[0-9a-f]+"/, 'ID="_forged"');
      return b64(signed.replace(genuine, `<samlp:Extensions>${genuine}</samlp:Extensions>${forged}`));
    }),
    INVALID,
    'a wrapped response',
  );
  t.strictSame(
    await post((r) => {
      const signed = idp.sign(idp.responseXml(sp, base(r)));
      const genuine = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0];
      return b64(signed.replace(genuine, genuine + genuine.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '').replace('ada-1', 'eve-1')));
    }),
    INVALID,
    'a second, unsigned assertion',
  );
  t.strictSame(
    await post((r) =>
      idp.response(sp, { ...base(r), attributes: [], nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' }),
    ),
    refused('saml_assertion_no_email', 'SAML Assertion does not contain an email address'),
  );
  t.strictSame(
    await post((r) => idp.response(sp, { ...base(r), nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' })),
    refused(
      'saml_assertion_no_user_id',
      'SAML Assertion did not contain a persistent Subject Identifier attribute or Subject NameID uniquely identifying this user',
    ),
  );
  // As the original: the first subject-id value is the user id even when empty; the persistent NameID is
  // used only when there is no subject-id value at all.
  t.strictSame(
    await post((r) =>
      idp.response(sp, {
        ...base(r),
        nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        attributes: [EMAIL_ATTR, { name: 'urn:oasis:names:tc:SAML:attribute:subject-id', values: ['', 'ada-2'] }],
      }),
    ),
    refused(
      'saml_assertion_no_user_id',
      'SAML Assertion did not contain a persistent Subject Identifier attribute or Subject NameID uniquely identifying this user',
    ),
    'an empty subject-id',
  );
  const { rows } = await api.db.query("select count(*)::int as n from users where email like 'eve%'");
  t.equal(rows[0].n, 0, 'no refused response made a user');
});

// docs/sso-saml.md#what-the-acs-checks: node-saml reads the Response's Status only when it carries no
// assertion, so an IdP's failure answer that still held a signed, valid assertion used to sign the user in.
t.test('a Response whose Status is not Success is refused even with a signed, valid assertion', async (t) => {
  const email = 'rita@acme.test';
  const rita = { nameId: 'rita-1', attributes: [{ name: 'email', values: [email] }] };
  const RESPONDER = 'urn:oasis:names:tc:SAML:2.0:status:Responder';
  const REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';
  const counts = async () =>
    (
      await api.db.query(
        `select (select count(*)::int from users where email = $1) as users,
                (select count(*)::int from sessions s join users u on u.id = s.user_id where u.email = $1) as sessions,
                (select count(*)::int from identities where provider_id = 'rita-1') as identities`,
        [email],
      )
    ).rows[0];
  const spInitiated = async (a: Assertion, what: 'Assertion' | 'Response' = 'Assertion') => {
    const request = await start();
    const xml = idp.responseXml(sp, { ...a, inResponseTo: request.id });
    const response = Buffer.from(idp.sign(xml, what)).toString('base64');
    return postToAcs(api.url, { SAMLResponse: response, RelayState: request.relayState });
  };

  t.strictSame(refusal(await spInitiated({ ...rita, status: { value: RESPONDER } })), INVALID, 'Responder, the assertion signed');
  t.strictSame(
    refusal(
      await spInitiated({ ...rita, status: { value: REQUESTER, nested: 'urn:oasis:names:tc:SAML:2.0:status:AuthnFailed' } }, 'Response'),
    ),
    INVALID,
    'Requester/AuthnFailed, the whole Response signed',
  );
  const unsolicited = await postToAcs(api.url, { SAMLResponse: idp.response(sp, { ...rita, status: { value: RESPONDER } }) });
  t.strictSame(refusal(unsolicited), INVALID, 'Responder, IdP-initiated');
  t.strictSame(await counts(), { users: 0, sessions: 0, identities: 0 }, 'no user, identity or session was made');

  const success = await spInitiated({ ...rita, status: { value: 'urn:oasis:names:tc:SAML:2.0:status:Success' } });
  t.equal(success.status, 302, 'the same response with a Success status signs in');
  t.ok(new URLSearchParams(success.location!.hash.slice(1)).get('access_token'));
  t.strictSame(await counts(), { users: 1, sessions: 1, identities: 1 });
});

t.test('an expired relay state is refused (422) and spent', async (t) => {
  const request = await start();
  await api.db.query("update saml_relay_states set created_at = now() - interval '3 minutes'");
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { inResponseTo: request.id, attributes: [EMAIL_ATTR] }),
    RelayState: request.relayState,
  });
  t.strictSame(refusal(acs), refused('saml_relay_state_expired', 'SAML RelayState has expired. Try logging in again?'));
  t.equal((await api.db.query('select 1 from saml_relay_states')).rowCount, 0);
});

t.test('garbage posted to the ACS is a clear refusal, never a 500', async (t) => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ SAMLResponse: 'not base64!!' }, 'validation_failed', 'SAMLResponse is not a valid Base64 string'],
    [{ SAMLResponse: Buffer.from('just text').toString('base64') }, 'validation_failed', 'SAMLResponse is not a valid XML SAML assertion'],
    [{ SAMLResponse: Buffer.from('<a><b></a>').toString('base64') }, 'validation_failed', 'SAMLResponse is not a valid XML SAML assertion'],
    [
      { SAMLResponse: Buffer.from('<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>').toString('base64') },
      'validation_failed',
      'SAMLResponse is not a valid XML SAML assertion',
    ],
    [{}, 'validation_failed', 'SAMLResponse is missing'],
    [{ SAMLart: 'AAQ', RelayState: '' }, 'validation_failed', 'SAML Artifact response can only be used with SP initiated flow'],
    [{ SAMLResponse: 'x', RelayState: 'not a uuid or url' }, 'validation_failed', 'SAML RelayState is not a valid UUID or URL'],
    [
      { SAMLResponse: 'x', RelayState: '6b3d9c1e-0000-4000-8000-000000000000' },
      'saml_relay_state_not_found',
      'SAML RelayState does not exist, try logging in again?',
    ],
  ];
  for (const [fields, code, description] of cases) {
    const r = refusal(await postToAcs(api.url, fields));
    t.strictSame(
      r,
      { status: 303, at: 'http://localhost:3000/', error_code: code, error_description: description },
      JSON.stringify(fields),
    );
  }
  for (const garbage of ['', '====', Buffer.from('\u0000\u0001\u0002').toString('base64'), Buffer.from('<Response/>').toString('base64')]) {
    const request = await start();
    const r = refusal(await postToAcs(api.url, { SAMLResponse: garbage, RelayState: request.relayState }));
    t.equal(r.status, 303, `SP-initiated with ${JSON.stringify(garbage)}`);
    t.not(r.error_code, 'unexpected_failure');
  }
  const bytes = await fetch(`${api.url}/sso/saml/acs`, {
    method: 'POST',
    redirect: 'manual',
    body: new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
  });
  t.equal(bytes.status, 303, 'a body that is not a form');
});

t.test('POST /sso refusals', async (t) => {
  const v = (msg: string) => [400, { code: 400, error_code: 'validation_failed', msg }];
  const cases: Array<[Record<string, unknown>, unknown[]]> = [
    [{ domain: 'acme.test', provider_id: providerId }, v('Only one of provider_id or domain supported')],
    [{}, v('A provider_id or domain needs to be provided')],
    [
      { domain: 'nobody.test' },
      [404, { code: 404, error_code: 'sso_provider_not_found', msg: 'No SSO provider assigned for this domain' }],
    ],
    [
      { provider_id: '6b3d9c1e-0000-4000-8000-000000000000' },
      [404, { code: 404, error_code: 'sso_provider_not_found', msg: 'No such SSO provider' }],
    ],
    [
      { domain: 'acme.test', code_challenge: 'short', code_challenge_method: 's256' },
      [400, { code: 400, error_code: 'validation_failed' }],
    ],
    [{ domain: 'acme.test', code_challenge: 'c'.repeat(43), code_challenge_method: 'md5' }, v('Invalid code_challenge_method')],
    [
      { domain: 'acme.test', code_challenge: 'short', code_challenge_method: 'md5' },
      v('code challenge has to be between 43 and 128 characters'),
    ],
  ];
  for (const [body, expected] of cases) {
    const res = await api.request('POST', '/sso', { body });
    t.match([res.status, res.body], expected, JSON.stringify(body));
  }
  // provider_id is decoded as the original decodes it into a UUID: a string it cannot read fails the body.
  const badJson = (detail: string) => [400, { code: 400, error_code: 'bad_json', msg: `Could not parse request body as JSON: ${detail}` }];
  const ids: Array<[unknown, unknown[]]> = [
    [7, badJson('json: cannot unmarshal number into Go struct field SingleSignOnParams.provider_id of type uuid.UUID')],
    ['', badJson('uuid: incorrect UUID length 0 in string ""')],
    ['not-a-uuid', badJson('uuid: incorrect UUID length 10 in string "not-a-uuid"')],
    ['zzzzzzzz-0000-4000-8000-000000000000', badJson("encoding/hex: invalid byte: U+007A 'z'")],
    ['6b3d9c1e+0000-4000-8000-000000000000', badJson('uuid: incorrect UUID format in string "6b3d9c1e+0000-4000-8000-000000000000"')],
  ];
  for (const [id, expected] of ids) {
    const res = await api.request('POST', '/sso', { body: { provider_id: id, domain: 'acme.test' } });
    t.strictSame([res.status, res.body], expected, `provider_id ${JSON.stringify(id)}`);
  }
  // Any member of the wrong JSON type fails the decoding the same way, before the route's own checks.
  for (const [body, words] of [
    [
      { domain: 'acme.test', code_challenge: 42, code_challenge_method: 's256' },
      'number into Go struct field SingleSignOnParams.code_challenge of type string',
    ],
    [
      { domain: 'acme.test', code_challenge: 'c'.repeat(43), code_challenge_method: true },
      'bool into Go struct field SingleSignOnParams.code_challenge_method of type string',
    ],
    [{ domain: 'acme.test', skip_http_redirect: 'yes' }, 'string into Go struct field SingleSignOnParams.skip_http_redirect of type bool'],
  ] as const) {
    const res = await api.request('POST', '/sso', { body });
    t.strictSame([res.status, res.body], badJson(`json: cannot unmarshal ${words}`), JSON.stringify(body));
  }
  for (const id of [providerId.replace(/-/g, '').toUpperCase(), `{${providerId}}`, `urn:uuid:${providerId}`]) {
    const res = await api.request('POST', '/sso', { body: { provider_id: id, skip_http_redirect: true } });
    t.equal(res.status, 200, `provider_id ${id} names the provider`);
  }
  const nil = await api.request('POST', '/sso', {
    body: { provider_id: '00000000-0000-0000-0000-000000000000', domain: 'acme.test', skip_http_redirect: true },
  });
  t.equal(nil.status, 200, 'the nil UUID is no provider_id');

  const redirect = await api.request('POST', '/sso', { body: { domain: 'acme.test' } });
  t.equal(redirect.status, 303, 'without skip_http_redirect the browser is sent on');
  t.ok(redirect.headers.get('location')!.startsWith(idp.ssoUrl));

  await api.request('PUT', `/admin/sso/providers/${providerId}`, { token, body: { disabled: true } });
  t.teardown(() => api.request('PUT', `/admin/sso/providers/${providerId}`, { token, body: { disabled: false } }));
  const disabled = await api.request('POST', '/sso', { body: { domain: 'acme.test' } });
  t.strictSame(
    [disabled.status, disabled.body],
    [404, { code: 404, error_code: 'sso_provider_disabled', msg: 'SSO Provider is currently disabled' }],
  );
  const idpInitiated = await postToAcs(api.url, { SAMLResponse: idp.response(sp, { attributes: [EMAIL_ATTR] }) });
  t.strictSame(refusal(idpInitiated), refused('sso_provider_disabled', 'SSO Provider assigned for this domain is currently disabled'));
});

t.test("the assertion's SessionNotOnOrAfter ends the session", async (t) => {
  const notAfter = new Date(Math.floor(Date.now() / 1000 + 8 * 3600) * 1000);
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, { nameId: 'ada-1', attributes: [EMAIL_ATTR], sessionNotOnOrAfter: notAfter }),
  });
  t.equal(acs.status, 302);
  const accessToken = new URLSearchParams(acs.location!.hash.slice(1)).get('access_token')!;
  const { session_id } = decodeJwt(accessToken) as { session_id: string };
  const { rows } = await api.db.query('select not_after from sessions where id = $1', [session_id]);
  t.equal(rows[0].not_after.getTime(), notAfter.getTime());
});
