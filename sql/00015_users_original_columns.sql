-- The original's users columns this service does not use, back on the table (docs/adopting-gotrue.md#users-in-place):
-- the seed scripts and fixtures written for the original insert straight into auth.users and name them
-- (`insert into auth.users (instance_id, …, confirmation_token, recovery_token, …) values (…, '', '')`),
-- which failed with "column does not exist" on a fresh or adopted database. They are accepted and never
-- read: one-time tokens live hashed in one_time_tokens, roles in `role`. The token columns default to ''
-- as the original's rows hold them; adoption drops the original's copies (their tokens moved) and this
-- adds them back empty.
alter table users
  add column if not exists instance_id uuid,
  add column if not exists is_super_admin boolean,
  add column if not exists confirmation_token varchar(255) default '',
  add column if not exists recovery_token varchar(255) default '',
  add column if not exists email_change_token_new varchar(255) default '',
  add column if not exists email_change_token_current varchar(255) default '',
  add column if not exists phone_change_token varchar(255) default '',
  add column if not exists reauthentication_token varchar(255) default '';
