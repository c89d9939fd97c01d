-- Placeholder reserving this number for another branch's migration (see docs/adopting-gotrue.md#migration-numbers).
-- DELETE this file when that branch's 00002_*.sql is merged: postgres-shift refuses duplicate numbers.
select 1;
