-- SESSIONS_ALLOW_LOW_AAL (docs/tokens-and-sessions.md#session-limits).

-- Has SESSIONS_ALLOW_LOW_AAL ended the session? It has when the session is still aal1, was created longer
-- ago than `low_aal_seconds`, and its user could reach aal2: has a verified MFA factor of any type. The
-- session's own aal is what counts (the original's CheckValidity), not its AMR. The cheap tests go first,
-- so the factor lookup runs only for an old aal1 session. PL/pgSQL so that lookup's plan is cached per
-- connection; callers skip the call altogether while the setting is off.
create function session_low_aal(
  p_user_id         uuid,
  p_aal             text,
  p_created_at      timestamptz,
  p_low_aal_seconds float8
) returns boolean
language plpgsql stable as $$
begin
  if p_low_aal_seconds is not null and p_aal = 'aal1' and p_created_at + make_interval(secs => p_low_aal_seconds) < now() then
    return exists (select 1 from mfa_factors where user_id = p_user_id and status = 'verified');
  end if;
  return false;
end
$$;

-- newer_session_exists (00005) with SESSIONS_ALLOW_LOW_AAL: a newer session that setting has ended does
-- not count either, as the original skips every session that is not valid. A new overload, so that the
-- seven-argument one stays for an instance of the previous version sharing the database during an upgrade.
create function newer_session_exists(
  p_user_id            uuid,
  p_session_id         uuid,
  p_last_active_at     timestamptz,
  p_tag                text,
  p_timebox_seconds    float8,
  p_inactivity_seconds float8,
  p_tags               text[],
  p_low_aal_seconds    float8
) returns boolean
language plpgsql stable as $$
begin
  return exists (
    select 1 from sessions o
    where o.user_id = p_user_id and o.id <> p_session_id
      and coalesce(o.refreshed_at, o.created_at) > p_last_active_at
      and session_ended(o.not_after, o.created_at, coalesce(o.refreshed_at, o.created_at), p_timebox_seconds, p_inactivity_seconds) is null
      and not (p_low_aal_seconds is not null and session_low_aal(o.user_id, o.aal, o.created_at, p_low_aal_seconds))
      and session_tag(o.tag, p_tags) is not distinct from session_tag(p_tag, p_tags));
end
$$;
