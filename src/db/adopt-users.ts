// Turns the original's users table into ours IN PLACE (docs/adopting-gotrue.md#users-in-place): never
// dropped and recreated, so foreign keys from other schemas, triggers, grants and policies on it stay.
// The target is read from the catalog of our own users as sql/00001 creates it (describeUsers, while
// adopt.ts has that fresh table beside the original's), so the result matches what a fresh install has,
// column by column, constraint by constraint.
import { columnsOf, hasColumn, ident, type Column, type Tx } from './adopt-catalog.js';

/** The original's token columns: their tokens were moved into one_time_tokens before, and their copies go. */
const ORIGINAL_TOKENS = [
  'confirmation_token',
  'recovery_token',
  'email_change_token',
  'email_change_token_new',
  'email_change_token_current',
  'phone_change_token',
  'reauthentication_token',
];
/** The original's columns kept as they are, never read: seed scripts name them (sql/00015, sql/00016). */
const ORIGINAL_KEPT = ['instance_id', 'is_super_admin'];

/**
 * The two columns the original itself renamed in 2021 get its later names first, as its own migrations
 * would have renamed them, so a schema from before (Supabase's database image still starts from 2018's)
 * keeps who confirmed an address and a pending email change: confirmed_at held the email's confirmation
 * (ours computes confirmed_at from both addresses), email_change_token the new address's token.
 */
export async function renameAsTheOriginalDid(sql: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const columns = await columnsOf(sql, schema, 'users');
  const renames: Array<[string, string]> = [
    ['confirmed_at', 'email_confirmed_at'],
    ['email_change_token', 'email_change_token_new'],
  ];
  for (const [from, to] of renames) {
    const source = columns.find((c) => c.name === from);
    if (!source || source.generated || hasColumn(columns, to)) continue;
    await sql.unsafe(`alter table users rename column ${ident(from)} to ${ident(to)}`);
    note(`users: column ${from} renamed ${to}, as the original's 2021 migrations rename it`);
  }
}

/** What sql/00001 makes of users: its columns, check constraints and indexes other than the primary key. */
export interface UsersShape {
  columns: Column[];
  checks: Array<{ conname: string; def: string }>;
  indexes: Array<{ relname: string; def: string }>;
}

/** Reads the shape of `users` in `schema`; its index definitions name the table, which is the original's by the time they run. */
export async function describeUsers(sql: Tx, schema: string): Promise<UsersShape> {
  const users = `${ident(schema)}.users`;
  const checks = await sql<{ conname: string; def: string }[]>`
    select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = ${users}::regclass and contype = 'c'`;
  const indexes = await sql<{ relname: string; def: string }[]>`
    select ic.relname, pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class ic on ic.oid = i.indexrelid
    where i.indrelid = ${users}::regclass and not i.indisprimary`;
  return { columns: await columnsOf(sql, schema, 'users'), checks, indexes };
}

export async function alignUsers(sql: Tx, schema: string, shape: UsersShape, note: (line: string) => void): Promise<void> {
  const target = shape.columns;
  const current = await columnsOf(sql, schema, 'users');
  // No finally: after a failure the transaction is rolled back, which restores the triggers too.
  const triggers = await disableTriggers(sql, schema);
  await emptyStringsToNull(sql, target, current, note);
  await dropConstraintsAndIndexes(sql, schema, note);
  for (const column of current) {
    if (target.some((t) => t.name === column.name)) continue;
    if (ORIGINAL_TOKENS.includes(column.name)) {
      await sql.unsafe(`alter table users drop column ${ident(column.name)}`);
      note(`users: dropped column ${column.name}`);
    } else if (ORIGINAL_KEPT.includes(column.name)) note(`users: kept the original's column ${column.name}, unused`);
    else note(`users: kept column ${column.name}, which is neither the original's nor ours`);
  }
  for (const want of target)
    await alignColumn(
      sql,
      schema,
      want,
      current.find((c) => c.name === want.name),
      note,
    );
  await addTargetConstraintsAndIndexes(sql, schema, shape, note);
  await restoreTriggers(sql, triggers);
}

/** Ours keeps absent values as NULL where the original kept '' (email, phone, password, pending changes). */
async function emptyStringsToNull(sql: Tx, target: Column[], current: Column[], note: (line: string) => void): Promise<void> {
  const names = target
    .filter((t) => !t.notnull && !t.generated && t.type === 'text' && current.some((c) => c.name === t.name && /char|text/.test(c.type)))
    .map((t) => ident(t.name));
  if (names.length === 0) return;
  const result = await sql.unsafe(
    `update users set ${names.map((n) => `${n} = nullif(${n}, '')`).join(', ')} where ${names.map((n) => `${n} = ''`).join(' or ')}`,
  );
  note(`users: '' made NULL in ${names.join(', ')} (${result.count} rows)`);
}

/**
 * Everything but the primary key goes, to be replaced by ours. A unique index some foreign key relies on
 * (an application table referencing users(id) through a second unique constraint) cannot go and stays.
 */
async function dropConstraintsAndIndexes(sql: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const constraints = await sql<{ conname: string; needed: boolean }[]>`
    select con.conname, exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = con.conindid and con.conindid <> 0) as needed
    from pg_constraint con where con.conrelid = ${`${ident(schema)}.users`}::regclass and con.contype in ('u', 'c', 'x')`;
  for (const c of constraints) {
    if (c.needed) note(`users: kept constraint ${c.conname}, a foreign key relies on it`);
    else await sql.unsafe(`alter table users drop constraint ${ident(c.conname)}`);
  }
  const indexes = await sql<{ relname: string; needed: boolean }[]>`
    select ic.relname, exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = i.indexrelid) as needed
    from pg_index i join pg_class ic on ic.oid = i.indexrelid
    where i.indrelid = ${`${ident(schema)}.users`}::regclass and not i.indisprimary
      and not exists (select 1 from pg_constraint con where con.conindid = i.indexrelid and con.conrelid = i.indrelid)`;
  for (const i of indexes) {
    if (i.needed) note(`users: kept index ${i.relname}, a foreign key relies on it`);
    else await sql.unsafe(`drop index ${ident(i.relname)}`);
  }
}

async function alignColumn(sql: Tx, schema: string, want: Column, have: Column | undefined, note: (line: string) => void): Promise<void> {
  const col = ident(want.name);
  const generatedAs = (c: Column) => (c.expr ?? '').replace(/\s+/g, '').toLowerCase();
  if (have && (want.generated || have.generated) && (want.generated !== have.generated || generatedAs(want) !== generatedAs(have))) {
    await sql.unsafe(`alter table users drop column ${col}`);
    have = undefined;
  }
  if (!have) {
    const tail = want.generated
      ? `generated always as (${want.expr}) stored`
      : `${want.expr ? `default ${want.expr}` : ''} ${want.notnull ? 'not null' : ''}`;
    await sql.unsafe(`alter table users add column ${col} ${want.type} ${tail}`);
    note(`users: added column ${want.name}`);
    return;
  }
  if (want.generated) return;
  if (have.type !== want.type) {
    const blockers = await viewsOnColumn(sql, schema, have.num);
    if (blockers.length > 0) {
      note(`users: kept ${want.name} as ${have.type} (not ${want.type}): used by ${blockers.join(', ')}`);
    } else {
      if (have.expr !== null) await sql.unsafe(`alter table users alter column ${col} drop default`);
      await sql.unsafe(`alter table users alter column ${col} type ${want.type} using ${col}::${want.type}`);
      have = { ...have, expr: null };
    }
  }
  if (have.expr !== want.expr) {
    await sql.unsafe(
      want.expr === null
        ? `alter table users alter column ${col} drop default`
        : `alter table users alter column ${col} set default ${want.expr}`,
    );
  }
  if (want.notnull && !have.notnull) {
    if (want.expr !== null) await sql.unsafe(`update users set ${col} = ${want.expr} where ${col} is null`);
    await sql.unsafe(`alter table users alter column ${col} set not null`);
  } else if (!want.notnull && have.notnull) {
    await sql.unsafe(`alter table users alter column ${col} drop not null`);
  }
}

async function viewsOnColumn(sql: Tx, schema: string, attnum: number): Promise<string[]> {
  const rows = await sql<{ what: string }[]>`
    select distinct format('%s.%s', n.nspname, v.relname) as what
    from pg_depend d join pg_rewrite r on r.oid = d.objid join pg_class v on v.oid = r.ev_class join pg_namespace n on n.oid = v.relnamespace
    where d.classid = 'pg_rewrite'::regclass and d.refobjid = ${`${ident(schema)}.users`}::regclass and d.refobjsubid = ${attnum}`;
  return rows.map((r) => r.what);
}

async function addTargetConstraintsAndIndexes(sql: Tx, schema: string, shape: UsersShape, note: (line: string) => void): Promise<void> {
  for (const c of shape.checks) await sql.unsafe(`alter table users add constraint ${ident(c.conname)} ${c.def}`);
  const [pk] = await sql`select 1 from pg_index where indrelid = ${`${ident(schema)}.users`}::regclass and indisprimary`;
  if (!pk) await sql.unsafe('alter table users add constraint users_pkey primary key (id)');
  for (const i of shape.indexes) {
    const [exists] =
      await sql`select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and c.relname = ${i.relname}`;
    if (exists) {
      note(`users: index ${i.relname} already exists and was kept`);
      continue;
    }
    await sql.unsafe(i.def);
  }
}

/**
 * The application's triggers on users (a profile row per new user, say) must not fire for adoption's
 * own updates; each is switched off and back to the state it was in (enabled, replica or always).
 */
async function disableTriggers(sql: Tx, schema: string): Promise<Array<{ tgname: string; tgenabled: string }>> {
  const triggers = await sql<{ tgname: string; tgenabled: string }[]>`
    select tgname, tgenabled from pg_trigger where tgrelid = ${`${ident(schema)}.users`}::regclass and not tgisinternal and tgenabled <> 'D'`;
  for (const t of triggers) await sql.unsafe(`alter table users disable trigger ${ident(t.tgname)}`);
  return triggers;
}

async function restoreTriggers(sql: Tx, triggers: Array<{ tgname: string; tgenabled: string }>): Promise<void> {
  const how: Record<string, string> = { O: 'enable', R: 'enable replica', A: 'enable always' };
  for (const t of triggers) await sql.unsafe(`alter table users ${how[t.tgenabled] ?? 'enable'} trigger ${ident(t.tgname)}`);
}
