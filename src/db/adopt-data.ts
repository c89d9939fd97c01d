// The row conversions of adoption (docs/adopting-gotrue.md#what-adoption-does): from the original's
// tables, renamed aside as gotrue_<name>, into ours. Each returns the number of rows written.
// Columns that older versions of the original lack are replaced by what the original assumed then, so
// any version since 2022 converts; `col` picks a column when present, else the fallback.
import type postgres from 'postgres';
import { columnsOf, hasColumn, type Tx } from './adopt-catalog.js';

const SHA256_HEX = (expr: string) => `encode(sha256(convert_to(${expr}, 'UTF8')), 'hex')`;

export async function picker(sql: Tx, schema: string, table: string): Promise<(name: string, fallback?: string) => string> {
  const columns = await columnsOf(sql, schema, table);
  return (name, fallback = 'null') => (hasColumn(columns, name) ? `o.${name}` : fallback);
}

export async function runCount(sql: Tx, text: string, params: postgres.ParameterOrJSON<never>[] = []): Promise<number> {
  const result = await sql.unsafe(text, params);
  return result.count ?? 0;
}

export async function copyIdentities(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_identities');
  // Before late 2023 the original's identities.id WAS the provider's subject (text); provider_id came later.
  const [id, providerId] = col('provider_id') === 'null' ? ['gen_random_uuid()', 'o.id'] : ['o.id', 'o.provider_id'];
  return runCount(
    sql,
    `insert into identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     select ${id}, ${providerId}, o.user_id, coalesce(o.identity_data, '{}'), o.provider, o.last_sign_in_at,
            coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now())
     from gotrue_identities o`,
  );
}

export async function copySessions(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_sessions');
  // refreshed_at is `timestamp without time zone` in the original, written in UTC.
  const refreshed = col('refreshed_at') === 'null' ? 'null' : `o.refreshed_at at time zone 'UTC'`;
  return runCount(
    sql,
    `insert into sessions (id, user_id, created_at, updated_at, refreshed_at, factor_id, aal, not_after, user_agent, ip, tag)
     select o.id, o.user_id, coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now()), ${refreshed},
            ${col('factor_id')}, coalesce(${col('aal')}::text, 'aal1'), ${col('not_after')}, ${col('user_agent')},
            host(${col('ip')}::inet), ${col('tag')}
     from gotrue_sessions o`,
  );
}

/**
 * The original's v2 refresh tokens (SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2) live on the session row: its
 * signing key and counter. Our columns for them come with migration 00013, after this copy, so the values
 * wait in gotrue_session_refresh_keys, which 00013 empties into sessions and drops, in the same transaction.
 * Keys go over as they are: sealed ones (SECURITY_DB_ENCRYPTION) open with the same keys here, keys in
 * clear are sealed at their session's next refresh. Nothing to keep before the original had the columns.
 */
export async function keepRefreshTokenKeys(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_sessions');
  if (col('refresh_token_hmac_key') === 'null' || col('refresh_token_counter') === 'null') return 0;
  return runCount(
    sql,
    `create table gotrue_session_refresh_keys as
     select o.id, o.refresh_token_hmac_key::text, o.refresh_token_counter::bigint
     from gotrue_sessions o join sessions s on s.id = o.id
     where o.refresh_token_hmac_key is not null and o.refresh_token_counter is not null`,
  );
}

export async function copyAmrClaims(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_mfa_amr_claims');
  return runCount(
    sql,
    `insert into mfa_amr_claims (id, session_id, authentication_method, created_at, updated_at)
     select coalesce(${col('id')}, gen_random_uuid()), o.session_id, o.authentication_method,
            coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now())
     from gotrue_mfa_amr_claims o join sessions s on s.id = o.session_id`,
  );
}

/**
 * The original keeps refresh tokens in clear; ours keeps their SHA-256 hex, which is what the refresh
 * grant computes from the token a client presents, so every token held by a client keeps working. Row
 * ids are kept, so the parent (a token string there) becomes the parent row's id. Tokens without a
 * session cannot be refreshed by the original either (session_not_found) and are left out; before the
 * original had sessions (its schema as the Supabase database image creates it, before the original's
 * own migrations ran) no token had one.
 */
export async function copyRefreshTokens(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_refresh_tokens');
  if (col('session_id') === 'null') return 0;
  const count = await runCount(
    sql,
    `insert into refresh_tokens (id, token_hash, user_id, session_id, parent_id, revoked, created_at, updated_at)
     select o.id, ${SHA256_HEX('o.token')}, s.user_id, o.session_id, p.id, coalesce(o.revoked, false),
            coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now())
     from gotrue_refresh_tokens o join sessions s on s.id = o.session_id
     left join gotrue_refresh_tokens p on p.token = o.parent and p.session_id = o.session_id
     where o.token is not null and o.token <> ''`,
  );
  await sql.unsafe(
    `select setval(pg_get_serial_sequence('refresh_tokens', 'id'), coalesce((select max(id) from refresh_tokens), 0) + 1, false)`,
  );
  return count;
}

/** The user's address: `phone` is the column, or null before the original had phones (2018's schema). */
const emailOrPhone = (phone: string) => `coalesce(nullif(lower(u.email), ''), nullif(${phone}, ''))`;

/**
 * Pending one-time tokens. The original stores the link token itself (SHA-224 hex of address + code,
 * 'pkce_'-prefixed for PKCE flows) in users.<type> and in one_time_tokens.token_hash; ours stores the
 * SHA-256 hex of that link token, which is exactly what GET/POST /verify compute from a link or from
 * address + code (src/server/verify/one-time-codes.ts), so mails already sent keep working. Ours
 * measures expiry from created_at, the original from users.<type>_sent_at: created_at takes that value.
 */
const TOKEN_SOURCES = [
  { type: 'confirmation_token', sentAt: 'confirmation_sent_at', address: emailOrPhone },
  { type: 'recovery_token', sentAt: 'recovery_sent_at', address: emailOrPhone },
  { type: 'email_change_token_new', sentAt: 'email_change_sent_at', address: () => `nullif(lower(u.email_change), '')` },
  { type: 'email_change_token_current', sentAt: 'email_change_sent_at', address: () => `nullif(lower(u.email), '')` },
  { type: 'phone_change_token', sentAt: 'phone_change_sent_at', address: () => `nullif(u.phone_change, '')` },
  { type: 'reauthentication_token', sentAt: 'reauthentication_sent_at', address: emailOrPhone },
] as const;

export async function copyOneTimeTokens(sql: Tx, schema: string, fromTable: boolean): Promise<number> {
  const users = await columnsOf(sql, schema, 'users');
  let count = 0;
  if (fromTable) {
    const sentAt = TOKEN_SOURCES.filter((s) => hasColumn(users, s.sentAt))
      .map((s) => `when '${s.type}' then u.${s.sentAt}`)
      .join(' ');
    count += await runCount(
      sql,
      `insert into one_time_tokens (user_id, token_type, token_hash, relates_to, created_at, updated_at)
       select o.user_id, o.token_type::text, ${SHA256_HEX('o.token_hash')}, o.relates_to,
              coalesce(case o.token_type::text ${sentAt} end, o.created_at at time zone 'UTC'), now()
       from gotrue_one_time_tokens o join users u on u.id = o.user_id
       where o.token_type::text in (${TOKEN_SOURCES.map((s) => `'${s.type}'`).join(', ')})
       on conflict (user_id, token_type) do nothing`,
    );
  }
  // Versions before one_time_tokens (2024) kept tokens only in the users columns; later ones write both.
  const phone = hasColumn(users, 'phone') ? 'u.phone' : 'null';
  for (const s of TOKEN_SOURCES) {
    if (!hasColumn(users, s.type)) continue;
    const sentAt = hasColumn(users, s.sentAt) ? `u.${s.sentAt}` : 'null';
    const address = s.address(phone);
    count += await runCount(
      sql,
      `insert into one_time_tokens (user_id, token_type, token_hash, relates_to, created_at, updated_at)
       select u.id, '${s.type}', ${SHA256_HEX(`u.${s.type}`)}, ${address}, coalesce(${sentAt}, now()), now()
       from users u where u.${s.type} is not null and btrim(u.${s.type}) <> '' and ${address} is not null
       on conflict (user_id, token_type) do nothing`,
    );
  }
  return count;
}

export async function copyAuditLog(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_audit_log_entries');
  return runCount(
    sql,
    `insert into audit_log_entries (id, payload, ip_address, created_at)
     select o.id, coalesce(o.payload::jsonb, '{}'), coalesce(${col('ip_address')}, ''), coalesce(o.created_at, now())
     from gotrue_audit_log_entries o`,
  );
}
