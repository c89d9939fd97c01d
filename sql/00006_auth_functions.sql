-- auth.uid(), auth.role(), auth.email() and auth.jwt() (docs/adopting-gotrue.md#sql-helper-functions): the
-- functions row-level-security policies written for the original call. They read the settings PostgREST
-- sets per request, in both of its forms: one setting per claim (request.jwt.claim.sub, PostgREST < 9)
-- and one JSON document (request.jwt.claims, PostgREST >= 9). An empty setting counts as unset.
--
-- Created only when missing: a database the original used already has them, possibly owned by another
-- role and granted to the API roles; replacing them could fail (not the owner) or drop nothing but
-- still be a change nobody asked for. Unqualified names land in the namespace (search_path, migrate.ts).
do $$
begin
  if not exists (select 1 from pg_proc where pronamespace = current_schema()::text::regnamespace and proname = 'jwt' and pronargs = 0) then
    create function jwt() returns jsonb language sql stable as $f$
      select coalesce(nullif(current_setting('request.jwt.claim', true), ''), nullif(current_setting('request.jwt.claims', true), ''))::jsonb
    $f$;
  end if;
  if not exists (select 1 from pg_proc where pronamespace = current_schema()::text::regnamespace and proname = 'uid' and pronargs = 0) then
    create function uid() returns uuid language sql stable as $f$
      select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                      nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')::uuid
    $f$;
  end if;
  if not exists (select 1 from pg_proc where pronamespace = current_schema()::text::regnamespace and proname = 'role' and pronargs = 0) then
    create function role() returns text language sql stable as $f$
      select coalesce(nullif(current_setting('request.jwt.claim.role', true), ''),
                      nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
    $f$;
  end if;
  if not exists (select 1 from pg_proc where pronamespace = current_schema()::text::regnamespace and proname = 'email' and pronargs = 0) then
    create function email() returns text language sql stable as $f$
      select coalesce(nullif(current_setting('request.jwt.claim.email', true), ''),
                      nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
    $f$;
  end if;
end
$$;
