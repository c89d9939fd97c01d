-- Web3 sign-in messages already used (docs/web3.md#replay): a signed SIWE/SIWS message signs in once.
-- The original accepts the same signed message again until its validity ends; here the SHA-256 of each
-- accepted message is kept until then (usable_until: its Expiration Time or Issued At plus the chain's
-- maximum validity, the earlier), inserted in the sign-in's own transaction, so a second or concurrent
-- use of it finds the row and is refused. The background cleanup removes rows past usable_until.
create table web3_message_uses (
  message_hash bytea primary key,
  usable_until timestamptz not null,
  created_at   timestamptz not null default now()
);
create index web3_message_uses_usable_until_idx on web3_message_uses (usable_until);
