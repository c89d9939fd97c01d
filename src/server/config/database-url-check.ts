// DATABASE_URL and DB_MIGRATIONS_DATABASE_URL read at start as the connection will read them
// (src/db/database-url.ts, after pgx): a string the original's driver cannot read stops its start ("error
// opening database"), so it stops this one too, naming the variable, instead of a connection failing later
// or a parameter being dropped unread. The PG* variables are folded in here, as pgx takes them.
import { namesService, readDatabaseUrl, withConnectionDefaults } from '../../db/database-url.js';
import { PG_VARIABLES, pgxDefaults } from '../../db/pg-variables.js';
import { variableOf } from './cross-field.js';

const DATABASE_URLS = ['DB_DATABASE_URL', 'DB_MIGRATIONS_DATABASE_URL'];

/**
 * Gives each URL (in `flat`) what the PG* variables say and it leaves out, and returns one problem per URL
 * that cannot be used, except those `refused` already (their form), and a warning for a service file named.
 * Never repeats the URL, which may hold a password.
 */
export function foldAndCheckDatabaseUrls(
  flat: Record<string, unknown>,
  given: Map<string, string>,
  refused: ReadonlySet<string>,
): { problems: string[]; warnings: string[] } {
  const variables = Object.entries(PG_VARIABLES).filter(([variable]) => flat[variable]);
  const defaults = { ...pgxDefaults(), ...Object.fromEntries(variables.map(([variable, keyword]) => [keyword, flat[variable] as string])) };
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const name of DATABASE_URLS) {
    const url = flat[name];
    if (typeof url !== 'string' || !url || refused.has(name)) continue;
    const own = unreadable(url);
    if (own !== undefined) {
      problems.push(`${variableOf(given, name)}: cannot be read (${own})`);
      continue;
    }
    const folded = withConnectionDefaults(url, defaults);
    const withVariables = unreadable(folded);
    if (withVariables !== undefined) {
      problems.push(`${variableOf(given, name)} with ${variables.map(([v]) => v).join(', ')}: cannot be read (${withVariables})`);
      continue;
    }
    flat[name] = folded;
    if (namesService(folded)) {
      warnings.push(
        `${variableOf(given, name)}: names a service (service=, PGSERVICE), but service files are not read here: its settings are not used`,
      );
    }
  }
  return { problems, warnings };
}

/** What stops `url` being read, or undefined when it can be. */
function unreadable(url: string): string | undefined {
  try {
    readDatabaseUrl(url);
    return undefined;
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return err.message;
  }
}
