// Several hosts in DATABASE_URL (`postgres://u@primary:5432,replica:5432/db`) and `target_session_attrs`, as
// the original's driver (pgconn) uses them for each new connection: the hosts are tried in order, a host that
// cannot be reached, refuses the connection or is not of the kind asked for is passed over, and the first
// that fits is used (docs/settings.md#several-hosts). node-postgres knows one host only, and one of its
// clients connects once; so each host before the last is tried with a short-lived client of its own, and the
// pool's client then connects to the host that fitted. The last host needs no trial: nothing is left to
// fall back on, so the pool's client connects to it directly and is checked itself.
import type pg from 'pg';

export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

export interface DatabaseServer {
  host?: string;
  port?: number;
}

/**
 * Refusals after which pgconn tries no further host, since the next server would refuse the same: a wrong
 * password or pg_hba.conf entry, a database that does not exist, no right to connect.
 */
const FINAL_CODES = new Set(['28P01', '28000', '3D000', '42501']);

/** What a session must show to be kept, and pgconn's words when it does not. */
const KINDS: Record<Exclude<TargetSessionAttrs, 'any'>, { sql: string; fits: (value: string) => boolean; refusal: string }> = {
  'read-write': { sql: 'show transaction_read_only', fits: (v) => v !== 'on', refusal: 'read only connection' },
  'read-only': { sql: 'show transaction_read_only', fits: (v) => v === 'on', refusal: 'connection is not read only' },
  primary: { sql: 'select pg_is_in_recovery()::text as v', fits: (v) => v !== 'true', refusal: 'server is in standby mode' },
  standby: { sql: 'select pg_is_in_recovery()::text as v', fits: (v) => v === 'true', refusal: 'server is not in hot standby mode' },
  'prefer-standby': {
    sql: 'select pg_is_in_recovery()::text as v',
    fits: (v) => v === 'true',
    refusal: 'server is not in hot standby mode',
  },
};

/** pg's Client internals used here: `_connect` is where both of `connect`'s forms meet. */
interface ClientInternals {
  _connect: (this: pg.Client, callback: (err?: Error) => void) => void;
  connectionParameters: { host?: string; port?: number };
}

/**
 * `Client` connecting to the first of `servers` that fits `attrs`, trying the others with `Probe` clients,
 * each for at most `trialTimeoutMs` (the URL's connect_timeout, as pgx bounds each host) or else the
 * connection timeout the client is given.
 */
export function withServerChoice(
  Client: typeof pg.Client,
  Probe: typeof pg.Client,
  servers: DatabaseServer[],
  attrs: TargetSessionAttrs,
  trialTimeoutMs?: number,
): typeof pg.Client {
  const connect = (Client.prototype as unknown as ClientInternals)._connect;
  return class ChoosingClient extends Client {
    private readonly given: pg.ClientConfig;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.given = typeof config === 'object' ? config : {};
    }

    _connect(callback: (err?: Error) => void): void {
      this.connectToChosen().then(
        () => callback(),
        (err: Error) => callback(err),
      );
    }

    private async connectToChosen(): Promise<void> {
      // pg-pool keeps the password out of its options' enumerable keys (out of logs), so it is copied by name.
      const trialConfig = {
        ...this.given,
        password: this.given.password,
        ...(trialTimeoutMs ? { connectionTimeoutMillis: trialTimeoutMs } : {}),
      };
      const { server, checked } = await chooseServer(servers, attrs, (s) => tryServer(Probe, { ...trialConfig, ...s }, attrs));
      const self = this as unknown as ClientInternals & { host?: string; port?: number };
      if (server.host !== undefined) self.host = self.connectionParameters.host = server.host;
      if (server.port !== undefined) self.port = self.connectionParameters.port = server.port;
      await new Promise<void>((resolve, reject) => connect.call(this, (err) => (err ? reject(err) : resolve())));
      if (checked || attrs === 'any') return;
      try {
        if (!(await kindOf(this, attrs))) throw new Error(KINDS[attrs].refusal);
      } catch (err) {
        await this.end().catch(() => {});
        throw err;
      }
    }
  };
}

type Trial = 'fits' | 'not preferred';

/**
 * The server to connect to, and whether it was already checked for `attrs`. Each server but the last is
 * tried (for prefer-standby every one, since a server that is no standby is kept only when none is); the
 * last is returned unchecked. A refusal in FINAL_CODES ends the search with that refusal.
 */
async function chooseServer(
  servers: DatabaseServer[],
  attrs: TargetSessionAttrs,
  trial: (server: DatabaseServer) => Promise<Trial>,
): Promise<{ server: DatabaseServer; checked: boolean }> {
  let notPreferred: DatabaseServer | null = null;
  let lastError: Error = new Error('no database host to connect to');
  for (const [i, server] of servers.entries()) {
    if (i === servers.length - 1 && attrs !== 'prefer-standby') return { server, checked: false };
    try {
      if ((await trial(server)) === 'fits') return { server, checked: true };
      notPreferred ??= server;
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      if (FINAL_CODES.has((err as { code?: string }).code ?? '')) throw err;
      lastError = err;
    }
  }
  if (notPreferred) return { server: notPreferred, checked: true };
  throw lastError;
}

/** Connects a short-lived client to one server and reads what kind it is; throws when it does not fit. */
async function tryServer(Probe: typeof pg.Client, config: pg.ClientConfig, attrs: TargetSessionAttrs): Promise<Trial> {
  const client = new Probe(config);
  // An error after the trial ended (the server going away as the client closes) concerns no one.
  client.on('error', () => {});
  try {
    await client.connect();
    if (attrs === 'any' || (await kindOf(client, attrs))) return 'fits';
    if (attrs === 'prefer-standby') return 'not preferred';
    throw new Error(KINDS[attrs].refusal);
  } finally {
    await client.end().catch(() => {});
  }
}

async function kindOf(client: pg.Client, attrs: Exclude<TargetSessionAttrs, 'any'>): Promise<boolean> {
  const kind = KINDS[attrs];
  const { rows } = await client.query<Record<string, string>>(kind.sql);
  return kind.fits(Object.values(rows[0])[0]);
}
