-- What the cleanup finds by these (src/db/cleanup.ts, docs/tokens-and-sessions.md#cleanup): anonymous
-- users 30 days after their sign-up, and factors never verified. Each index holds only those rows, so
-- finding them never walks the permanent users or the verified factors, however many there are.
create index users_anonymous_created_at_idx on users (created_at) where is_anonymous;
create index mfa_factors_unverified_created_at_idx on mfa_factors (created_at) where status = 'unverified';
