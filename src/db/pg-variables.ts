// The PG* variables of the environment, as libpq and the original's pgx read them: each gives the value of
// one keyword of the connection string when the string leaves that keyword out; and pgx's own defaults
// beneath them. Apart from the connection code so the settings table can name them without loading a driver.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

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

/** Where pgx looks for a server's socket when no host is given: the first of these that exists. */
const SOCKET_DIRECTORIES = ['/var/run/postgresql', '/private/tmp', '/tmp'];

/**
 * What pgx takes when neither the string nor a variable gives it: the host, a socket directory of libpq's
 * build where one exists (else `localhost`); the user, the process's own; the service and password files in
 * its home. The drivers here would take `localhost` and `$USER` (or fail without it), so these are given.
 */
export function pgxDefaults(): { host: string; user?: string; servicefile?: string; passfile?: string } {
  const host = SOCKET_DIRECTORIES.find((dir) => existsSync(dir)) ?? 'localhost';
  try {
    const { username, homedir } = userInfo();
    return { host, user: username, servicefile: join(homedir, '.pg_service.conf'), passfile: join(homedir, '.pgpass') };
  } catch {
    // A user id with no name (a container's arbitrary uid): pgx leaves these out then too.
    return { host };
  }
}
