-- Session limits and the background cleanup (docs/tokens-and-sessions.md#session-limits,
-- docs/tokens-and-sessions.md#cleanup).
--
-- Two helper functions decide when a session has ended, so that the refresh grant, the bearer checks and
-- the cleanup apply one rule (src/db/refresh-tokens.ts, user-session.ts, sessions.ts, cleanup.ts). The
-- durations come from the settings as seconds; NULL turns a limit off. now() is the statement's start:
-- every instance compares with the database's clock.

-- Why a session has ended by time: 'expired' (past not_after or the time box), 'inactive' (not refreshed
-- within the inactivity timeout since last_active_at), or NULL while it lives. A plain SQL expression
-- with no sub-select, so the planner inlines it into the calling statement.
create function session_ended(
  not_after          timestamptz,
  created_at         timestamptz,
  last_active_at     timestamptz,
  timebox_seconds    float8,
  inactivity_seconds float8
) returns text
language sql stable parallel safe as $$
  select case
    when not_after < now() or created_at + make_interval(secs => timebox_seconds) < now() then 'expired'
    when last_active_at + make_interval(secs => inactivity_seconds) < now() then 'inactive'
  end
$$;

-- The tag a session counts under for SESSIONS_SINGLE_PER_USER: its own when it is one of `tags`, else
-- the first of `tags` (NULL for every session when no tags are configured: all share one group).
create function session_tag(tag text, tags text[]) returns text
language sql immutable parallel safe as $$
  select case when tag = any(tags) then tag else tags[1] end
$$;

-- SESSIONS_SINGLE_PER_USER: does the user have another live session, under the same tag, that was
-- active (refreshed, or created) later than `last_active_at`? Then the session given has been
-- replaced by a newer sign-in. PL/pgSQL so the sub-select's plan is cached per connection.
create function newer_session_exists(
  p_user_id            uuid,
  p_session_id         uuid,
  p_last_active_at     timestamptz,
  p_tag                text,
  p_timebox_seconds    float8,
  p_inactivity_seconds float8,
  p_tags               text[]
) returns boolean
language plpgsql stable as $$
begin
  return exists (
    select 1 from sessions o
    where o.user_id = p_user_id and o.id <> p_session_id
      and coalesce(o.refreshed_at, o.created_at) > p_last_active_at
      and session_ended(o.not_after, o.created_at, coalesce(o.refreshed_at, o.created_at), p_timebox_seconds, p_inactivity_seconds) is null
      and session_tag(o.tag, p_tags) is not distinct from session_tag(p_tag, p_tags));
end
$$;

-- Cleanup finds its rows by these, in batches (src/db/cleanup.ts). The partial index on revoked tokens
-- is written once per rotation (the revoked row version), never for the active token; the original keeps
-- a full index on updated_at instead. not_after is rarely set, so its partial index costs nothing.
create index refresh_tokens_revoked_updated_at_idx on refresh_tokens (updated_at) where revoked;
create index sessions_not_after_idx on sessions (not_after) where not_after is not null;
create index one_time_tokens_created_at_idx on one_time_tokens (created_at);
