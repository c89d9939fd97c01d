// The original's custom OAuth/OIDC providers move into ours (docs/adopting-gotrue.md#custom-oauth-providers).
// Adoption keeps the original's table aside as gotrue_custom_oauth_providers because ours exists only once
// migration 00011 ran; migrate.ts calls this after the migrations, in the adoption's own transaction, and on
// every later start while the source is left. Ids are kept (a sealed client secret is bound to its row id);
// secrets the original stored in clear (its default) are sealed; the source is dropped once its rows are in.
import { copyAccess } from './adopt.js';
import { outsideDependents, tablesIn, type Tx } from './adopt-catalog.js';
import { picker, runCount } from './adopt-data.js';
import { sealClearValues, type SecretSealer } from './adopt-mfa.js';

const SOURCE = 'gotrue_custom_oauth_providers';

export async function hasOriginalCustomProviders(sql: Tx, schema: string): Promise<boolean> {
  return (await tablesIn(sql, schema)).includes(SOURCE);
}

export async function takeOverOriginalCustomProviders(
  tx: Tx,
  schema: string,
  seal: SecretSealer | undefined,
  note: (line: string) => void,
): Promise<void> {
  if (!(await hasOriginalCustomProviders(tx, schema))) return;
  const blockers = await outsideDependents(tx, schema, SOURCE);
  if (blockers.length > 0) {
    throw new Error(
      `objects outside "${schema}" depend on the original's custom providers table, which is moved and dropped: ${blockers.join('; ')}`,
    );
  }
  const col = await picker(tx, schema, SOURCE);
  const copied = await runCount(
    tx,
    `insert into custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret, acceptable_client_ids,
       scopes, pkce_enabled, attribute_mapping, authorization_params, enabled, email_optional, issuer, discovery_url,
       skip_nonce_check, cached_discovery, discovery_cached_at, authorization_url, token_url, userinfo_url, jwks_uri,
       custom_claims_allowlist, created_at, updated_at)
     select o.id, o.provider_type, o.identifier, o.name, o.client_id, o.client_secret, coalesce(o.acceptable_client_ids, '{}'),
            coalesce(o.scopes, '{}'), coalesce(o.pkce_enabled, true), coalesce(o.attribute_mapping, '{}'),
            coalesce(o.authorization_params, '{}'), coalesce(o.enabled, true), coalesce(o.email_optional, false), o.issuer,
            o.discovery_url, coalesce(o.skip_nonce_check, false), o.cached_discovery, o.discovery_cached_at, o.authorization_url,
            o.token_url, o.userinfo_url, o.jwks_uri, coalesce(${col('custom_claims_allowlist')}, '{}')::text[], coalesce(o.created_at, now()),
            coalesce(o.updated_at, o.created_at, now())
     from ${SOURCE} o
     on conflict do nothing`,
  );
  note(`custom OAuth providers copied: ${copied} rows`);
  note(`custom OAuth client secrets sealed: ${await sealClearValues(tx, 'custom_oauth_providers', 'client_secret', SOURCE, seal)} rows`);
  await copyAccess(tx, schema, SOURCE, 'custom_oauth_providers');
  await tx.unsafe(`drop table ${SOURCE} cascade`);
  note(`moved into ours and dropped: ${SOURCE}`);
}
