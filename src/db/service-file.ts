// A connection service file (`~/.pg_service.conf`, PGSERVICEFILE, `servicefile=`), read by the rules of the
// original's driver (pgx): `[name]` starts a service, each `key = value` line below gives one of its libpq
// keywords, `#` lines and blank lines are skipped, white space around each part is trimmed. A line outside
// a service or without `=` makes the whole file unreadable, as there. Not an INI file: `;` starts no
// comment, values are not unquoted, and a dot in a name is part of the name.
import { readFileSync } from 'node:fs';

/** The keywords service `name` of the file at `path` gives. Throws a TypeError saying what is wrong. */
export function serviceKeywords(path: string, name: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TypeError(`the service file ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  const services = new Map<string, Record<string, string>>();
  let current: Record<string, string> | null = null;
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[') && line.endsWith(']')) {
      // A name given twice: the later section is the one found, as in pgx.
      current = {};
      services.set(line.slice(1, -1), current);
      continue;
    }
    const equals = line.indexOf('=');
    if (current === null || equals < 0) {
      throw new TypeError(
        `the service file ${path} cannot be read: line ${index + 1} is ${current ? 'not key=value' : 'not in a service'}`,
      );
    }
    current[line.slice(0, equals).trim()] = line.slice(equals + 1).trim();
  }
  const service = services.get(name);
  if (!service) throw new TypeError(`the service file ${path} has no service "${name}"`);
  return service;
}
