-- OAuth2 and OIDC providers added at run time through /admin/custom-providers (docs/custom-providers.md).
-- The original's columns and checks, so its rows move over unchanged (docs/adopting-gotrue.md), with one
-- departure: the https-only checks on the URL columns are left to the admin API, which can allow plain
-- http for private deployments and tests (CUSTOM_OAUTH_ALLOW_PRIVATE_URLS). client_secret holds the
-- sealed envelope of src/server/mfa/encryption.ts (or, in adopted rows, whatever the original stored).
create table custom_oauth_providers (
  id uuid not null default gen_random_uuid(),
  provider_type text not null check (provider_type in ('oauth2', 'oidc')),
  identifier text not null,
  name text not null,
  client_id text not null,
  client_secret text not null,
  acceptable_client_ids text[] not null default '{}',
  scopes text[] not null default '{}',
  pkce_enabled boolean not null default true,
  attribute_mapping jsonb not null default '{}',
  authorization_params jsonb not null default '{}',
  enabled boolean not null default true,
  email_optional boolean not null default false,
  issuer text null,
  discovery_url text null,
  skip_nonce_check boolean not null default false,
  cached_discovery jsonb null,
  discovery_cached_at timestamptz null,
  authorization_url text null,
  token_url text null,
  userinfo_url text null,
  jwks_uri text null,
  custom_claims_allowlist text[] not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint custom_oauth_providers_pkey primary key (id),
  constraint custom_oauth_providers_identifier_key unique (identifier),
  constraint custom_oauth_providers_oidc_requires_issuer check (provider_type != 'oidc' or issuer is not null),
  constraint custom_oauth_providers_oauth2_requires_endpoints check (
    provider_type != 'oauth2' or (authorization_url is not null and token_url is not null and userinfo_url is not null)
  ),
  constraint custom_oauth_providers_identifier_format check (identifier ~ '^[a-z0-9][a-z0-9:-]{0,48}[a-z0-9]$'),
  constraint custom_oauth_providers_name_length check (char_length(name) >= 1 and char_length(name) <= 100),
  constraint custom_oauth_providers_issuer_length check (issuer is null or (char_length(issuer) >= 1 and char_length(issuer) <= 2048)),
  constraint custom_oauth_providers_discovery_url_length check (discovery_url is null or char_length(discovery_url) <= 2048),
  constraint custom_oauth_providers_authorization_url_length check (authorization_url is null or char_length(authorization_url) <= 2048),
  constraint custom_oauth_providers_token_url_length check (token_url is null or char_length(token_url) <= 2048),
  constraint custom_oauth_providers_userinfo_url_length check (userinfo_url is null or char_length(userinfo_url) <= 2048),
  constraint custom_oauth_providers_jwks_uri_length check (jwks_uri is null or char_length(jwks_uri) <= 2048),
  constraint custom_oauth_providers_client_id_length check (char_length(client_id) >= 1 and char_length(client_id) <= 512)
);
create index custom_oauth_providers_provider_type_idx on custom_oauth_providers (provider_type);
create index custom_oauth_providers_created_at_idx on custom_oauth_providers (created_at);
