-- GET /admin/users lists one audience in (created_at, id) order. Its cursor pages (docs/api.md#get-adminusers)
-- resume with `aud = $1 and (created_at, id) < ($2, $3) order by created_at desc, id desc limit n`: with
-- this index that is one seek and n rows read, in either direction, however deep the page; with only
-- users_created_at_idx every other audience's rows and every tie on created_at would be read and sorted.
-- The page-number mode's order and its count use it as well.
create index users_aud_created_at_id_idx on users (aud, created_at, id);
