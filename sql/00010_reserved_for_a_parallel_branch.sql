-- Placeholder: number 00010 belongs to a feature built on another branch at the same time; this empty file
-- only keeps the numbering contiguous (postgres-shift refuses gaps) so this branch's 00011 can run. Drop
-- this file when that branch's 00010 is merged.
select 1;
