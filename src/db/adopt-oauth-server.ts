// The original's OAuth 2.1 server rows move into ours (docs/adopting-gotrue.md#oauth-server-clients-and-consents):
// adoption keeps its oauth_* tables aside as gotrue_<name> because ours only exist once migration 00012
// ran; migrate.ts calls this after the migrations, in the adoption's own transaction, and on every later
// start while a source is left (a database adopted by a version without this step). Clients keep their
// ids (the apps' client_id) and secret hashes (the same SHA-256 format), consents keep their grants.
// Authorization requests in flight are not carried over: they live minutes, and the app starts again.
// The sources are dropped once their rows are in.
import { copyAccess, dropUnusedTypes } from './adopt.js';
import { ident, outsideDependents, tablesIn, type Tx } from './adopt-catalog.js';
import { picker, runCount } from './adopt-data.js';

// gotrue_oauth_client_states is the original's sign-in-provider state, not the server's: it stays aside.
const SOURCES = ['gotrue_oauth_clients', 'gotrue_oauth_authorizations', 'gotrue_oauth_consents'];

/** True when a later start still has the original's OAuth server rows to move. */
export async function hasOriginalOAuthServer(sql: Tx, schema: string): Promise<boolean> {
  const tables = await tablesIn(sql, schema);
  return tables.includes('oauth_clients') && tables.some((t) => SOURCES.includes(t));
}

export async function takeOverOriginalOAuthServer(tx: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const tables = await tablesIn(tx, schema);
  const present = SOURCES.filter((t) => tables.includes(t));
  if (present.length === 0 || !tables.includes('oauth_clients')) return;
  const blockers = (await Promise.all(present.map((t) => outsideDependents(tx, schema, t)))).flat();
  if (blockers.length > 0) {
    throw new Error(
      `objects outside "${schema}" depend on the original's OAuth server tables, which are moved and dropped: ${blockers.join('; ')}`,
    );
  }
  if (present.includes('gotrue_oauth_clients')) {
    note(`OAuth server clients copied: ${await copyClients(tx, schema)} rows`);
    await copyAccess(tx, schema, 'gotrue_oauth_clients', 'oauth_clients');
    if (present.includes('gotrue_oauth_consents')) {
      note(`OAuth server consents copied: ${await copyConsents(tx)} rows`);
      await copyAccess(tx, schema, 'gotrue_oauth_consents', 'oauth_consents');
    }
  }
  await tx.unsafe(`drop table ${present.map(ident).join(', ')} cascade`);
  note(`moved into ours and dropped: ${present.join(', ')}`);
  await dropUnusedTypes(tx, schema);
}

/**
 * Clients of every version since the table appeared: client_type and token_endpoint_auth_method came
 * later; before them every client was confidential with client_secret_basic, as the original assumed.
 */
async function copyClients(tx: Tx, schema: string): Promise<number> {
  const col = await picker(tx, schema, 'gotrue_oauth_clients');
  const clientType = `coalesce(${col('client_type')}::text, 'confidential')`;
  const method = `coalesce(${col('token_endpoint_auth_method')}::text,
                           case when ${clientType} = 'public' then 'none' else 'client_secret_basic' end)`;
  return runCount(
    tx,
    `insert into oauth_clients (id, client_secret_hash, registration_type, redirect_uris, grant_types, client_name, client_uri,
                                logo_uri, created_at, updated_at, deleted_at, client_type, token_endpoint_auth_method)
     select o.id, nullif(o.client_secret_hash, ''), o.registration_type::text, o.redirect_uris, o.grant_types, o.client_name, o.client_uri,
            o.logo_uri, o.created_at, o.updated_at, o.deleted_at, ${clientType}, ${method}
     from gotrue_oauth_clients o`,
  );
}

/** Consents of users and clients that made it over (a deleted user's rows are gone with it). */
async function copyConsents(tx: Tx): Promise<number> {
  return runCount(
    tx,
    `insert into oauth_consents (id, user_id, client_id, scopes, granted_at, revoked_at)
     select o.id, o.user_id, o.client_id, o.scopes, o.granted_at, o.revoked_at
     from gotrue_oauth_consents o
     where exists (select 1 from users u where u.id = o.user_id) and exists (select 1 from oauth_clients c where c.id = o.client_id)`,
  );
}
