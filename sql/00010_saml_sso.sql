-- SAML 2.0 single sign-on (docs/sso-saml.md): the original's four tables with its columns, so an adopted
-- database keeps its SSO connections and an operator's SQL against them keeps working.
-- sso_providers: one row per identity provider connection; disabled null means enabled (the original's).
-- resource_id may be "": the original's admin API stores it as given, its check (`resource_id = null or ...`)
-- letting "" through, so none is made here (00018 drops the one this file first made).
create table sso_providers (
  id          uuid primary key default gen_random_uuid(),
  resource_id text,
  disabled    boolean,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
create unique index sso_providers_resource_id_idx on sso_providers (lower(resource_id));
create index sso_providers_resource_id_pattern_idx on sso_providers (resource_id text_pattern_ops);

-- The email domains whose users POST /sso sends to a provider; a domain belongs to one provider.
create table sso_domains (
  id              uuid primary key default gen_random_uuid(),
  sso_provider_id uuid not null references sso_providers (id) on delete cascade,
  domain          text not null,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  constraint "domain not empty" check (char_length(domain) > 0)
);
create index sso_domains_sso_provider_id_idx on sso_domains (sso_provider_id);
create unique index sso_domains_domain_idx on sso_domains (lower(domain));

-- The SAML side of a provider: its metadata as given (or last fetched from metadata_url) and how its
-- assertions' attributes map onto the user's claims.
create table saml_providers (
  id                uuid primary key default gen_random_uuid(),
  sso_provider_id   uuid not null references sso_providers (id) on delete cascade,
  entity_id         text not null unique,
  metadata_xml      text not null,
  metadata_url      text,
  attribute_mapping jsonb,
  name_id_format    text,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  constraint "metadata_xml not empty" check (char_length(metadata_xml) > 0),
  constraint "metadata_url not empty" check (metadata_url is null or char_length(metadata_url) > 0),
  constraint "entity_id not empty" check (char_length(entity_id) > 0)
);
create index saml_providers_sso_provider_id_idx on saml_providers (sso_provider_id);

-- One row per SP-initiated sign-in between POST /sso and the ACS: its id is the RelayState, request_id
-- the AuthnRequest's ID the response must answer. The ACS deletes the row, so a RelayState works once.
create table saml_relay_states (
  id              uuid primary key default gen_random_uuid(),
  sso_provider_id uuid not null references sso_providers (id) on delete cascade,
  request_id      text not null,
  for_email       text,
  redirect_to     text,
  flow_state_id   uuid references flow_state (id) on delete cascade,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  constraint "request_id not empty" check (char_length(request_id) > 0)
);
create index saml_relay_states_sso_provider_id_idx on saml_relay_states (sso_provider_id);
create index saml_relay_states_for_email_idx on saml_relay_states (for_email);
create index saml_relay_states_created_at_idx on saml_relay_states (created_at desc);

-- A database adopted from the original keeps its SSO tables aside as gotrue_<name> (src/db/adopt.ts); their
-- rows move in here, ids kept, so the `sso:<provider id>` identities of its users still name their
-- provider (docs/adopting-gotrue.md#sso-providers). Columns the original added later (disabled,
-- name_id_format) are read when present. Relay states live minutes and are not kept. The sources are then
-- dropped; an object outside the namespace that still depends on them stops the migration instead.
do $$
declare
  has_disabled boolean := exists (select 1 from information_schema.columns
    where table_schema = current_schema() and table_name = 'gotrue_sso_providers' and column_name = 'disabled');
  has_format boolean := exists (select 1 from information_schema.columns
    where table_schema = current_schema() and table_name = 'gotrue_saml_providers' and column_name = 'name_id_format');
  source text;
  target text;
  grant_line text;
begin
  if to_regclass('gotrue_sso_providers') is null then
    return;
  end if;
  execute format(
    'insert into sso_providers (id, resource_id, disabled, created_at, updated_at)
     select id, resource_id, %s, coalesce(created_at, now()), coalesce(updated_at, created_at, now())
       from gotrue_sso_providers',
    case when has_disabled then 'disabled' else 'null::boolean' end);
  if to_regclass('gotrue_saml_providers') is not null then
    execute format(
      'insert into saml_providers (id, sso_provider_id, entity_id, metadata_xml, metadata_url, attribute_mapping, name_id_format,
                                   created_at, updated_at)
       select id, sso_provider_id, entity_id, metadata_xml, metadata_url, attribute_mapping, %s,
              coalesce(created_at, now()), coalesce(updated_at, created_at, now())
         from gotrue_saml_providers',
      case when has_format then 'name_id_format' else 'null::text' end);
  end if;
  if to_regclass('gotrue_sso_domains') is not null then
    insert into sso_domains (id, sso_provider_id, domain, created_at, updated_at)
    select id, sso_provider_id, domain, coalesce(created_at, now()), coalesce(updated_at, created_at, now())
      from gotrue_sso_domains;
  end if;
  -- Grants and the row-level-security switch the operator gave the original's tables carry over to ours, as
  -- for every other adopted table (copyAccess in src/db/adopt.ts, which this repeats in SQL).
  for source, target in
    select * from (values ('gotrue_sso_providers', 'sso_providers'), ('gotrue_saml_providers', 'saml_providers'),
                          ('gotrue_sso_domains', 'sso_domains'), ('gotrue_saml_relay_states', 'saml_relay_states')) t
     where to_regclass(t.column1) is not null
  loop
    for grant_line in
      select format('grant %s on %I to %s%s', a.privilege_type, target,
                    case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end,
                    case when a.is_grantable then ' with grant option' else '' end)
        from pg_class c, aclexplode(c.relacl) a
       where c.oid = to_regclass(source) and a.grantee <> c.relowner
    loop
      execute grant_line;
    end loop;
    if (select relrowsecurity from pg_class where oid = to_regclass(source)) then
      execute format('alter table %I enable row level security', target);
    end if;
  end loop;
  drop table if exists gotrue_saml_relay_states, gotrue_sso_sessions, gotrue_sso_domains, gotrue_saml_providers, gotrue_sso_providers;
end $$;
