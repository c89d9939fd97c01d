-- OAuth sign-in keeps the whole flow between GET /authorize and GET|POST /callback in flow_state
-- (docs/oauth.md#state): the row's id is the `state` sent to the provider, so nothing in the URL needs a
-- signature. auth_code stays NULL until the callback finishes a PKCE flow.
alter table flow_state
  add column invite_token           text,
  add column linking_target_id      uuid references users (id) on delete cascade,
  add column email_optional         boolean not null default false,
  -- PKCE towards the provider (X): the verifier never leaves the server.
  add column provider_code_verifier text,
  -- Twitter's OAuth 1.0a: the request token's secret, needed to sign the access-token request.
  add column oauth1_token_secret    text,
  -- Set by the first callback that claims the state: a second callback with the same state is refused.
  add column callback_at            timestamptz;
