// DATABASE_URL read as libpq reads it, as the original does through pgx: a `postgres://` URL or keyword/value
// pairs (`host=db user=auth dbname=postgres`), and `sslmode` with libpq's meaning, `prefer` when absent
// (docs/settings.md#database). pg-connection-string does the reading (its libpq-compatible mode); what it
// leaves out is done here: keyword strings, the `prefer` default, and `prefer`'s plain-text fallback.
// Every connection the service opens goes through these settings: the pools (pool.ts), the migrations
// (migrate.ts, postgres.js), the schema version, and the source database of `portcullis import`.
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import pg from 'pg';
import { parse } from 'pg-connection-string';

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
}

/**
 * The parameters that say where and how to connect, never sent to the server as settings of its session:
 * the ones pgx keeps to itself, and pg-connection-string's own.
 */
const CONNECTION_KEYS = new Set([
  ...['host', 'port', 'user', 'password', 'passfile', 'database', 'connect_timeout', 'target_session_attrs', 'service', 'servicefile'],
  ...['sslmode', 'sslkey', 'sslcert', 'sslrootcert', 'sslpassword', 'sslsni', 'krbspn', 'krbsrvname'],
  ...['ssl', 'sslnegotiation', 'uselibpqcompat'],
]);

export function readDatabaseUrl(url: string): DatabaseTarget {
  const parsed = parse(isUrl(url) ? url : keywordsAsUrl(url), { useLibpqCompat: true });
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
  const fallback = sslmode === 'prefer' || sslmode === 'allow';
  const given = typeof parsed.ssl === 'object' ? (parsed.ssl as TlsOptions) : {};
  const ssl: TlsOptions | false = sslmode === 'disable' ? false : fallback ? { ...given, rejectUnauthorized: false } : given;
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!CONNECTION_KEYS.has(key) && typeof value === 'string') params[key] = value;
  }
  return {
    ...(parsed.host ? { host: parsed.host } : {}),
    ...(parsed.port ? { port: Number(parsed.port) } : {}),
    ...(parsed.user ? { user: parsed.user } : {}),
    ...(parsed.password ? { password: parsed.password } : {}),
    ...(parsed.database ? { database: parsed.database } : {}),
    ...(Number(parsed.connect_timeout) > 0 ? { connectTimeout: Number(parsed.connect_timeout) } : {}),
    ssl,
    plainWhenRefused: fallback,
    params,
  };
}

/** The settings node-postgres takes for `url`, and the Client class (based on `Base`) that honours them. */
export function pgConnection(url: string, Base: typeof pg.Client = pg.Client): { config: pg.ClientConfig; Client: typeof pg.Client } {
  const { plainWhenRefused, params, connectTimeout, ...target } = readDatabaseUrl(url);
  const config = { ...params, ...target, ...(connectTimeout ? { connectionTimeoutMillis: connectTimeout * 1000 } : {}) };
  return { config, Client: plainWhenRefused ? plainWhenTlsRefused(Base) : Base };
}

function isUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * libpq's keyword/value form as the equivalent URL, for pg-connection-string: `key = value` pairs apart by
 * white space, a value in single quotes when it holds spaces, `\` escaping the next character.
 */
function keywordsAsUrl(text: string): string {
  const pair = /\s*([\w.-]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|((?:[^\s'\\]|\\.)*))/y;
  const params = new URLSearchParams();
  let database = '';
  while (pair.lastIndex < text.length && text.slice(pair.lastIndex).trim() !== '') {
    const at = pair.lastIndex;
    const match = pair.exec(text);
    if (!match) throw new TypeError(`not a postgres:// URL nor key=value pairs (at character ${at + 1})`);
    const value = (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1');
    if (match[1] === 'dbname') database = value;
    else params.set(match[1], value);
  }
  return `postgres:///${encodeURIComponent(database)}?${params.toString()}`;
}

/**
 * A server without TLS answers the request for it with `N`: node-postgres then gives up, libpq with
 * `prefer` goes on in plain text on the same connection, and so does this Client. The one-byte answer is
 * awaited by a listener pg's Connection adds before it sends the request; it is taken over here.
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
          if (answer[0] !== 0x4e /* N */ || answer.length !== 1) return pgAnswer?.call(stream, answer);
          connection.attachListeners(stream);
          // pg's client sends its startup message on this event: now in plain text.
          connection.emit('sslconnect');
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
  const { host, port, user, password, database, connectTimeout, ssl, plainWhenRefused, params } = readDatabaseUrl(url);
  const withClientCertificate = ssl !== false && (ssl.cert !== undefined || ssl.key !== undefined);
  return {
    ...(host ? { host } : {}),
    ...(port ? { port } : {}),
    ...(user ? { user } : {}),
    ...(password ? { pass: password } : {}),
    ...(database ? { database } : {}),
    ...(connectTimeout ? { connect_timeout: connectTimeout } : {}),
    ssl: plainWhenRefused && !withClientCertificate ? 'prefer' : ssl,
    params,
  };
}

export interface PostgresJsConnection {
  host?: string;
  port?: number;
  user?: string;
  pass?: string;
  database?: string;
  connect_timeout?: number;
  ssl: 'prefer' | TlsOptions | false;
  /** startup parameters for the server's session */
  params: Record<string, string>;
}
