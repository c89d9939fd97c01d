-- The OAuth 2.1 authorization server (docs/oauth-server.md): the third-party apps (clients) an operator
-- or the apps themselves registered, the authorization requests a user is asked to approve, and the
-- consents a user gave. Table and column names and meanings are the original's, so a GoTrue database's
-- rows map onto these column for column; enum types become text with checks, as in 00003_mfa.sql.
-- Where we differ it is marked "ours".

-- One row per client; id is the public client_id. redirect_uris and grant_types are comma-joined lists,
-- as the original stores them. client_secret_hash: base64url SHA-256 of the secret, null for public
-- clients. A deleted client keeps its row with deleted_at set (the original's soft delete).
create table oauth_clients (
  id                         uuid primary key,
  client_secret_hash         text,
  registration_type          text not null check (registration_type in ('dynamic', 'manual')),
  redirect_uris              text not null,
  grant_types                text not null,
  client_name                text check (char_length(client_name) <= 1024),
  client_uri                 text check (char_length(client_uri) <= 2048),
  logo_uri                   text check (char_length(logo_uri) <= 2048),
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now(),
  deleted_at                 timestamptz,
  client_type                text not null default 'confidential' check (client_type in ('public', 'confidential')),
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'none'))
);
create index oauth_clients_deleted_at_idx on oauth_clients (deleted_at);

-- One row per GET /oauth/authorize: pending until the user approves (a code is issued), denies, or it
-- expires. authorization_code holds the SHA-256 hex of the code (ours: the original stores the code
-- itself); the code is deleted with its row when it is exchanged, so it is single-use.
create table oauth_authorizations (
  id                    uuid primary key default gen_random_uuid(),
  authorization_id      text not null unique,
  client_id             uuid not null references oauth_clients (id) on delete cascade,
  user_id               uuid references users (id) on delete cascade,
  redirect_uri          text not null check (char_length(redirect_uri) <= 2048),
  scope                 text not null check (char_length(scope) <= 4096),
  state                 text check (char_length(state) <= 4096),
  resource              text check (char_length(resource) <= 2048),
  code_challenge        text check (char_length(code_challenge) <= 128),
  code_challenge_method text check (code_challenge_method in ('s256', 'plain')),
  response_type         text not null default 'code' check (response_type = 'code'),
  status                text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'expired')),
  authorization_code    text unique check (char_length(authorization_code) <= 255),
  created_at            timestamptz not null default now(),
  expires_at            timestamptz not null default (now() + interval '3 minutes'),
  approved_at           timestamptz,
  nonce                 text check (char_length(nonce) <= 255),
  constraint oauth_authorizations_expires_at_future check (expires_at > created_at)
);
create index oauth_auth_pending_exp_idx on oauth_authorizations (expires_at) where status = 'pending';

-- What a user agreed to share with a client: one row per (user, client); revoked_at set when the user
-- revokes the grant, cleared when they approve again.
create table oauth_consents (
  id         uuid primary key default gen_random_uuid(),
  user_id    uuid not null references users (id) on delete cascade,
  client_id  uuid not null references oauth_clients (id) on delete cascade,
  scopes     text not null check (char_length(scopes) <= 2048 and char_length(trim(scopes)) > 0),
  granted_at timestamptz not null default now(),
  revoked_at timestamptz,
  constraint oauth_consents_user_client_unique unique (user_id, client_id),
  constraint oauth_consents_revoked_after_granted check (revoked_at is null or revoked_at >= granted_at)
);
create index oauth_consents_user_order_idx on oauth_consents (user_id, granted_at desc);
create index oauth_consents_active_client_idx on oauth_consents (client_id) where revoked_at is null;

-- A session issued to a client through /oauth/token carries the client and the scopes granted: the
-- refresh grant checks the client, revoking a grant deletes these sessions (and so their tokens).
alter table sessions add column oauth_client_id uuid references oauth_clients (id) on delete cascade;
alter table sessions add column scopes text check (char_length(scopes) <= 4096);
create index sessions_oauth_client_id_idx on sessions (oauth_client_id) where oauth_client_id is not null;
