-- An SSO provider's resource_id may be "", as the original stores a `"resource_id": ""` given to its admin API
-- (its own check on the column compares with `= null`, so it never refuses ""). Databases that applied
-- 00010 before it stopped making the stricter check lose it here.
alter table sso_providers drop constraint if exists "resource_id not empty";
