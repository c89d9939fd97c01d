// Catalog reads for adoption (docs/adopting-gotrue.md): what a namespace holds, looked up in pg_catalog
// rather than information_schema, which hides objects the migrating role has no privilege on.
import type postgres from 'postgres';

export type Tx = postgres.TransactionSql | postgres.Sql;

/** Quotes an identifier for SQL text (catalog names can hold anything). */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Tables (plain or partitioned) of a schema. */
export async function tablesIn(sql: Tx, schema: string): Promise<string[]> {
  const rows = await sql<{ relname: string }[]>`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') order by c.relname`;
  return rows.map((r) => r.relname);
}

export interface Column {
  name: string;
  num: number;
  type: string;
  notnull: boolean;
  /** the default expression, or for a generated column its expression */
  expr: string | null;
  generated: boolean;
}

export async function columnsOf(sql: Tx, schema: string, table: string): Promise<Column[]> {
  return sql<Column[]>`
    select a.attname as name, a.attnum as num, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as notnull,
           pg_get_expr(d.adbin, d.adrelid) as expr, a.attgenerated <> '' as generated
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = ${schema} and c.relname = ${table} and a.attnum > 0 and not a.attisdropped
    order by a.attnum`;
}

export const hasColumn = (columns: Column[], name: string): boolean => columns.some((c) => c.name === name);

/** The schema-qualified regclass text of a table, for ::regclass casts. */
export const qualified = (schema: string, table: string): string => `${ident(schema)}.${ident(table)}`;

/**
 * Objects outside `schema` that would break if `table` were dropped: foreign keys from other schemas and
 * views or rules defined elsewhere. Adoption refuses rather than drop them.
 */
export async function outsideDependents(sql: Tx, schema: string, table: string): Promise<string[]> {
  const rel = qualified(schema, table);
  const rows = await sql<{ what: string }[]>`
    select format('foreign key %s on %s.%s', con.conname, n.nspname, c.relname) as what
    from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_namespace n on n.oid = c.relnamespace
    where con.contype = 'f' and con.confrelid = ${rel}::regclass and n.nspname <> ${schema}
    union all
    select distinct format('view %s.%s', n.nspname, v.relname)
    from pg_depend d join pg_rewrite r on r.oid = d.objid join pg_class v on v.oid = r.ev_class
    join pg_namespace n on n.oid = v.relnamespace
    where d.classid = 'pg_rewrite'::regclass and d.refobjid = ${rel}::regclass and v.oid <> ${rel}::regclass`;
  return rows.map((r) => r.what);
}
