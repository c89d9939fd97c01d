// A password file (`~/.pgpass`, PGPASSFILE, `passfile=`), read by the rules of the original's driver (pgx):
// one `host:port:database:user:password` entry per line, `*` matching anything, `\:` and `\\` standing for
// a colon and a backslash, `#` lines and lines of another shape skipped; the first entry that matches gives
// the password. Read once at start, for both drivers: node-postgres would read one by its own (libpq's)
// rules from PGPASSFILE in the environment, and postgres.js none.
import { readFileSync } from 'node:fs';

export interface PasswordFor {
  /** a host name or address, or a socket directory (looked up as `localhost`, as pgx does) */
  host: string;
  port: number;
  database: string;
  user: string;
}

/** The password the file at `path` gives, or undefined when none matches or the file cannot be read (pgx ignores it then). */
export function passwordFromFile(path: string, { host, port, database, user }: PasswordFor): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const wanted = [host.startsWith('/') ? 'localhost' : host, String(port), database, user];
  for (const line of text.split(/\r?\n/)) {
    const entry = entryOf(line.trim());
    if (entry && wanted.every((value, i) => entry[i] === '*' || entry[i] === value)) return entry[4];
  }
  return undefined;
}

/** The five fields of a line, or null for a comment or a line of another shape. */
function entryOf(line: string): string[] | null {
  if (line.startsWith('#')) return null;
  const fields = line.replace(/\\\\/g, '\r').replace(/\\:/g, '\n').split(':');
  return fields.length === 5 ? fields.map((field) => field.replace(/\r/g, '\\').replace(/\n/g, ':')) : null;
}
