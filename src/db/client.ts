// The pg Client the pool opens: pg's own, unless statements are traced or must go unnamed. Table modules
// name their hot statements (`{ name, text, values }`) so PostgreSQL parses and plans them once per
// connection; through a PgBouncer in transaction mode that cannot track prepared statements, the next
// transaction may run on another server connection where the name is unknown, so there the name is
// dropped and each statement is parsed anew (docs/settings.md#database).
import pg from 'pg';

/** Called as a statement starts, with a short name for it; returns what to call when it ends. */
export type StatementTracer = (statement: string) => ((error?: Error) => void) | undefined;

/** Called as a statement is sent, with its text and its values (LOG_SQL). */
export type StatementLogger = (text: string, values: unknown[] | undefined) => void;

export function clientClass(options: { named: boolean; trace?: StatementTracer; log?: StatementLogger }): typeof pg.Client {
  const { named, trace, log } = options;
  if (named && !trace && !log) return pg.Client;
  return class extends pg.Client {
    override query(...args: unknown[]): never {
      if (!named) args[0] = unnamed(args[0]);
      if (log) logStatement(log, args);
      const query = (...rest: unknown[]) => super.query.apply(this, rest as never) as unknown;
      const end = trace?.(statementName(args[0]));
      if (!end) return query(...args) as never;
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (err: Error | undefined, result: unknown) => {
          end(err ?? undefined);
          (callback as (e: unknown, r: unknown) => void)(err, result);
        };
        return query(...args) as never;
      }
      const result = query(...args);
      if (result instanceof Promise)
        result.then(
          () => end(),
          (err: Error) => end(err),
        );
      else end();
      return result as never;
    }
  };
}

/** pg's two ways of giving a statement: `(text, values?, callback?)` and `({ text, values, … }, callback?)`. */
function logStatement(log: StatementLogger, args: unknown[]): void {
  const [query, second] = args;
  if (typeof query === 'string') log(query, Array.isArray(second) ? second : undefined);
  else if (query && typeof query === 'object') {
    const { text, values } = query as { text?: unknown; values?: unknown };
    if (typeof text === 'string') log(text, Array.isArray(values) ? values : Array.isArray(second) ? second : undefined);
  }
}

function unnamed(query: unknown): unknown {
  if (typeof query === 'object' && query !== null && Object.getPrototypeOf(query) === Object.prototype && Object.hasOwn(query, 'name')) {
    const copy: Record<string, unknown> = { ...(query as Record<string, unknown>) };
    delete copy.name;
    return copy;
  }
  return query;
}

/** The statement's name when it has one, else its first word (select, insert, begin…): never its values. */
function statementName(query: unknown): string {
  if (query && typeof query === 'object') {
    const { name, text } = query as { name?: string; text?: string };
    if (name) return name;
    return firstWord(text ?? '');
  }
  return typeof query === 'string' ? firstWord(query) : 'query';
}

function firstWord(text: string): string {
  return /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase() ?? 'query';
}
