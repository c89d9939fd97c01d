-- SAML assertions already accepted at the ACS (docs/sso-saml.md#replay): a signed assertion signs in once.
-- An IdP-initiated response (no RelayState) has no relay state to use up, and the original accepts the same
-- response again while its IssueInstant is under 90 s old; here each accepted assertion's ID is kept, per
-- provider (the ID is the IdP's), until the checks would refuse it anyway (usable_until: its IssueInstant,
-- or the time it was accepted if that is later, plus the 90 s). It is inserted in the sign-in's own
-- transaction, so a second or concurrent use of the assertion finds the row and is refused. The background
-- cleanup removes rows past usable_until. Row-level security is on, as sql/00017 switches it on for the
-- other tables.
create table saml_assertion_uses (
  sso_provider_id uuid not null references sso_providers (id) on delete cascade,
  assertion_id    text not null,
  usable_until    timestamptz not null,
  created_at      timestamptz not null default now(),
  primary key (sso_provider_id, assertion_id),
  constraint "assertion_id length" check (char_length(assertion_id) between 1 and 1024)
);
create index saml_assertion_uses_usable_until_idx on saml_assertion_uses (usable_until);

alter table saml_assertion_uses enable row level security;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'postgres') and current_user <> 'postgres' then
    grant select on saml_assertion_uses to postgres with grant option;
  end if;
end $$;
