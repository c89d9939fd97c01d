// A database adopted from the original keeps its SSO connections (docs/adopting-gotrue.md#sso-providers):
// the provider, its SAML metadata and mapping, its domain and its SSO user come over with their ids, and
// that user signs in through the same IdP as the same user after the swap.
import t from 'tap';
import { createOriginalDatabase } from './helpers/gotrue-db.js';
import { startTestService } from './helpers/server.js';
import { TestIdp, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

const PROVIDER_ID = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const CAROL = { id: 'dddddddd-dddd-4ddd-8ddd-dddddddddddd', email: 'carol@legacy.test', subject: 'carol-at-idp' };
const idp = new TestIdp();

const original = await createOriginalDatabase(async (c) => {
  // The original's SSO tables as its migrations leave them (the fixture has the first two in short).
  await c.query(`
    alter table auth.sso_providers add column disabled boolean;
    create table auth.saml_providers (
      id uuid primary key, sso_provider_id uuid not null references auth.sso_providers (id) on delete cascade,
      entity_id text not null unique, metadata_xml text not null, metadata_url text null, attribute_mapping jsonb null,
      created_at timestamptz null, updated_at timestamptz null, name_id_format text null);
    create table auth.sso_domains (
      id uuid primary key, sso_provider_id uuid not null references auth.sso_providers (id) on delete cascade,
      domain text not null, created_at timestamptz null, updated_at timestamptz null);`);
  // What an operator gave the original's tables: row-level security, and read access passed on.
  await c.query(`
    alter table auth.sso_providers enable row level security;
    alter table auth.saml_relay_states enable row level security;
    grant select on auth.sso_providers to public;
    grant select, insert on auth.sso_domains to public;`);
  await c.query(`insert into auth.sso_providers (id, resource_id, created_at, updated_at) values ($1, 'legacy', now(), now())`, [
    PROVIDER_ID,
  ]);
  await c.query(
    `insert into auth.saml_providers (id, sso_provider_id, entity_id, metadata_xml, attribute_mapping, created_at, updated_at)
     values (gen_random_uuid(), $1, $2, $3, $4, now(), now())`,
    [PROVIDER_ID, idp.entityId, idp.metadata(), { keys: { full_name: { name: 'displayName' } } }],
  );
  await c.query(
    `insert into auth.sso_domains (id, sso_provider_id, domain, created_at, updated_at) values (gen_random_uuid(), $1, 'legacy.test', now(), now())`,
    [PROVIDER_ID],
  );
  await c.query(
    `insert into auth.saml_relay_states (id, sso_provider_id, request_id, created_at) values (gen_random_uuid(), $1, 'id-in-flight', now())`,
    [PROVIDER_ID],
  );
  await c.query(
    `insert into auth.users (instance_id, id, aud, role, email, email_confirmed_at, is_sso_user, raw_app_meta_data, raw_user_meta_data,
                             created_at, updated_at)
     values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2, now(), true, $3, '{}', now(), now())`,
    [CAROL.id, CAROL.email, { provider: `sso:${PROVIDER_ID}`, providers: [`sso:${PROVIDER_ID}`] }],
  );
  await c.query(
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $2, $3, $4, now(), now(), now())`,
    [CAROL.subject, CAROL.id, { sub: CAROL.subject, email: CAROL.email, email_verified: true }, `sso:${PROVIDER_ID}`],
  );
});
t.teardown(() => original.drop());

const api = await startTestService({ DATABASE_URL: original.url, AUTH_SAML_ENABLED: 'true', AUTH_SAML_PRIVATE_KEY: spPrivateKey() });
t.teardown(() => api.stop());

t.test("the operator's grants on the SSO tables carry over to ours, and row-level security is on", async (t) => {
  const access = async (table: string) => {
    const { rows } = await api.db.query(
      `select c.relrowsecurity as rls,
              coalesce((select array_agg(a.privilege_type || case when a.is_grantable then '*' else '' end order by a.privilege_type)
                          from aclexplode(c.relacl) a where a.grantee = 0), '{}') as public
         from pg_class c where c.oid = $1::regclass`,
      [table],
    );
    return rows[0];
  };
  t.strictSame(await access('sso_providers'), { rls: true, public: ['SELECT'] });
  t.strictSame(await access('saml_relay_states'), { rls: true, public: [] });
  t.strictSame(await access('sso_domains'), { rls: true, public: ['INSERT', 'SELECT'] });
  t.strictSame(await access('saml_providers'), { rls: true, public: [] }, 'row-level security is on for every table (00017)');
});

t.test('the provider, its metadata, mapping and domain are ours, and the sources are gone', async (t) => {
  const { rows } = await api.db.query(
    `select p.id, p.resource_id, p.disabled, s.entity_id, s.attribute_mapping, d.domain
       from sso_providers p join saml_providers s on s.sso_provider_id = p.id join sso_domains d on d.sso_provider_id = p.id`,
  );
  t.strictSame(rows, [
    {
      id: PROVIDER_ID,
      resource_id: 'legacy',
      disabled: null,
      entity_id: idp.entityId,
      attribute_mapping: { keys: { full_name: { name: 'displayName' } } },
      domain: 'legacy.test',
    },
  ]);
  const { rows: tables } = await api.db.query(
    `select tablename from pg_tables where schemaname = 'auth' and (tablename like 'gotrue_sso%' or tablename like 'gotrue_saml%')`,
  );
  t.strictSame(tables, [], 'gotrue_sso_* and gotrue_saml_* dropped');
  t.equal((await api.db.query('select 1 from saml_relay_states')).rowCount, 0, 'sign-ins in flight are not kept');
});

t.test('the SSO user signs in through the same IdP as the same user', async (t) => {
  const res = await api.request('POST', '/sso', { body: { domain: 'legacy.test', skip_http_redirect: true } });
  t.equal(res.status, 200);
  const meta = await api.request('GET', '/sso/saml/metadata');
  const b64 = /<X509Certificate>([^<]+)</.exec(meta.text)![1];
  const request = idp.readRequest(
    res.body.url,
    `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
  );
  t.ok(request.signatureValid);
  const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
  const acs = await postToAcs(api.url, {
    SAMLResponse: idp.response(sp, {
      inResponseTo: request.id,
      nameId: CAROL.subject,
      attributes: [
        { name: 'email', values: [CAROL.email] },
        { name: 'displayName', values: ['Carol C'] },
      ],
    }),
    RelayState: request.relayState,
  });
  t.equal(acs.status, 302);
  const accessToken = new URLSearchParams(acs.location!.hash.slice(1)).get('access_token')!;
  const user = await api.request('GET', '/user', { token: accessToken });
  t.equal(user.body.id, CAROL.id);
  t.equal(user.body.user_metadata.full_name, 'Carol C', "the original's attribute mapping applies");
  t.equal(user.body.identities.length, 1);
});
