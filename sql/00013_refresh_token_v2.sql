-- The original's v2 refresh tokens (docs/tokens-and-sessions.md#v2-refresh-tokens): a session issued under
-- SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2 has no refresh_tokens rows; its row keeps the key its tokens
-- are signed with and the counter of the one token currently valid. Both NULL on a session of the
-- 12-character format. Names and types are the original's, so an adopted session's values carry over.
-- The key is stored sealed for its session (the envelope of docs/mfa.md#secrets-at-rest), or, as the
-- original left it without SECURITY_DB_ENCRYPTION, as base64url in clear until its next refresh seals it.
alter table sessions add column refresh_token_hmac_key text;
alter table sessions add column refresh_token_counter bigint;

-- Adoption (src/db/adopt-data.ts keepRefreshTokenKeys) copies the original's sessions before these
-- columns exist, so it keeps their keys and counters aside; they land here, in the adoption's transaction.
do $$
begin
  if to_regclass('gotrue_session_refresh_keys') is not null then
    update sessions s set refresh_token_hmac_key = k.refresh_token_hmac_key, refresh_token_counter = k.refresh_token_counter
    from gotrue_session_refresh_keys k where k.id = s.id;
    drop table gotrue_session_refresh_keys;
  end if;
end
$$;
