-- The original writes the zero UUID as `instance_id` on every user and audit entry it creates, and a few
-- scripts and dashboards written for it select or filter on `instance_id = '00000000-…'`
-- (docs/adopting-gotrue.md#users-in-place). New rows here get the same value. The service never reads it.
-- Existing users keep theirs (adopted ones the original's, others NULL): setting them would rewrite every row
-- of the table at start-up. The audit log's column is new, and a constant default fills it without a rewrite.
alter table users alter column instance_id set default '00000000-0000-0000-0000-000000000000';
alter table audit_log_entries add column if not exists instance_id uuid default '00000000-0000-0000-0000-000000000000';
