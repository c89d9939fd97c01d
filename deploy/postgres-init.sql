-- Run once when the PostgreSQL volume is created. Through PgBouncer in transaction mode the connections'
-- session settings cannot come from the client, so the role carries them (README: PgBouncer).
ALTER ROLE portcullis SET search_path = auth;
ALTER ROLE portcullis SET statement_timeout = '5s';
ALTER ROLE portcullis SET idle_in_transaction_session_timeout = '10s';
