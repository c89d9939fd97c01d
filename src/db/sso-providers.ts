// sso_providers with their saml_providers row and sso_domains (sql/00010_saml_sso.sql): one provider is
// always read whole, in one statement.
import type { Queryable } from './pool.js';

export interface AttributeMapping {
  keys?: Record<string, { name?: string; names?: string[]; default?: unknown; array?: boolean }>;
}

export interface SsoProviderRow {
  id: string;
  resource_id: string | null;
  disabled: boolean | null;
  created_at: Date;
  updated_at: Date;
  entity_id: string;
  metadata_xml: string;
  metadata_url: string | null;
  attribute_mapping: AttributeMapping | null;
  name_id_format: string | null;
  /** when the SAML row last changed: fetched metadata counts its freshness from it */
  saml_updated_at: Date;
  domains: string[];
}

const SELECT = `select p.id, p.resource_id, p.disabled, p.created_at, p.updated_at,
       s.entity_id, s.metadata_xml, s.metadata_url, s.attribute_mapping, s.name_id_format, s.updated_at as saml_updated_at,
       coalesce((select json_agg(d.domain order by d.created_at, d.domain) from sso_domains d where d.sso_provider_id = p.id), '[]') as domains
  from sso_providers p join saml_providers s on s.sso_provider_id = p.id`;

export async function findSsoProviderById(q: Queryable, id: string): Promise<SsoProviderRow | null> {
  const { rows } = await q.query<SsoProviderRow>(`${SELECT} where p.id = $1`, [id]);
  return rows[0] ?? null;
}

export async function findSsoProviderByResourceId(q: Queryable, resourceId: string): Promise<SsoProviderRow | null> {
  const { rows } = await q.query<SsoProviderRow>(`${SELECT} where lower(p.resource_id) = lower($1)`, [resourceId]);
  return rows[0] ?? null;
}

export async function findSsoProviderByDomain(q: Queryable, domain: string): Promise<SsoProviderRow | null> {
  const { rows } = await q.query<SsoProviderRow>(
    `${SELECT} where p.id = (select sso_provider_id from sso_domains where lower(domain) = lower($1))`,
    [domain],
  );
  return rows[0] ?? null;
}

export async function findSsoProviderByEntityId(q: Queryable, entityId: string): Promise<SsoProviderRow | null> {
  const { rows } = await q.query<SsoProviderRow>(`${SELECT} where s.entity_id = $1`, [entityId]);
  return rows[0] ?? null;
}

/** GET /admin/sso/providers: all, or those of one resource_id or resource_id prefix (the original's filters, as it reads them). */
export async function listSsoProviders(
  q: Queryable,
  filter: { resourceId?: string; resourceIdPrefix?: string },
): Promise<SsoProviderRow[]> {
  if (filter.resourceId) {
    return (await q.query<SsoProviderRow>(`${SELECT} where p.resource_id = $1 order by p.created_at`, [filter.resourceId])).rows;
  }
  if (filter.resourceIdPrefix) {
    // As the original: the prefix is LIKE's pattern as given, followed by `%`, so its `%` and `_` match any text or
    // character and `\` escapes the next one. Passed as a parameter, it is never SQL.
    return (await q.query<SsoProviderRow>(`${SELECT} where p.resource_id like $1 order by p.created_at`, [`${filter.resourceIdPrefix}%`]))
      .rows;
  }
  return (await q.query<SsoProviderRow>(`${SELECT} order by p.created_at`)).rows;
}

export interface SsoProviderWrite {
  resourceId: string | null;
  disabled: boolean | null;
  entityId: string;
  metadataXml: string;
  metadataUrl: string | null;
  attributeMapping: AttributeMapping;
  nameIdFormat: string | null;
}

/** Creates the provider, its SAML row and its domains in one statement; returns its id. */
export async function insertSsoProvider(q: Queryable, w: SsoProviderWrite, domains: string[]): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    `with provider as (
       insert into sso_providers (resource_id, disabled) values ($1, $2) returning id
     ), saml as (
       insert into saml_providers (sso_provider_id, entity_id, metadata_xml, metadata_url, attribute_mapping, name_id_format)
       select id, $3, $4, $5, $6, $7 from provider
     ), domains as (
       insert into sso_domains (sso_provider_id, domain) select provider.id, d from provider, unnest($8::text[]) as d
     )
     select id from provider`,
    [w.resourceId, w.disabled, w.entityId, w.metadataXml, w.metadataUrl, JSON.stringify(w.attributeMapping), w.nameIdFormat, domains],
  );
  return rows[0].id;
}

/** PUT: the provider row's columns as given (the caller merged them with the stored ones). */
export async function updateSsoProvider(q: Queryable, id: string, w: Pick<SsoProviderWrite, 'resourceId' | 'disabled'>): Promise<void> {
  await q.query('update sso_providers set resource_id = $2, disabled = $3, updated_at = now() where id = $1', [
    id,
    w.resourceId,
    w.disabled,
  ]);
}

/**
 * PUT: the SAML row's columns as given. Its updated_at is when fetched metadata counts its freshness from
 * (docs/sso-saml.md#identity-providers), so the caller writes the row only when it changes.
 */
export async function updateSamlProvider(
  q: Queryable,
  id: string,
  w: Pick<SsoProviderWrite, 'metadataXml' | 'metadataUrl' | 'attributeMapping' | 'nameIdFormat'>,
): Promise<void> {
  await q.query(
    `update saml_providers set metadata_xml = $2, metadata_url = $3, attribute_mapping = $4, name_id_format = $5, updated_at = now()
      where sso_provider_id = $1`,
    [id, w.metadataXml, w.metadataUrl, JSON.stringify(w.attributeMapping), w.nameIdFormat],
  );
}

/** The provider's domains become exactly `domains`. */
export async function replaceSsoDomains(q: Queryable, id: string, domains: string[]): Promise<void> {
  await q.query(
    `with gone as (
       delete from sso_domains where sso_provider_id = $1 and not (lower(domain) = any(select lower(d) from unnest($2::text[]) d))
     )
     insert into sso_domains (sso_provider_id, domain)
     select $1, d from unnest($2::text[]) d
      where not exists (select 1 from sso_domains x where x.sso_provider_id = $1 and lower(x.domain) = lower(d))`,
    [id, domains],
  );
}

/** The domains of this list held by another provider than `exceptId`, with who holds them. */
export async function domainsTaken(
  q: Queryable,
  domains: string[],
  exceptId: string | null,
): Promise<Array<{ domain: string; sso_provider_id: string }>> {
  const { rows } = await q.query<{ domain: string; sso_provider_id: string }>(
    `select domain, sso_provider_id from sso_domains
      where lower(domain) = any(select lower(d) from unnest($1::text[]) d) and ($2::uuid is null or sso_provider_id <> $2)`,
    [domains, exceptId],
  );
  return rows;
}

/**
 * Takes the provider row's lock in the caller's transaction, waiting for a PUT or DELETE that holds it;
 * false when the provider is gone (deleted meanwhile). Read the provider only after it: a statement that
 * starts then sees what the previous holder committed. A PUT takes `no key update`, the lock its update
 * takes anyway, which leaves POST /sso's relay-state inserts (their foreign key's `key share`) free to go.
 */
export async function lockSsoProvider(q: Queryable, id: string, strength: 'update' | 'no key update'): Promise<boolean> {
  const { rowCount } = await q.query(
    strength === 'update'
      ? 'select 1 from sso_providers where id = $1 for update'
      : 'select 1 from sso_providers where id = $1 for no key update',
    [id],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether a row was deleted: of concurrent deletes of one provider, only one deletes it. */
export async function deleteSsoProvider(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query('delete from sso_providers where id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/** Metadata refetched from metadata_url at the ACS (docs/sso-saml.md#identity-providers). */
export async function refreshSamlMetadata(q: Queryable, id: string, metadataXml: string): Promise<void> {
  await q.query('update saml_providers set metadata_xml = $2, updated_at = now() where sso_provider_id = $1', [id, metadataXml]);
}
