// DATABASE_URL and DB_MIGRATIONS_DATABASE_URL read at start as the connection will read them
// (src/db/database-url.ts, after pgx): a string the original's driver cannot read stops its start ("error
// opening database"), so it stops this one too, naming the variable, instead of a connection failing later
// or a parameter being dropped unread. What the strings leave out is folded in here, as pgx takes it: from a
// service file, the PG* variables, pgx's defaults (docs/settings.md#pg-variables).
import { connectionKeyword, readDatabaseUrl, withConnectionDefaults } from '../../db/database-url.js';
import { serviceKeywords } from '../../db/service-file.js';
import { PG_VARIABLES, pgxDefaults } from '../../db/pg-variables.js';
import { variableOf } from './cross-field.js';

const DATABASE_URLS = ['DB_DATABASE_URL', 'DB_MIGRATIONS_DATABASE_URL'];

/**
 * Gives each URL (in `flat`) what it leaves out, as pgx fills it in: from the service it names (a service
 * file), else from the PG* variables, else from pgx's own defaults. Returns one problem per URL that cannot
 * be used, except those `refused` already (their form). Never repeats the URL, which may hold a password.
 */
export function foldAndCheckDatabaseUrls(
  flat: Record<string, unknown>,
  given: Map<string, string>,
  refused: ReadonlySet<string>,
): string[] {
  const variables = Object.entries(PG_VARIABLES).filter(([variable]) => flat[variable]);
  const fromVariables = Object.fromEntries(variables.map(([variable, keyword]) => [keyword, flat[variable] as string]));
  // The service and its file are read here, not handed on.
  const { service: serviceNamed, servicefile: serviceFile, ...defaults } = { ...pgxDefaults(), ...fromVariables } as Record<string, string>;
  const problems: string[] = [];
  for (const name of DATABASE_URLS) {
    const url = flat[name];
    if (typeof url !== 'string' || !url || refused.has(name)) continue;
    const own = unreadable(url);
    if (own !== undefined) {
      problems.push(`${variableOf(given, name)}: cannot be read (${own})`);
      continue;
    }
    const sources = variables.map(([variable]) => variable);
    try {
      const service = connectionKeyword(url, 'service') ?? serviceNamed;
      const servicefile = connectionKeyword(url, 'servicefile') ?? serviceFile ?? '';
      // The service's keywords come before the variables', after the string's own.
      const withService = service ? withConnectionDefaults(url, serviceKeywords(servicefile, service)) : url;
      const folded = withConnectionDefaults(withService, defaults);
      readDatabaseUrl(folded);
      flat[name] = folded;
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      const other = sources.length > 0 ? ` with ${sources.join(', ')}` : '';
      problems.push(`${variableOf(given, name)}${other}: cannot be read (${err.message})`);
    }
  }
  return problems;
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
