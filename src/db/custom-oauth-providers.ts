// custom_oauth_providers: OAuth2 and OIDC providers added at run time (docs/custom-providers.md). Every
// sign-in reads its provider's row here, so a change made through the admin API holds from the next
// request on every thread and instance.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Queryable } from './pool.js';

export type CustomProviderType = 'oauth2' | 'oidc';

export interface CustomProviderRow {
  id: string;
  provider_type: CustomProviderType;
  identifier: string;
  name: string;
  client_id: string;
  /** the sealed envelope (or an adopted row's value as the original stored it) */
  client_secret: string;
  acceptable_client_ids: string[];
  scopes: string[];
  pkce_enabled: boolean;
  attribute_mapping: Record<string, unknown>;
  authorization_params: Record<string, unknown>;
  enabled: boolean;
  email_optional: boolean;
  issuer: string | null;
  discovery_url: string | null;
  skip_nonce_check: boolean;
  cached_discovery: Record<string, unknown> | null;
  discovery_cached_at: Date | null;
  authorization_url: string | null;
  token_url: string | null;
  userinfo_url: string | null;
  jwks_uri: string | null;
  custom_claims_allowlist: string[];
  created_at: Date;
  updated_at: Date;
}

/** The columns an insert or update writes: every one but the timestamps. */
export type CustomProviderFields = Omit<CustomProviderRow, 'created_at' | 'updated_at'>;

export async function findCustomProvider(q: Queryable, identifier: string): Promise<CustomProviderRow | null> {
  const { rows } = await q.query<CustomProviderRow>('select * from custom_oauth_providers where identifier = $1', [identifier]);
  return rows[0] ?? null;
}

/**
 * The row and its version (the system column xmin, new at every write of the row, whoever makes it), for an
 * update that merges onto it outside a transaction and writes only if lockCustomProviderVersion still finds it.
 */
export async function findCustomProviderVersion(
  q: Queryable,
  identifier: string,
): Promise<{ row: CustomProviderRow; version: string } | null> {
  const { rows } = await q.query<CustomProviderRow & { row_version: string }>(
    'select *, xmin::text as row_version from custom_oauth_providers where identifier = $1',
    [identifier],
  );
  if (!rows[0]) return null;
  const { row_version: version, ...row } = rows[0];
  return { row, version };
}

/**
 * Locks the row `id` until the caller's transaction ends (a concurrent update waits) and returns its current
 * version, the newest committed one; null when it was deleted meanwhile.
 */
export async function lockCustomProviderVersion(q: pg.PoolClient, id: string): Promise<string | null> {
  const { rows } = await q.query<{ version: string }>('select xmin::text as version from custom_oauth_providers where id = $1 for update', [
    id,
  ]);
  return rows[0]?.version ?? null;
}

/**
 * Makes the namespace's creates take turns until the caller's transaction ends, so that a count taken after
 * it (a statement of its own: a statement's snapshot predates the lock it waits for) counts every provider a
 * concurrent create committed, and the quota holds. A pooled client, as tx hands them out only inside a
 * transaction: the lock is that transaction's.
 */
export async function lockCustomProviderCreates(q: pg.PoolClient, namespace: string): Promise<void> {
  await q.query('select pg_advisory_xact_lock($1::bigint)', [createLockKey(namespace)]);
}

/** A 64-bit advisory lock id per namespace, as migrate.ts derives its own. */
function createLockKey(namespace: string): string {
  const digest = createHash('sha256').update(`portcullis:custom-oauth-providers:create:${namespace}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** Newest first, optionally of one type. */
export async function listCustomProviders(q: Queryable, type: CustomProviderType | null): Promise<CustomProviderRow[]> {
  const { rows } = await q.query<CustomProviderRow>(
    'select * from custom_oauth_providers where $1::text is null or provider_type = $1 order by created_at desc, id',
    [type],
  );
  return rows;
}

export async function countCustomProviders(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: number }>('select count(*)::int as n from custom_oauth_providers');
  return rows[0].n;
}

/** Inserts the row; null when another request took the identifier first (the unique constraint). */
export async function insertCustomProvider(q: Queryable, p: CustomProviderFields): Promise<CustomProviderRow | null> {
  const { rows } = await q.query<CustomProviderRow>(
    `insert into custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret, acceptable_client_ids,
       scopes, pkce_enabled, attribute_mapping, authorization_params, enabled, email_optional, issuer, discovery_url,
       skip_nonce_check, cached_discovery, discovery_cached_at, authorization_url, token_url, userinfo_url, jwks_uri,
       custom_claims_allowlist)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
     on conflict (identifier) do nothing
     returning *`,
    values(p),
  );
  return rows[0] ?? null;
}

/** Writes every field of the row `p.id`; null when it was deleted meanwhile. */
export async function updateCustomProvider(q: Queryable, p: CustomProviderFields): Promise<CustomProviderRow | null> {
  const { rows } = await q.query<CustomProviderRow>(
    `update custom_oauth_providers set provider_type = $2, identifier = $3, name = $4, client_id = $5, client_secret = $6,
       acceptable_client_ids = $7, scopes = $8, pkce_enabled = $9, attribute_mapping = $10, authorization_params = $11,
       enabled = $12, email_optional = $13, issuer = $14, discovery_url = $15, skip_nonce_check = $16,
       cached_discovery = $17, discovery_cached_at = $18, authorization_url = $19, token_url = $20, userinfo_url = $21,
       jwks_uri = $22, custom_claims_allowlist = $23, updated_at = now()
     where id = $1
     returning *`,
    values(p),
  );
  return rows[0] ?? null;
}

/** True when a row was deleted. */
export async function deleteCustomProvider(q: Queryable, identifier: string): Promise<boolean> {
  const { rowCount } = await q.query('delete from custom_oauth_providers where identifier = $1', [identifier]);
  return (rowCount ?? 0) > 0;
}

function values(p: CustomProviderFields): unknown[] {
  return [
    p.id,
    p.provider_type,
    p.identifier,
    p.name,
    p.client_id,
    p.client_secret,
    p.acceptable_client_ids,
    p.scopes,
    p.pkce_enabled,
    JSON.stringify(p.attribute_mapping),
    JSON.stringify(p.authorization_params),
    p.enabled,
    p.email_optional,
    p.issuer,
    p.discovery_url,
    p.skip_nonce_check,
    p.cached_discovery === null ? null : JSON.stringify(p.cached_discovery),
    p.discovery_cached_at,
    p.authorization_url,
    p.token_url,
    p.userinfo_url,
    p.jwks_uri,
    p.custom_claims_allowlist,
  ];
}
