-- Multi-factor authentication (docs/mfa.md): the factors a user enrolled and the challenges issued for
-- them. Table and column names and meanings are the original's (REFERENCE §12.2), so a GoTrue database
-- adopted later maps onto these rows column for column; what we add is marked "ours".

-- One row per enrolled factor. `secret` holds the TOTP secret as an encrypted envelope (src/server/mfa/
-- encryption.ts), never the secret itself; `phone` the phone factor's number (digits, no '+').
-- friendly_name may be empty; a non-empty one is unique per user.
create table mfa_factors (
  id                           uuid primary key default gen_random_uuid(),
  user_id                      uuid not null references users (id) on delete cascade,
  friendly_name                text,
  factor_type                  text not null check (factor_type in ('totp', 'webauthn', 'phone')),
  status                       text not null default 'unverified' check (status in ('unverified', 'verified')),
  created_at                   timestamptz not null default now(),
  updated_at                   timestamptz not null default now(),
  secret                       text,
  phone                        text,
  last_challenged_at           timestamptz,
  web_authn_credential         jsonb,
  web_authn_aaguid             uuid,
  last_webauthn_challenge_data jsonb,
  -- ours: the newest TOTP time step a code was accepted for; a code of that step or an older one is
  -- refused, so an observed code cannot be replayed within its validity window.
  last_totp_step               bigint
);
create unique index mfa_factors_user_friendly_name_unique on mfa_factors (friendly_name, user_id)
  where trim(friendly_name) <> '';
create unique index unique_phone_factor_per_user on mfa_factors (user_id, phone);
-- (user_id, created_at) serves every lookup by user (listing, the user JSON, the cascade).
create index factor_id_created_at_idx on mfa_factors (user_id, created_at);

-- One row per challenge: the factor, the address it was issued to (verify must come from the same one),
-- when it was verified (a challenge verifies once), and for phone factors the code sent, encrypted as the
-- TOTP secret is. web_authn_session_data is the WebAuthn ceremony state (the webauthn factor type).
create table mfa_challenges (
  id                     uuid primary key default gen_random_uuid(),
  factor_id              uuid not null references mfa_factors (id) on delete cascade,
  created_at             timestamptz not null default now(),
  verified_at            timestamptz,
  ip_address             text not null,
  otp_code               text,
  web_authn_session_data jsonb
);
create index mfa_challenges_factor_id_idx on mfa_challenges (factor_id);
create index mfa_challenge_created_at_idx on mfa_challenges (created_at desc);
