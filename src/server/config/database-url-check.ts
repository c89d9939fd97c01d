// DATABASE_URL and DB_MIGRATIONS_DATABASE_URL read at start as the connection will read them
// (src/db/database-url.ts, after pgx): a string the original's driver cannot read stops its start ("error
// opening database"), so it stops this one too, naming the variable, instead of a connection failing later
// or a parameter being dropped unread.
import { readDatabaseUrl } from '../../db/database-url.js';
import { variableOf } from './cross-field.js';

const DATABASE_URLS = ['DB_DATABASE_URL', 'DB_MIGRATIONS_DATABASE_URL'];

/**
 * One problem per URL that cannot be used, except those `refused` already (their form); never repeats the
 * URL, which may hold a password.
 */
export function databaseUrlProblems(flat: Record<string, unknown>, given: Map<string, string>, refused: ReadonlySet<string>): string[] {
  return DATABASE_URLS.flatMap((name) => {
    const url = flat[name];
    if (typeof url !== 'string' || !url || refused.has(name)) return [];
    try {
      readDatabaseUrl(url);
      return [];
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      return [`${variableOf(given, name)}: cannot be read (${err.message})`];
    }
  });
}
