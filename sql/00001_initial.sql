-- Portcullis schema, first version.
--
-- Table names are UNQUALIFIED on purpose: migrate.ts connects with search_path = <DB_NAMESPACE>, so every
-- object below lands in that schema, and two namespaces in one database stay fully independent (see
-- test/migrate.test.ts). Runtime queries are unqualified too; db/pool.ts sets the same search_path.
--
-- The schema is not an interface (SPEC.txt §6): it is informed by the original service's tables
-- (REFERENCE.md §12) but is our own. Differences that matter to the code:
--   * no token columns on users: one-time tokens live only in one_time_tokens, and only as hashes;
--   * refresh tokens are stored as SHA-256 hex (token_hash), never in clear; parent_id is a row id;
--   * absent values are NULL, not '' (email, phone, email_change, phone_change, encrypted_password);
--   * every timestamp is timestamptz;
--   * no instance_id, no RLS or helper SQL functions (PostgREST integration is out of scope).
-- postgres-shift runs this file once, inside one transaction with any other pending files.

-- Users. email is lower-cased by the writer and phone is digits without '+', so lookups are plain equality.
create table users (
  id                          uuid primary key default gen_random_uuid(),
  aud                         text not null default '',
  role                        text not null default '',
  email                       text,
  phone                       text,
  encrypted_password          text,
  email_confirmed_at          timestamptz,
  phone_confirmed_at          timestamptz,
  -- LEAST ignores NULLs: confirmed as soon as either channel is (the original's definition).
  confirmed_at                timestamptz generated always as (least(email_confirmed_at, phone_confirmed_at)) stored,
  invited_at                  timestamptz,
  confirmation_sent_at        timestamptz,
  recovery_sent_at            timestamptz,
  email_change                text,
  email_change_sent_at        timestamptz,
  -- 0 = nothing confirmed yet, 1 = one side of a secure (two-address) email change confirmed.
  email_change_confirm_status smallint not null default 0 check (email_change_confirm_status between 0 and 2),
  phone_change                text,
  phone_change_sent_at        timestamptz,
  reauthentication_sent_at    timestamptz,
  last_sign_in_at             timestamptz,
  raw_app_meta_data           jsonb not null default '{}',
  raw_user_meta_data          jsonb not null default '{}',
  banned_until                timestamptz,
  deleted_at                  timestamptz,
  is_anonymous                boolean not null default false,
  is_sso_user                 boolean not null default false,
  created_at                  timestamptz not null default now(),
  updated_at                  timestamptz not null default now()
);
-- Emails are unique case-insensitively among live, non-SSO users. Soft-deleted users keep an obfuscated
-- email and are excluded. Lookups must repeat the predicate to use this index:
--   where lower(email) = $1 and deleted_at is null and not is_sso_user
create unique index users_email_key on users (lower(email)) where deleted_at is null and not is_sso_user;
create unique index users_phone_key on users (phone) where deleted_at is null;
create index users_created_at_idx on users (created_at);

-- Identities: one per (provider, subject). For email/phone identities provider_id = the user id.
create table identities (
  id              uuid primary key default gen_random_uuid(),
  provider_id     text not null,
  user_id         uuid not null references users (id) on delete cascade,
  identity_data   jsonb not null default '{}',
  provider        text not null,
  -- Derived so that linking by email (REFERENCE §9.4) is an indexed equality, whatever the provider sent.
  email           text generated always as (lower(identity_data ->> 'email')) stored,
  last_sign_in_at timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  constraint identities_provider_id_provider_key unique (provider_id, provider)
);
create index identities_user_id_idx on identities (user_id);
create index identities_email_idx on identities (email);

-- Sessions: one per sign-in. The refresh grant locks the session row (select ... for update) so that
-- concurrent refreshes of one session serialise; refresh_tokens rows hang off it.
create table sessions (
  id           uuid primary key default gen_random_uuid(),
  user_id      uuid not null references users (id) on delete cascade,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now(),
  refreshed_at timestamptz,
  factor_id    uuid,
  aal          text not null default 'aal1' check (aal in ('aal1', 'aal2', 'aal3')),
  not_after    timestamptz,
  user_agent   text,
  ip           text,
  tag          text
);
-- (user_id, created_at) also serves every lookup by user_id alone (listing, logout, the users FK cascade),
-- so a separate user_id index would only cost a second index write on every sign-in.
create index sessions_user_id_created_at_idx on sessions (user_id, created_at);

-- Authentication methods used in a session (the JWT's amr claim); upserted on (session_id, method).
create table mfa_amr_claims (
  id                    uuid primary key default gen_random_uuid(),
  session_id            uuid not null references sessions (id) on delete cascade,
  authentication_method text not null,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now(),
  constraint mfa_amr_claims_session_id_authentication_method_key unique (session_id, authentication_method)
);

-- Refresh tokens (REFERENCE §4.3): one row per issued token; rotation revokes the old row and inserts a
-- child with parent_id = the old row's id. Only SHA-256 hex of the token is stored.
-- user_id is denormalised (no FK: sessions already cascade from users) for per-user queries.
create table refresh_tokens (
  id         bigserial primary key,
  token_hash text not null,
  user_id    uuid not null,
  session_id uuid not null references sessions (id) on delete cascade,
  parent_id  bigint,
  revoked    boolean not null default false,
  created_at timestamptz not null default now(),
  -- For a revoked row this is the revocation time: the reuse interval is measured from it.
  updated_at timestamptz not null default now(),
  constraint refresh_tokens_token_hash_key unique (token_hash)
);
-- Hot paths: "the active token of this session" and family revocation (session_id, revoked); "is the
-- presented revoked token the parent of the active one" (parent_id); per-user revocation (user_id).
create index refresh_tokens_session_id_revoked_idx on refresh_tokens (session_id, revoked);
create index refresh_tokens_parent_id_idx on refresh_tokens (parent_id);
create index refresh_tokens_user_id_idx on refresh_tokens (user_id);

-- One-time tokens (REFERENCE §7.1): at most one live token per (user, type); issuing a new one replaces the
-- old (insert ... on conflict (user_id, token_type) do update). Invites reuse confirmation_token, as the
-- original does (GET /verify type=invite and type=signup both consume it).
create table one_time_tokens (
  id         uuid primary key default gen_random_uuid(),
  user_id    uuid not null references users (id) on delete cascade,
  token_type text not null check (token_type in (
    'confirmation_token', 'reauthentication_token', 'recovery_token',
    'email_change_token_new', 'email_change_token_current', 'phone_change_token')),
  -- Lowercase hex of the token's hash; PKCE email flows prefix it with 'pkce_'.
  token_hash text not null check (token_hash <> ''),
  -- The address the token was sent to: lower-case email or phone digits.
  relates_to text not null,
  -- Wrong codes tried against this token; the verifier invalidates it at security.otpMaxAttempts.
  attempts   integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint one_time_tokens_user_id_token_type_key unique (user_id, token_type)
);
-- Link verification finds the token by hash; OTP verification by address + type.
create index one_time_tokens_token_hash_idx on one_time_tokens (token_hash);
create index one_time_tokens_relates_to_token_type_idx on one_time_tokens (relates_to, token_type);

-- PKCE flow state (REFERENCE §4.6). code_challenge(_method) are both set or both NULL, so OAuth flows
-- without PKCE could keep their state here too. user_id is unknown until the flow reaches a user.
create table flow_state (
  id                     uuid primary key default gen_random_uuid(),
  user_id                uuid references users (id) on delete cascade,
  auth_code              text,
  code_challenge_method  text check (code_challenge_method in ('s256', 'plain')),
  code_challenge         text,
  provider_type          text not null default '',
  provider_access_token  text,
  provider_refresh_token text,
  authentication_method  text not null,
  auth_code_issued_at    timestamptz,
  referrer               text,
  created_at             timestamptz not null default now(),
  updated_at             timestamptz not null default now(),
  constraint flow_state_challenge_pair check ((code_challenge is null) = (code_challenge_method is null))
);
-- auth_code is a random UUID handed to the client; unique so the exchange finds exactly one flow.
create unique index flow_state_auth_code_key on flow_state (auth_code);
create index flow_state_user_id_authentication_method_idx on flow_state (user_id, authentication_method);
create index flow_state_created_at_idx on flow_state (created_at);

-- Audit log (REFERENCE §14.4): payload {actor_id, actor_username, action, log_type, traits, ...}.
create table audit_log_entries (
  id         uuid primary key default gen_random_uuid(),
  payload    jsonb not null default '{}',
  ip_address text not null default '',
  created_at timestamptz not null default now()
);
create index audit_log_entries_created_at_idx on audit_log_entries (created_at);

-- Rate-limit state shared by every HTTP thread and every instance (DESIGN §2). One row per key
-- ('email_sent', 'sms_sent', 'token:<client>', ...). A check is ONE atomic statement,
-- insert ... on conflict (key) do update ... where <allowed> returning ..., which hands back a row when
-- the request is allowed and no row when it is denied:
--   fixed window (N per W s): window_start + count;  token bucket (burst B, R per s): tokens at updated_at.
-- UNLOGGED: counters need no crash safety or replication, and skipping WAL keeps a write per request cheap
-- (after a crash the table comes back empty, i.e. every limit restarts: acceptable).
-- No index besides the key, so updates stay HOT; fillfactor leaves room on each page for them.
-- Cleanup: delete from rate_limits where updated_at < now() - <age>, with age at least the longest window
-- and the longest full-refill time (burst / rate), or a deleted row would hand out a fresh allowance early.
create unlogged table rate_limits (
  key          text primary key,
  window_start timestamptz not null default now(),
  count        integer not null default 0,
  tokens       double precision not null default 0,
  updated_at   timestamptz not null default now()
) with (fillfactor = 70);
