-- Passkeys (docs/passkeys.md): WebAuthn credentials that sign a user in, and the server-side challenges of
-- the ceremonies. Named and shaped after the original's webauthn_credentials and webauthn_challenges.

-- One registered credential. credential_id is the authenticator's raw id (unique across users: an
-- assertion names its credential, and that must lead to one user). public_key is the COSE key as the
-- authenticator sent it; sign_count is the last signature counter seen, which only moves forward.
create table webauthn_credentials (
  id               uuid primary key default gen_random_uuid(),
  user_id          uuid not null references users (id) on delete cascade,
  credential_id    bytea not null,
  public_key       bytea not null,
  attestation_type text not null default '',
  aaguid           uuid,
  sign_count       bigint not null default 0,
  transports       jsonb not null default '[]',
  backup_eligible  boolean not null default false,
  backed_up        boolean not null default false,
  friendly_name    text not null default '',
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  last_used_at     timestamptz,
  constraint webauthn_credentials_credential_id_key unique (credential_id)
);
create index webauthn_credentials_user_id_idx on webauthn_credentials (user_id);

-- A challenge handed out with ceremony options, consumed (deleted) by the verify request that answers it:
-- one use only (a registration's is consumed with its passkey, or when its attestation is refused). Registration challenges belong to the user who asked; passkey
-- sign-in challenges belong to nobody (user_id null) until the assertion names its user.
create table webauthn_challenges (
  id             uuid primary key default gen_random_uuid(),
  user_id        uuid references users (id) on delete cascade,
  challenge_type text not null check (challenge_type in ('signup', 'registration', 'authentication')),
  session_data   jsonb not null,
  created_at     timestamptz not null default now(),
  expires_at     timestamptz not null
);
create index webauthn_challenges_user_id_idx on webauthn_challenges (user_id);
create index webauthn_challenges_expires_at_idx on webauthn_challenges (expires_at);
