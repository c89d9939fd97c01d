// DATABASE_URL and DB_MIGRATIONS_DATABASE_URL read at start as the connection will read them
// (src/db/database-url.ts, after pgx): a string the original's driver cannot read stops its start ("error
// opening database"), so it stops this one too, naming the variable, instead of a connection failing later
// or a parameter being dropped unread. What the strings leave out is folded in here, as pgx takes it: from a
// service file, the PG* variables, pgx's defaults, a password file (docs/settings.md#pg-variables).
import { connectionKeyword, withConnectionDefaults } from '../../db/connection-string.js';
import { readDatabaseUrl } from '../../db/database-url.js';
import { serviceKeywords } from '../../db/service-file.js';
import { passwordFromFile } from '../../db/password-file.js';
import { PG_VARIABLES, pgxDefaults } from '../../db/pg-variables.js';
import { variableOf } from './cross-field.js';

const DATABASE_URLS = ['DB_DATABASE_URL', 'DB_MIGRATIONS_DATABASE_URL'];

/**
 * Gives each URL (in `flat`) what it leaves out, as pgx fills it in: from the service it names (a service
 * file), else from the PG* variables, else from pgx's own defaults; then, with no password yet, from the
 * password file. Returns one problem per URL that cannot be used, except those `refused` already (their
 * form). Never repeats the URL, which may hold a password.
 */
export function foldAndCheckDatabaseUrls(
  flat: Record<string, unknown>,
  given: Map<string, string>,
  refused: ReadonlySet<string>,
): string[] {
  const names = DATABASE_URLS.filter((name) => typeof flat[name] === 'string' && flat[name] && !refused.has(name));
  if (names.length === 0) return [];
  const variables = Object.entries(PG_VARIABLES).filter(([variable]) => flat[variable]);
  const fromVariables = Object.fromEntries(variables.map(([variable, keyword]) => [keyword, flat[variable] as string]));
  const withVariables = variables.length > 0 ? ` with ${variables.map(([variable]) => variable).join(', ')}` : '';
  // The service, its file and the password file are read here, not handed on.
  const {
    service: serviceNamed,
    servicefile: serviceFile,
    passfile: passwordFile,
    ...defaults
  } = { ...pgxDefaults(), ...fromVariables } as Record<string, string>;
  const problems: string[] = [];
  for (const name of names) {
    const url = flat[name] as string;
    try {
      const service = connectionKeyword(url, 'service') ?? serviceNamed;
      const servicefile = connectionKeyword(url, 'servicefile') ?? serviceFile ?? '';
      // The service's keywords come before the variables', after the string's own.
      const withService = service ? withConnectionDefaults(url, serviceKeywords(servicefile, service)) : url;
      const folded = withConnectionDefaults(withService, defaults);
      flat[name] = withFilePassword(folded, connectionKeyword(folded, 'passfile') ?? passwordFile);
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      // Read again on its own only now, to say whether the string itself or what was added to it is at fault.
      const own = unreadable(url);
      problems.push(
        own === undefined
          ? `${variableOf(given, name)}${withVariables}: cannot be read (${err.message})`
          : `${variableOf(given, name)}: cannot be read (${own})`,
      );
    }
  }
  return problems;
}

/**
 * `connection` with the password its password file gives, when it has none, as pgx looks it up: for the
 * first host. Throws a TypeError when `connection` cannot be read.
 */
function withFilePassword(connection: string, file: string | undefined): string {
  const { password, servers, user, database } = readDatabaseUrl(connection);
  if (password || !file) return connection;
  const [{ host = 'localhost', port = 5432 }] = servers;
  const found = passwordFromFile(file, { host, port, database: database ?? '', user: user ?? '' });
  return found === undefined ? connection : withConnectionDefaults(connection, { password: found });
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
