// Adoption of the original's schema in place (docs/adopting-gotrue.md): a namespace the original service
// migrated is converted, in one transaction, into exactly what sql/00001 creates, and 00001 is recorded
// as applied so that 00002+ then run as on any database. The caller (migrate.ts) holds the advisory lock.
//
// How: the original's users steps aside (renamed gotrue_users) while sql/00001 runs in the namespace itself;
// our tables other than users stay, their foreign keys are pointed at the original's users, our fresh empty
// users is dropped, and the original's takes its name back to be ALTERed in place to match what that fresh
// one was (adopt-users.ts). Everything happens inside the namespace, so the migrating role needs no
// privilege beyond it (a scratch schema would need CREATE on the database, which Supabase's image gave its
// auth role only from late 2025). Tables of the original we have no counterpart for yet stay, renamed
// gotrue_<name>: the MFA and passkey ones for adopt-mfa.ts to move once migrations 00003/00004 created
// ours, the others for later migrations to take.
import { readFileSync } from 'node:fs';
import type postgres from 'postgres';
import { ident, outsideDependents, qualified, tablesIn, columnsOf, type Tx } from './adopt-catalog.js';
import { alignUsers, describeUsers, renameAsTheOriginalDid } from './adopt-users.js';
import {
  copyAmrClaims,
  copyAuditLog,
  copyIdentities,
  copyOneTimeTokens,
  copyRefreshTokens,
  copySessions,
  keepRefreshTokenKeys,
} from './adopt-data.js';
import { copyFlowState } from './adopt-flow-state.js';

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

  const usersAside = await renameAside(tx, schema, 'users');
  await applyInitial(tx, schema, initial.path);
  const target = await describeUsers(tx, schema);
  await takeOverUsers(tx, schema, usersAside);
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

  await alignUsers(tx, schema, target, note);
  for (const table of converted) await tx.unsafe(`drop table ${ident(`gotrue_${table}`)} cascade`);
  note(`replaced by ours and dropped: ${converted.join(', ')}`);
  await dropUnusedTypes(tx, schema);

  await tx.unsafe(
    'create table if not exists migrations (migration_id serial primary key, created_at timestamp with time zone not null default now(), name text)',
  );
  await tx.unsafe('insert into migrations (migration_id, name) values ($1, $2)', [initial.id, initial.name]);
  note(`recorded migration ${initial.id} ${initial.name} as applied`);
}

/** sql/00001 in the namespace, where only the original's users (renamed aside) held one of its names. */
async function applyInitial(tx: Tx, schema: string, path: string): Promise<void> {
  try {
    await tx.unsafe(readFileSync(path, 'utf8'));
  } catch (err) {
    if ((err as { code?: string }).code !== '42P07') throw err;
    throw new AdoptionError(`"${schema}" holds a table or index that is neither the original's nor ours: ${(err as Error).message}`);
  }
}

/** The original's enum types (aal_level, factor_type, ...) step aside too, so later migrations may reuse the names. */
async function renameEnumTypes(tx: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const types = await tx<{ typname: string }[]>`
    select t.typname from pg_type t join pg_namespace n on n.oid = t.typnamespace where n.nspname = ${schema} and t.typtype = 'e'`;
  for (const t of types) await tx.unsafe(`alter type ${ident(t.typname)} rename to ${ident(asideName(t.typname))}`);
  if (types.length > 0) note(`enum types renamed gotrue_<name>: ${types.map((t) => t.typname).join(', ')}`);
}

/** A name renamed aside: what it was and what it is now; a constraint's belongs to the table named `on`. */
interface Renamed {
  from: string;
  to: string;
  kind: 'table' | 'index' | 'sequence' | 'constraint';
  on?: string;
}

/**
 * Renames a table with its indexes (and so the constraints they back), its other constraints and its owned
 * sequences, freeing every name: PostgreSQL names our tables' constraints and indexes so as not to repeat
 * any in the schema, so a name left behind would give ours another (identities_user_id_fkey1).
 */
async function renameAside(tx: Tx, schema: string, table: string): Promise<Renamed[]> {
  const rel = qualified(schema, table);
  const related = await tx<{ relname: string; relkind: string }[]>`
    select c.relname, c.relkind from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = ${rel}::regclass
    union all
    select c.relname, c.relkind from pg_depend d join pg_class c on c.oid = d.objid
    where d.refobjid = ${rel}::regclass and c.relkind = 'S' and d.deptype in ('a', 'i')`;
  const constraints = await tx<{ conname: string }[]>`
    select conname from pg_constraint where conrelid = ${rel}::regclass and contype not in ('p', 'u', 'x')`;
  const aside = asideName(table);
  const renamed: Renamed[] = [
    { from: table, to: aside, kind: 'table' },
    ...related.map((r): Renamed => ({ from: r.relname, to: asideName(r.relname), kind: r.relkind === 'S' ? 'sequence' : 'index' })),
    ...constraints.map((c): Renamed => ({ from: c.conname, to: asideName(c.conname), kind: 'constraint', on: aside })),
  ];
  for (const r of renamed) await tx.unsafe(renameStatement(r, r.from, r.to));
  return renamed;
}

/** `alter ... rename` of a Renamed, either way; a constraint is named through its table's name at the time. */
function renameStatement(r: Renamed, from: string, to: string): string {
  if (r.kind !== 'constraint') return `alter ${r.kind} ${ident(from)} rename to ${ident(to)}`;
  return `alter table ${ident(r.on!)} rename constraint ${ident(from)} to ${ident(to)}`;
}

const asideName = (name: string) => `gotrue_${name}`.slice(0, 63);

/**
 * Our tables' foreign keys move from our fresh, empty users to the original's (still gotrue_users), the
 * fresh one is dropped, and the original's gets its own names back: the table first, then each of its
 * indexes, sequences and constraints whose name no object of ours took meanwhile.
 */
async function takeOverUsers(tx: Tx, schema: string, usersAside: Renamed[]): Promise<void> {
  const fks = await tx<{ table: string; conname: string; def: string }[]>`
    select c.relname as table, con.conname, pg_get_constraintdef(con.oid) as def
    from pg_constraint con join pg_class c on c.oid = con.conrelid
    where con.contype = 'f' and con.confrelid = ${qualified(schema, 'users')}::regclass`;
  for (const fk of fks) {
    const def = fk.def.replace(/REFERENCES users\(/, `REFERENCES ${ident(asideName('users'))}(`);
    if (def === fk.def) throw new AdoptionError(`cannot point ${fk.table}.${fk.conname} at the original's users: ${fk.def}`);
    await tx.unsafe(`alter table ${ident(fk.table)} drop constraint ${ident(fk.conname)}, add constraint ${ident(fk.conname)} ${def}`);
  }
  // Without cascade: anything else on the fresh table would be a change to sql/00001 that adoption must learn.
  await tx.unsafe('drop table users');
  const [table, ...rest] = usersAside; // renameAside lists the table first
  await tx.unsafe(renameStatement(table, table.to, table.from));
  const relations = new Set(
    (
      await tx<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema}`
    ).map((r) => r.name),
  );
  const constraints = new Set(
    (
      await tx<{ name: string }[]>`
      select conname as name from pg_constraint where conrelid = ${qualified(schema, 'users')}::regclass`
    ).map((r) => r.name),
  );
  for (const r of rest) {
    const taken = r.kind === 'constraint' ? constraints : relations;
    if (!taken.has(r.from)) await tx.unsafe(renameStatement({ ...r, on: 'users' }, r.to, r.from));
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
