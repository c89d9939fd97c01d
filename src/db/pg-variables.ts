// The PG* variables of the environment, as libpq and the original's pgx read them: each gives the value of
// one keyword of the connection string when the string leaves that keyword out. Apart from the connection
// code so the settings table can name them without loading a driver.

/**
 * The libpq keyword each `PG*` variable of the environment stands for, as pgx reads them: the value of a
 * keyword the connection string leaves out (docs/settings.md#pg-variables).
 */
export const PG_VARIABLES = {
  PGHOST: 'host',
  PGPORT: 'port',
  PGDATABASE: 'dbname',
  PGUSER: 'user',
  PGPASSWORD: 'password',
  PGPASSFILE: 'passfile',
  PGAPPNAME: 'application_name',
  PGCONNECT_TIMEOUT: 'connect_timeout',
  PGSSLMODE: 'sslmode',
  PGSSLKEY: 'sslkey',
  PGSSLCERT: 'sslcert',
  PGSSLSNI: 'sslsni',
  PGSSLROOTCERT: 'sslrootcert',
  PGSSLPASSWORD: 'sslpassword',
  PGTARGETSESSIONATTRS: 'target_session_attrs',
  PGSERVICE: 'service',
  PGSERVICEFILE: 'servicefile',
} as const;
