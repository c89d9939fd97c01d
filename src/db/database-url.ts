// DATABASE_URL read as libpq reads it, as the original does through pgx: a `postgres://` URL or keyword/value
// pairs (`host=db user=auth dbname=postgres`), and `sslmode` with libpq's meaning, `prefer` when absent
// (docs/settings.md#database). pg-connection-string does the reading (its libpq-compatible mode); what it
// leaves out is done here: keyword strings, the `prefer` default, `prefer`'s plain-text fallback, several
// hosts with `target_session_attrs` (server-choice.ts); the PG* variables' values are in the string by
// then (connection-string.ts).
// Every connection the service opens goes through these settings: the pools (pool.ts), the migrations
// (migrate.ts, postgres.js), the schema version, and the source database of `portcullis import`.
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { isIP } from 'node:net';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { isUrl, keywordPairs } from './connection-string.js';
import { TARGET_SESSION_ATTRS, withServerChoice, type DatabaseServer, type TargetSessionAttrs } from './server-choice.js';

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

export interface DatabaseTarget {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  /** TLS options when TLS is asked for first; false: plain text */
  ssl: TlsOptions | false;
  /** true when a server that answers it has no TLS is then talked to in plain text (prefer) */
  plainWhenRefused: boolean;
  /** seconds to wait for a connection (`connect_timeout`) */
  connectTimeout?: number;
  /** the other parameters the string gave (`options`, `application_name`, …): settings of the server's session */
  params: Record<string, string>;
  /** every host the string names, in its order (the first is `host` and `port` above); one when it names one */
  servers: DatabaseServer[];
  /** which of them a connection may use (`target_session_attrs`); `any` when absent */
  targetSessionAttrs: TargetSessionAttrs;
}

/**
 * The parameters that say where and how to connect, never sent to the server as settings of its session:
 * the ones pgx keeps to itself, and pg-connection-string's own.
 */
const CONNECTION_KEYS = new Set([
  ...['host', 'port', 'user', 'password', 'passfile', 'database', 'dbname', 'connect_timeout', 'target_session_attrs'],
  ...['service', 'servicefile'],
  ...['sslmode', 'sslkey', 'sslcert', 'sslrootcert', 'sslpassword', 'sslsni', 'krbspn', 'krbsrvname'],
  ...['ssl', 'sslnegotiation', 'uselibpqcompat'],
]);

export function readDatabaseUrl(url: string): DatabaseTarget {
  const hostList = isUrl(url) ? urlHostList(url) : null;
  const parsed = parseConnection(hostList ? hostList.firstHostOnly : isUrl(url) ? url : keywordsAsUrl(url));
  if (hostList) {
    parsed.host = hostList.hosts.join(',');
    parsed.port = hostList.ports.length > 0 ? hostList.ports.join(',') : parsed.port;
  }
  // pgx takes the database from `?dbname=` too, before the path (pg-connection-string reads the path only).
  if (typeof parsed.dbname === 'string' && parsed.dbname) parsed.database = parsed.dbname;
  const targetSessionAttrs = (parsed.target_session_attrs as string | undefined) ?? 'any';
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(targetSessionAttrs)) {
    throw new TypeError(`target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}; got ${targetSessionAttrs}`);
  }
  const sslmode = (parsed.sslmode as string | undefined) ?? 'prefer';
  if (!(SSL_MODES as readonly string[]).includes(sslmode)) {
    throw new TypeError(`sslmode must be one of ${SSL_MODES.join(', ')}; got ${sslmode}`);
  }
  // As pgx reads them, which refuses the string otherwise: dropping a value unread would mean, for
  // connect_timeout, no limit at all.
  const badPort = (parsed.port || undefined)?.split(',').find((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535);
  if (badPort !== undefined) throw new TypeError(`port "${badPort}" is not a port number (1–65535)`);
  const timeout = parsed.connect_timeout as string | undefined;
  if (timeout !== undefined && !(/^[+-]?\d+$/.test(timeout) && Number(timeout) >= 0)) {
    throw new TypeError(`connect_timeout "${timeout}" is not a whole number of seconds (0 or more)`);
  }
  // libpq's `allow` tries plain text first and TLS second; here TLS is tried first, as for `prefer`: the
  // same servers accept the connection, some of them encrypted (docs/differences.md#configuration).
  const servers = serversOf(parsed.host || undefined, parsed.port || undefined);
  // A Unix socket carries no TLS, and libpq and pgx ignore sslmode there: `require` from PGSSLMODE still
  // connects to a socket directory.
  const plain = sslmode === 'disable' || servers.every((server) => server.host?.startsWith('/'));
  const fallback = !plain && (sslmode === 'prefer' || sslmode === 'allow');
  const given = typeof parsed.ssl === 'object' ? (parsed.ssl as TlsOptions) : {};
  // sslpassword unlocks an encrypted sslkey, as in libpq and pgx.
  const withPassphrase =
    typeof parsed.sslpassword === 'string' && parsed.sslpassword ? { ...given, passphrase: parsed.sslpassword } : given;
  const ssl: TlsOptions | false = plain ? false : fallback ? { ...withPassphrase, rejectUnauthorized: false } : withPassphrase;
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!CONNECTION_KEYS.has(key) && typeof value === 'string') params[key] = value;
  }
  return {
    ...servers[0],
    ...(parsed.user ? { user: parsed.user } : {}),
    ...(parsed.password ? { password: parsed.password } : {}),
    ...(parsed.database ? { database: parsed.database } : {}),
    ...(Number(parsed.connect_timeout) > 0 ? { connectTimeout: Number(parsed.connect_timeout) } : {}),
    ssl,
    plainWhenRefused: fallback,
    params,
    servers,
    targetSessionAttrs: targetSessionAttrs as TargetSessionAttrs,
  };
}

/**
 * pg-connection-string's reading, which also reads the certificate and key files: a file that cannot be
 * read, `verify-ca` without a CA and its own option `uselibpqcompat` are thrown as plain Errors, and become
 * the TypeError of a string that cannot be used (the start names the setting then, not a bare file error).
 */
function parseConnection(text: string): ReturnType<typeof parse> {
  try {
    return parse(text, { useLibpqCompat: true });
  } catch (err) {
    if (err instanceof TypeError || !(err instanceof Error)) throw err;
    const file = (err as NodeJS.ErrnoException).syscall ? (err as NodeJS.ErrnoException) : null;
    const message = file
      ? `a certificate or key file cannot be read${file.path ? ` (${file.path})` : ''}: ${file.code}`
      : /verify-ca/.test(err.message)
        ? 'sslmode=verify-ca needs sslrootcert, the CA to check the certificate with'
        : /uselibpqcompat/.test(err.message)
          ? "uselibpqcompat is node-postgres' own option, not a parameter libpq knows"
          : err.message;
    throw new TypeError(message, { cause: err });
  }
}

/**
 * The hosts as pgx pairs them with the ports: host i with port i, or with the first port when fewer ports
 * are given (`h1,h2:5433` is both on 5433), the default port when none is. Empty entries are skipped.
 */
function serversOf(hosts: string | undefined, ports: string | undefined): DatabaseServer[] {
  const portList = ports?.split(',').map(Number) ?? [];
  const named = hosts?.split(',').filter(Boolean) ?? [];
  if (named.length === 0) return [portList.length > 0 ? { port: portList[0] } : {}];
  return named.map((host, i) => {
    const port = portList[i] ?? portList[0];
    return port === undefined ? { host } : { host, port };
  });
}

/**
 * A URL naming several hosts (`postgres://u@h1:5432,h2:5433/db`), which the URL parser under
 * pg-connection-string refuses: its hosts and ports as pgx splits them, and the URL with the first alone,
 * for the rest to be read as usual. Null for a URL with one host.
 */
function urlHostList(url: string): { hosts: string[]; ports: string[]; firstHostOnly: string } | null {
  const [, scheme, authority, rest] = /^([a-z]+:\/\/)([^/?#]*)(.*)$/is.exec(url) ?? [];
  if (authority === undefined) return null;
  const at = authority.lastIndexOf('@');
  const userinfo = authority.slice(0, at + 1);
  const entries = authority
    .slice(at + 1)
    .split(',')
    .filter(Boolean);
  if (entries.length < 2) return null;
  const hosts: string[] = [];
  const ports: string[] = [];
  for (const entry of entries) {
    const bare = entry.replace(/^\[(.*)\]$/, '$1');
    // A name or address without a port (pgx's isIPOnly): an IPv6 address holds colons of its own.
    if (isIP(bare) !== 0 || !entry.includes(':')) {
      hosts.push(bare);
      continue;
    }
    const colon = entry.lastIndexOf(':');
    const host = entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = entry.slice(colon + 1);
    if (!host && !port) throw new TypeError(`"${entry}" is not a host:port pair`);
    if (host) hosts.push(host);
    if (port) ports.push(port);
  }
  return { hosts, ports, firstHostOnly: `${scheme}${userinfo}${entries[0]}${rest}` };
}

/** The settings node-postgres takes for `url`, and the Client class (based on `Base`) that honours them. */
export function pgConnection(url: string, Base: typeof pg.Client = pg.Client): { config: pg.ClientConfig; Client: typeof pg.Client } {
  const { plainWhenRefused, params, connectTimeout, servers, targetSessionAttrs, ...target } = readDatabaseUrl(url);
  const config = { ...params, ...target, ...(connectTimeout ? { connectionTimeoutMillis: connectTimeout * 1000 } : {}) };
  const Client = plainWhenRefused ? plainWhenTlsRefused(Base) : Base;
  if (servers.length === 1 && targetSessionAttrs === 'any') return { config, Client };
  // The servers are tried with plain clients: the pool's own (named statements, tracing) only for the one kept.
  const Probe = plainWhenRefused ? plainWhenTlsRefused(pg.Client) : pg.Client;
  return {
    config,
    Client: withServerChoice(Client, Probe, servers, targetSessionAttrs, connectTimeout ? connectTimeout * 1000 : undefined),
  };
}

/**
 * libpq's keyword/value form as the equivalent URL, for pg-connection-string: `key = value` pairs apart by
 * white space, a value in single quotes when it holds spaces, `\` escaping the next character.
 */
function keywordsAsUrl(text: string): string {
  const params = new URLSearchParams();
  let database = '';
  for (const [key, value] of keywordPairs(text)) {
    // pgx takes `database` as a name of `dbname`.
    if (key === 'dbname' || key === 'database') database = value;
    else params.set(key, value);
  }
  return `postgres:///${encodeURIComponent(database)}?${params.toString()}`;
}

/**
 * A server without TLS answers the request for it with `N`: node-postgres then gives up, libpq with
 * `prefer` goes on in plain text on the same connection, and so does this Client. The one-byte answer is
 * awaited by a listener pg's Connection adds before it sends the request; it is taken over here.
 * A server that ends the session before the startup message (its postmaster died, 57P01) sends its error
 * after the `N`, often in the same read, or in place of it when the request had not yet arrived. Either is
 * handed to pg's plain-text parser, so the server's reason reaches the caller and is a database fault
 * (src/db/faults.ts), not pg's "error establishing an SSL connection", which is answered 500.
 */
function plainWhenTlsRefused(Base: typeof pg.Client): typeof pg.Client {
  return class extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const connection = this.connection as unknown as PgConnection;
      const requestSsl = connection.requestSsl.bind(connection);
      connection.requestSsl = () => {
        const stream = connection.stream;
        const [pgAnswer] = stream.listeners('data') as ((answer: Buffer) => void)[];
        if (pgAnswer) stream.removeListener('data', pgAnswer);
        stream.once('data', (answer: Buffer) => {
          if (answer[0] === 0x45 /* E */) {
            // The server's error instead of an answer: read as the plain-text protocol's, with its SQLSTATE.
            connection.attachListeners(stream);
            stream.unshift(answer);
            return;
          }
          if (answer[0] !== 0x4e /* N */) return pgAnswer?.call(stream, answer);
          connection.attachListeners(stream);
          // pg's client sends its startup message on this event: now in plain text.
          connection.emit('sslconnect');
          if (answer.length > 1) stream.unshift(answer.subarray(1));
        });
        requestSsl();
      };
    }
  };
}

/** What plainWhenTlsRefused uses of pg's Connection, which its types leave out. */
interface PgConnection {
  stream: NodeJS.ReadWriteStream;
  requestSsl(): void;
  attachListeners(stream: NodeJS.ReadWriteStream): void;
  emit(event: string): boolean;
}

/**
 * The same settings for postgres.js (the migrations). Its `prefer` goes on in plain text when the server has
 * no TLS, as libpq does, but cannot carry a client certificate: with one, TLS is required instead (a
 * server that asks for client certificates has TLS).
 */
export function postgresJsConnection(url: string): PostgresJsConnection {
  const { host, port, user, password, database, connectTimeout, ssl, plainWhenRefused, params, servers, targetSessionAttrs } =
    readDatabaseUrl(url);
  const withClientCertificate = ssl !== false && (ssl.cert !== undefined || ssl.key !== undefined);
  // postgres.js tries several hosts in order itself, and checks target_session_attrs as libpq does. It takes
  // them as lists, which its types leave out (they name one host and one port).
  const where =
    servers.length > 1
      ? {
          host: servers.map((s) => s.host ?? 'localhost') as unknown as string,
          port: servers.map((s) => s.port ?? 5432) as unknown as number,
        }
      : { ...(host ? { host } : {}), ...(port ? { port } : {}) };
  return {
    ...where,
    ...(targetSessionAttrs === 'any' ? {} : { target_session_attrs: targetSessionAttrs }),
    ...(user ? { user } : {}),
    ...(password ? { pass: password } : {}),
    ...(database ? { database } : {}),
    ...(connectTimeout ? { connect_timeout: connectTimeout } : {}),
    ssl: plainWhenRefused && !withClientCertificate ? 'prefer' : ssl,
    params,
  };
}

export interface PostgresJsConnection {
  /** one host, or (several hosts) a list of them in the place postgres.js reads it */
  host?: string;
  port?: number;
  target_session_attrs?: Exclude<TargetSessionAttrs, 'any'>;
  user?: string;
  pass?: string;
  database?: string;
  connect_timeout?: number;
  ssl: 'prefer' | TlsOptions | false;
  /** startup parameters for the server's session */
  params: Record<string, string>;
}
