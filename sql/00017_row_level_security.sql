-- Row-level security on the service's tables, as the original's migration of 2024-06 switches it on for its
-- own. No policy is defined: the tables' owner (the role the service runs as) is not subject to it, nor is a
-- role that bypasses RLS (Supabase's `postgres`), but a role granted access to an auth table by mistake
-- sees no row through it. Where a role named `postgres` exists it may read the tables and pass that on, as
-- the original grants it (Supabase's administrative role is not always a superuser). Only tables the
-- migrating role owns are touched, so an operator's own table in the namespace, or one another role owns,
-- is left as it is. A table added by a later migration switches RLS on in that migration.
do $$
declare
  name text;
  grant_to_postgres boolean := exists (select 1 from pg_roles where rolname = 'postgres') and current_user <> 'postgres';
begin
  for name in
    select c.relname
      from pg_class c
     where c.relnamespace = current_schema()::regnamespace
       and c.relkind in ('r', 'p')
       and pg_get_userbyid(c.relowner) = current_user
       and c.relname in ('users', 'identities', 'sessions', 'refresh_tokens', 'audit_log_entries', 'flow_state',
                         'one_time_tokens', 'mfa_factors', 'mfa_challenges', 'mfa_amr_claims', 'webauthn_credentials',
                         'webauthn_challenges', 'web3_message_uses', 'rate_limits', 'sso_providers', 'sso_domains',
                         'saml_providers', 'saml_relay_states', 'custom_oauth_providers', 'oauth_clients',
                         'oauth_authorizations', 'oauth_consents', 'migrations')
  loop
    execute format('alter table %I enable row level security', name);
    if grant_to_postgres then
      execute format('grant select on %I to postgres with grant option', name);
    end if;
  end loop;
end $$;
