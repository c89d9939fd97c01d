// The two forms of a libpq connection string, as text: `postgres://` URLs and keyword/value pairs
// (`host=db dbname=auth`). Which keywords a string gives, the value of one, and the string with the
// keywords it leaves out added in its own form: how the PG* variables, a service file and pgx's defaults
// are folded in at start (src/server/config/database-url-check.ts) before database-url.ts reads it.

export function isUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** The pairs of a keyword/value string, in its order. */
export function keywordPairs(text: string): [string, string][] {
  const pair = /\s*([\w.-]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|((?:[^\s'\\]|\\.)*))/y;
  const pairs: [string, string][] = [];
  while (pair.lastIndex < text.length && text.slice(pair.lastIndex).trim() !== '') {
    const at = pair.lastIndex;
    const match = pair.exec(text);
    if (!match) throw new TypeError(`not a postgres:// URL nor key=value pairs (at character ${at + 1})`);
    pairs.push([match[1], (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1')]);
  }
  return pairs;
}

/**
 * `connection` with each keyword of `defaults` it leaves out added, in its own form (a URL gains query
 * parameters, which pgx and pg-connection-string both read before the URL's parts); empty defaults are
 * none. The keywords it gives are kept: pgx's order is its defaults, then the environment, then the string.
 */
export function withConnectionDefaults(connection: string, defaults: Readonly<Record<string, string>>): string {
  const given = keywordsGiven(connection);
  const missing = Object.entries(defaults).filter(([key, value]) => value !== '' && !given.has(key));
  if (missing.length === 0) return connection;
  if (!isUrl(connection)) {
    const quoted = (value: string) => `'${value.replace(/[\\']/g, '\\$&')}'`;
    return `${connection.trimEnd()} ${missing.map(([key, value]) => `${key}=${quoted(value)}`).join(' ')}`;
  }
  const { scheme, authority, path, query, fragment } = urlParts(connection);
  const params = new URLSearchParams(missing);
  return `${scheme}${authority}${path}?${query ? `${query}&` : ''}${params.toString()}${fragment}`;
}

/** The value the string gives `keyword` in its query or its keyword/value pairs (`service`, `servicefile`, …). */
export function connectionKeyword(connection: string, keyword: string): string | undefined {
  // pgx: the last of a keyword given twice in pairs, the first in a URL's query.
  if (!isUrl(connection))
    return keywordPairs(connection)
      .filter(([key]) => key === keyword)
      .pop()?.[1];
  return new URLSearchParams(urlParts(connection).query).get(keyword) ?? undefined;
}

/** The keywords a connection string gives a value for, whether in a URL's parts or its query (`dbname` for the path). */
function keywordsGiven(connection: string): Set<string> {
  // pgx takes `database` as a name of `dbname`.
  if (!isUrl(connection)) return new Set(keywordPairs(connection).map(([key]) => (key === 'database' ? 'dbname' : key)));
  const { authority, path, query } = urlParts(connection);
  const given = new Set(new URLSearchParams(query).keys());
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at);
  const hosts = authority.slice(at + 1).split(',');
  if (userinfo.split(':')[0] !== '') given.add('user');
  if (userinfo.includes(':')) given.add('password');
  if (hosts.some((entry) => entry.replace(/:\d*$/, '') !== '')) given.add('host');
  if (hosts.some((entry) => /^(\[[^\]]*\]|[^:]*):\d+$/.test(entry))) given.add('port');
  if (path.replace(/^\//, '') !== '') given.add('dbname');
  return given;
}

/** A URL's parts as text: scheme (with `://`), authority, path, query (without `?`), fragment (with `#`). */
function urlParts(url: string): { scheme: string; authority: string; path: string; query: string; fragment: string } {
  const [, scheme = '', authority = '', path = '', query = '', fragment = ''] =
    /^([a-z]+:\/\/)([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/is.exec(url) ?? [];
  return { scheme, authority, path, query, fragment };
}
