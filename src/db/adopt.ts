// Adoption of the original's schema in place (docs/adopting-gotrue.md): a namespace the original service
// migrated is converted, in one transaction, into exactly what sql/00001 creates, and 00001 is recorded
// as applied so that 00002+ then run as on any database. The caller (migrate.ts) holds the advisory lock.
//
// How: sql/00001 is applied to a scratch schema; its tables other than users move into the namespace
// (replacing the original's, renamed aside as gotrue_<name> and dropped once their rows are copied);
// users is ALTERed in place to match the scratch users; the scratch schema is dropped. Tables of the
// original we have no counterpart for yet stay, renamed gotrue_<name>: the MFA and passkey ones for
// adopt-mfa.ts to move once migrations 00003/00004 created ours, the others for later migrations to take.
import { readFileSync } from 'node:fs';
import type postgres from 'postgres';
import { ident, outsideDependents, qualified, tablesIn, columnsOf, type Tx } from './adopt-catalog.js';
import { alignUsers, renameAsTheOriginalDid } from './adopt-users.js';
import {
  copyAmrClaims,
  copyAuditLog,
  copyFlowState,
  copyIdentities,
  copyOneTimeTokens,
  copyRefreshTokens,
  copySessions,
  keepRefreshTokenKeys,
} from './adopt-data.js';

/** The original's tables whose rows we convert into ours; each is dropped afterwards. */
const CONVERTED = ['identities', 'sessions', 'mfa_amr_claims', 'refresh_tokens', 'one_time_tokens', 'flow_state', 'audit_log_entries'];

/** The original's tables without a counterpart in 00001: kept, renamed gotrue_<name> (mfa_*, webauthn_*: see adopt-mfa.ts). */
const ASIDE = [
  'schema_migrations',
  'instances',
  'mfa_factors',
  'mfa_challenges',
  'sso_providers',
  'sso_domains',
  'sso_sessions',
  'saml_providers',
  'saml_relay_states',
  'oauth_clients',
  'oauth_authorizations',
  'oauth_consents',
  'oauth_client_states',
  'custom_oauth_providers',
  'webauthn_credentials',
  'webauthn_challenges',
];

export type NamespaceKind = 'empty' | 'ours' | 'original' | 'unknown';

/**
 * ours: postgres-shift has recorded at least one migration. original: a users table with the original's
 * token columns, and no migration of ours recorded (a failed earlier start may have left an empty
 * migrations table). unknown: a users table that is neither, which nothing here will touch.
 */
export async function inspectNamespace(sql: Tx, schema: string): Promise<{ kind: NamespaceKind; versions: string[] }> {
  const tables = await tablesIn(sql, schema);
  if (tables.includes('migrations')) {
    const [recorded] = await sql.unsafe(`select 1 from ${qualified(schema, 'migrations')} limit 1`);
    if (recorded) return { kind: 'ours', versions: [] };
  }
  if (!tables.includes('users')) return { kind: 'empty', versions: [] };
  const columns = await columnsOf(sql, schema, 'users');
  if (!columns.some((c) => c.name === 'instance_id' || c.name === 'confirmation_token')) return { kind: 'unknown', versions: [] };
  const versions = tables.includes('schema_migrations')
    ? (await sql.unsafe(`select version from ${qualified(schema, 'schema_migrations')} order by version`)).map((r) => String(r.version))
    : [];
  return { kind: 'original', versions };
}

export class AdoptionError extends Error {}

/**
 * Runs the whole adoption on `tx`, an open transaction whose search_path is `schema`. `initial` is
 * sql/00001 (path, and the id and name postgres-shift records for it). Every step is reported to `note`.
 */
export async function adoptOriginalSchema(
  tx: postgres.TransactionSql,
  schema: string,
  initial: { path: string; id: number; name: string },
  note: (line: string) => void,
): Promise<void> {
  const { versions } = await inspectNamespace(tx, schema);
  note(`adopting the original's schema in "${schema}" (${versions.length} of its migrations recorded, last ${versions.at(-1) ?? 'none'})`);
  const present = await tablesIn(tx, schema);
  const converted = CONVERTED.filter((t) => present.includes(t));
  const aside = ASIDE.filter((t) => present.includes(t));

  const blockers = (await Promise.all(converted.map((t) => outsideDependents(tx, schema, t)))).flat();
  if (blockers.length > 0) {
    throw new AdoptionError(`objects outside "${schema}" depend on tables adoption replaces: ${blockers.join('; ')}`);
  }
  await renameEnumTypes(tx, schema, note);
  await renameAsTheOriginalDid(tx, schema, note);
  for (const table of [...converted, ...aside]) await renameAside(tx, schema, table);
  if (aside.length > 0) note(`kept for later migrations, renamed gotrue_<name>: ${aside.join(', ')}`);

  const scratch = `portcullis_adopting_${schema}`.slice(0, 63);
  await createScratchSchema(tx, scratch);
  await tx.unsafe(`set local search_path to ${ident(scratch)}`);
  await tx.unsafe(readFileSync(initial.path, 'utf8'));
  await tx.unsafe(`set local search_path to ${ident(schema)}`);
  await moveOurTables(tx, schema, scratch);

  const report = (what: string, count: number) => note(`${what}: ${count} rows`);
  if (converted.includes('identities')) report('identities copied', await copyIdentities(tx, schema));
  if (converted.includes('sessions')) {
    report('sessions copied', await copySessions(tx, schema));
    report('v2 refresh-token keys kept for migration 00013', await keepRefreshTokenKeys(tx, schema));
  }
  if (converted.includes('mfa_amr_claims')) report('authentication methods (amr) copied', await copyAmrClaims(tx, schema));
  if (converted.includes('refresh_tokens')) report('refresh tokens hashed and copied', await copyRefreshTokens(tx, schema));
  report('pending one-time tokens hashed and copied', await copyOneTimeTokens(tx, schema, converted.includes('one_time_tokens')));
  if (converted.includes('flow_state')) report('flow states copied', await copyFlowState(tx, schema));
  if (converted.includes('audit_log_entries')) report('audit log entries copied', await copyAuditLog(tx, schema));
  for (const table of converted) await copyAccess(tx, schema, `gotrue_${table}`, table);

  await alignUsers(tx, schema, scratch, note);
  await tx.unsafe(`drop schema ${ident(scratch)} cascade`);
  for (const table of converted) await tx.unsafe(`drop table ${ident(`gotrue_${table}`)} cascade`);
  note(`replaced by ours and dropped: ${converted.join(', ')}`);
  await dropUnusedTypes(tx, schema);

  await tx.unsafe(
    'create table if not exists migrations (migration_id serial primary key, created_at timestamp with time zone not null default now(), name text)',
  );
  await tx.unsafe('insert into migrations (migration_id, name) values ($1, $2)', [initial.id, initial.name]);
  note(`recorded migration ${initial.id} ${initial.name} as applied`);
}

/** The scratch schema needs CREATE on the database, which a role made for the original alone may lack. */
async function createScratchSchema(tx: Tx, scratch: string): Promise<void> {
  const [{ database, role, allowed }] = await tx<{ database: string; role: string; allowed: boolean }[]>`
    select current_database() as database, current_user as role, has_database_privilege(current_database(), 'CREATE') as allowed`;
  if (!allowed) {
    throw new AdoptionError(
      `adoption needs the CREATE privilege on database "${database}" for a scratch schema that lives only inside its transaction; ` +
        `grant it once as the database owner or a superuser: GRANT CREATE ON DATABASE ${ident(database)} TO ${ident(role)}`,
    );
  }
  await tx.unsafe(`create schema ${ident(scratch)}`);
}

/** The original's enum types (aal_level, factor_type, ...) step aside too, so later migrations may reuse the names. */
async function renameEnumTypes(tx: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const types = await tx<{ typname: string }[]>`
    select t.typname from pg_type t join pg_namespace n on n.oid = t.typnamespace where n.nspname = ${schema} and t.typtype = 'e'`;
  for (const t of types) await tx.unsafe(`alter type ${ident(t.typname)} rename to ${ident(asideName(t.typname))}`);
  if (types.length > 0) note(`enum types renamed gotrue_<name>: ${types.map((t) => t.typname).join(', ')}`);
}

/** Renames a table with its indexes (and so their constraints) and owned sequences, freeing every name. */
async function renameAside(tx: Tx, schema: string, table: string): Promise<void> {
  const rel = qualified(schema, table);
  const related = await tx<{ relname: string; relkind: string }[]>`
    select c.relname, c.relkind from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = ${rel}::regclass
    union all
    select c.relname, c.relkind from pg_depend d join pg_class c on c.oid = d.objid
    where d.refobjid = ${rel}::regclass and c.relkind = 'S' and d.deptype in ('a', 'i')`;
  for (const r of related) {
    await tx.unsafe(`alter ${r.relkind === 'S' ? 'sequence' : 'index'} ${ident(r.relname)} rename to ${ident(asideName(r.relname))}`);
  }
  await tx.unsafe(`alter table ${ident(table)} rename to ${ident(asideName(table))}`);
}

const asideName = (name: string) => `gotrue_${name}`.slice(0, 63);

/** Our tables other than users move from the scratch schema; their foreign keys then point at the real users. */
async function moveOurTables(tx: Tx, schema: string, scratch: string): Promise<void> {
  const ours = (await tablesIn(tx, scratch)).filter((t) => t !== 'users');
  const taken = new Set(await tablesIn(tx, schema));
  const clashes = ours.filter((t) => taken.has(t));
  if (clashes.length > 0)
    throw new AdoptionError(`"${schema}" holds tables that are neither the original's nor ours: ${clashes.join(', ')}`);
  for (const table of ours) await tx.unsafe(`alter table ${qualified(scratch, table)} set schema ${ident(schema)}`);
  const fks = await tx<{ table: string; conname: string; def: string }[]>`
    select c.relname as table, con.conname, pg_get_constraintdef(con.oid) as def
    from pg_constraint con join pg_class c on c.oid = con.conrelid
    where con.contype = 'f' and con.confrelid = ${qualified(scratch, 'users')}::regclass`;
  for (const fk of fks) {
    const def = fk.def.replace(new RegExp(`REFERENCES ("?)${scratch}\\1\\.users\\(`), 'REFERENCES users(');
    await tx.unsafe(`alter table ${ident(fk.table)} drop constraint ${ident(fk.conname)}, add constraint ${ident(fk.conname)} ${def}`);
  }
}

/** Grants and the row-level-security switch of the original's table carry over to ours. */
export async function copyAccess(tx: Tx, schema: string, from: string, to: string): Promise<void> {
  const grants = await tx<{ grantee: string; privilege: string; grantable: boolean }[]>`
    select case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end as grantee,
           a.privilege_type as privilege, a.is_grantable as grantable
    from pg_class c, aclexplode(c.relacl) a where c.oid = ${qualified(schema, from)}::regclass and a.grantee <> c.relowner`;
  for (const g of grants) {
    await tx.unsafe(`grant ${g.privilege} on ${ident(to)} to ${g.grantee}${g.grantable ? ' with grant option' : ''}`);
  }
  const [{ relrowsecurity }] = await tx`select relrowsecurity from pg_class where oid = ${qualified(schema, from)}::regclass`;
  if (relrowsecurity) await tx.unsafe(`alter table ${ident(to)} enable row level security`);
}

/** Drops the renamed enum types no remaining column or function uses (those of converted tables). */
export async function dropUnusedTypes(tx: Tx, schema: string): Promise<void> {
  const unused = await tx<{ typname: string }[]>`
    select t.typname from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where n.nspname = ${schema} and t.typtype = 'e' and t.typname like 'gotrue\\_%'
      and not exists (select 1 from pg_depend d where d.refobjid = t.oid and d.deptype = 'n')`;
  for (const t of unused) await tx.unsafe(`drop type ${ident(t.typname)}`);
}
