// DB_NAMESPACE is the schema that holds every table. It reaches SQL as an identifier (CREATE SCHEMA) and
// as a search_path connection option, where it cannot be a bind parameter, so it is checked here: a
// plain lower-case identifier needs no quoting anywhere and cannot smuggle in a second schema or SQL.
const NAMESPACE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws a TypeError (a configuration mistake, caught at startup) unless `namespace` is a plain identifier. */
export function assertNamespace(namespace: string): void {
  if (!NAMESPACE.test(namespace)) {
    throw new TypeError(
      `invalid database namespace ${JSON.stringify(namespace)}: expected a lower-case identifier matching ${NAMESPACE.source}`,
    );
  }
}
