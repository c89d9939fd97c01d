// The supervisor: prepares the database (embedded when no DATABASE_URL), migrates, opens the public port
// through the HTTP guard (src/server/guard/), starts the HTTP threads behind it (http-threads.ts, which
// also replaces a thread that crashes), has them rolled over to a reloaded --config-dir
// (reload/roll-over.ts), and drains everything on stop.
import { misconfiguredProviders } from './providers/configured.js';
import net from 'node:net';
import type { Logger } from 'pino';
import { withJwtSecret, type Config, type ConfigSources } from './config/load.js';
import { migrate } from '../db/migrate.js';
import { checkConnectionSchema } from '../db/session-check.js';
import { startEmbeddedPostgres, loadOrCreateJwtSecret } from '../db/embedded/server.js';
import { createCryptoPool, type CryptoPoolHost } from './crypto/pool.js';
import { createMetricsSource, startMetricsExporter, type MetricsExporter } from './observability/metrics-exporter.js';
import { startOtlpMetrics, type OtlpMetrics } from './observability/otlp-metrics.js';
import { poolBudget, processPoolSize } from './pool-budget.js';
import { startCleanup, type Cleanup } from './cleanup/loop.js';
import { logDeprecatedSettings } from './deprecations.js';
import { secretBox } from './mfa/encryption.js';
import { superviseGuard } from './guard/supervised.js';
import { createHttpThreads } from './http-threads.js';
import { watchConfigDir, type DirWatch } from './reload/watch.js';
import { servingThreads } from './reload/roll-over.js';

export interface Service {
  readonly config: Config;
  readonly port: number;
  readonly url: string;
  readonly databaseUrl: string;
  /** the Prometheus exporter's port, when METRICS_EXPORTER=prometheus */
  readonly metricsPort: number | null;
  /** HTTP threads running: AUTH_HTTP_WORKERS, or fewer when DB_MAX_POOL_SIZE cannot give each a connection */
  readonly threads: number;
  /** how many crashed HTTP threads have been replaced */
  readonly restarts: number;
  /** the background cleanup (src/server/cleanup/), null when DB_CLEANUP_ENABLED is false */
  readonly cleanup: Cleanup | null;
  /** how many reloaded configurations the HTTP threads have been rolled over to */
  readonly reloads: number;
  /** Fault injection for tests: makes HTTP thread `index` fail with an uncaught error. */
  failThread(index: number): void;
  /** Resolves when a crashed thread has been replaced and is listening again. */
  nextRestart(): Promise<void>;
  stop(timeoutMs?: number): Promise<void>;
}

export interface StartOptions {
  /**
   * Node's options for the service's threads (HTTP and crypto). Left out, they inherit the process's own,
   * as Node does: a `--import` that instruments the process reaches the threads that serve requests. A
   * host that runs the service inside a process whose loaders only it needs (a test runner's TypeScript,
   * mock and process-tracking hooks) passes what the threads need instead, usually nothing: every one of
   * those hooks would otherwise load again in each thread, and sit in front of every module it imports.
   * A thread given its own options still reads NODE_OPTIONS from the environment (Node does), so a
   * preload set there reaches it either way.
   */
  threadExecArgv?: string[];
  /**
   * The sources the configuration was read from, when they include a --config-dir: the directory is
   * watched, and a change that reads and checks cleanly is rolled out to new HTTP threads.
   */
  reloadFrom?: ConfigSources;
}

export async function startService(initial: Config, log: Logger, options: StartOptions = {}): Promise<Service> {
  let config = initial;
  let databaseUrl = config.db.url;
  let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
  logDeprecatedSettings(config, log);
  if (config.development) {
    warnDevelopment(log, config);
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (msg) => log.debug(msg) });
    databaseUrl = embedded.url;
    config = withJwtSecret(config, loadOrCreateJwtSecret(config.dataDir));
  }
  // Once, from the supervisor: ignored AUTH_/GOTRUE_ variables (config/load.ts), incomplete SMS credentials and
  // WebAuthn without a relying party (config/cross-field.ts).
  for (const warning of config.warnings) log.warn(warning);
  const unusable = misconfiguredProviders(config);
  if (unusable.length > 0) {
    log.warn({ providers: unusable }, `OAuth providers enabled but not fully configured, treated as disabled: ${unusable.join('; ')}`);
  }
  let crypto: CryptoPoolHost | null = null;
  try {
    // Through a transaction pooler, migrations go to PostgreSQL itself (DB_MIGRATIONS_DATABASE_URL).
    const migrationsUrl = embedded ? databaseUrl : config.db.migrationsUrl || databaseUrl;
    const { applied } = await migrate(migrationsUrl, config.db.namespace, (msg) => log.info(msg), {
      sealSecret: (rowId, stored) => secretBox(config).sealIfClear(rowId, stored),
    });
    log.info({ applied, namespace: config.db.namespace }, 'database migrated');
    const { maxConnections } = await checkConnectionSchema(databaseUrl, config.db.namespace, config.db.preparedStatements);
    const maxPoolSize = processPoolSize(config.db, maxConnections, log);
    crypto = createCryptoPool({ threads: config.workers.crypto, params: config.password.hash, execArgv: options.threadExecArgv });
    if (config.workers.uvThreadpool < config.workers.crypto) {
      // argon2 runs on libuv's threadpool: a smaller pool caps concurrent hashes below the crypto threads.
      log.warn(
        { uvThreadpoolSize: config.workers.uvThreadpool, cryptoWorkers: config.workers.crypto },
        'UV_THREADPOOL_SIZE is below AUTH_CRYPTO_WORKERS; set UV_THREADPOOL_SIZE >= AUTH_CRYPTO_WORKERS in the environment',
      );
    }
    return await spawnThreads(config, databaseUrl, maxPoolSize, { crypto, embedded }, log, options);
  } catch (err) {
    await crypto?.close();
    await embedded?.stop();
    throw err;
  }
}

interface Owned {
  crypto: CryptoPoolHost;
  embedded: { stop(): Promise<void> } | null;
}

async function spawnThreads(
  config: Config,
  databaseUrl: string,
  maxPoolSize: number,
  owned: Owned,
  log: Logger,
  options: StartOptions,
): Promise<Service> {
  const execArgv = options.threadExecArgv;
  // With DB_CONN_PERCENTAGE the original keeps every connection idle that it may open: no cap then.
  const budget = poolBudget(config.workers.http, maxPoolSize, config.db.connPercentage > 0 ? 0 : config.db.maxIdlePoolSize);
  const count = budget.threads;
  if (count < config.workers.http) {
    log.warn(
      { httpWorkers: config.workers.http, maxPoolSize, threads: count },
      'DB_MAX_POOL_SIZE is below AUTH_HTTP_WORKERS and each HTTP thread needs a connection: running fewer HTTP threads',
    );
  }
  // With the guard the supervisor owns the public port and each thread gets a Unix socket in a directory
  // only this user can enter; without it the threads share the port (SO_REUSEPORT).
  // The guard starts accepting only once the threads listen, so that until the service can answer, a
  // client is refused a connection (as without the guard) rather than handed a 503.
  const guard = config.api.guard ? superviseGuard(config, log) : null;
  // Binding port 0 in two threads is not safe with this uWS build, so without the guard a free port is
  // chosen up front: the first thread binds it, the rest join it.
  const sharedPort = guard ? 0 : config.api.port || (await freePort(config.api.host));
  const threadsFor = (settings: Config, slotBase: number) =>
    createHttpThreads({
      config: settings,
      databaseUrl,
      connections: budget.connections,
      idle: budget.idle,
      crypto: owned.crypto,
      guard,
      sharedPort,
      log,
      execArgv,
      slotBase,
    });
  const threads = threadsFor(config, 0);
  let port = sharedPort;
  try {
    await threads.spawn(0);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => threads.spawn(i + 1)));
    if (guard) port = await guard.listen();
  } catch (err) {
    await threads.drain(1000);
    await guard?.close();
    throw err;
  }
  log.info({ port, threads: count, connectionsPerThread: budget.connections[0] }, 'listening');

  // The one place the cleanup starts; stop() ends it before anything it needs.
  let cleanup = config.db.cleanup.enabled ? startCleanup(config, databaseUrl, log) : null;
  const serving = servingThreads({
    serving: threads,
    config,
    count,
    threadsFor,
    sources: options.reloadFrom,
    log,
    // The cleanup reads expiry settings a reload may change.
    onRolledOver: async (next) => {
      if (!cleanup) return;
      await cleanup.stop();
      cleanup = startCleanup(next, databaseUrl, log);
    },
  });
  let exporter: MetricsExporter | null = null;
  let pushing: OtlpMetrics | null = null;
  if (config.metrics.enabled) {
    const source = createMetricsSource(
      () => serving.threads.collectMetrics(),
      () => owned.crypto.stats(),
      cleanup ? () => cleanup!.totals() : undefined,
    );
    if (config.metrics.exporter === 'prometheus') exporter = await startMetricsExporter(config.metrics, source, log);
    else if (config.metrics.exporter === 'opentelemetry') pushing = await startOtlpMetrics(config, source, log);
  }
  let watch: DirWatch | null = null;
  const dir = options.reloadFrom?.configDir;
  if (dir && (config.reloading.notifyEnabled || config.reloading.signalEnabled)) {
    log.info({ dir, ...config.reloading }, 'watching the config directory for changes');
    watch = watchConfigDir(dir, config.reloading, log, () => void serving.reload());
  }

  return {
    get config() {
      return serving.config;
    },
    port,
    databaseUrl,
    url: `http://127.0.0.1:${port}`,
    metricsPort: exporter?.port ?? null,
    threads: count,
    get restarts() {
      return serving.restarts;
    },
    get cleanup() {
      return cleanup;
    },
    get reloads() {
      return serving.reloads;
    },
    failThread: (index) => serving.threads.fail(index),
    nextRestart: () => serving.threads.nextRestart(),
    async stop(timeoutMs = 10_000) {
      // A reload under way finishes first, so that the threads stopped below are the ones running.
      watch?.close();
      await serving.stopReloading();
      const { threads } = serving;
      // First: a thread crashing while the rest below is closed must not be replaced by one that would
      // then be asked to drain before it listens.
      threads.stopReplacing();
      // No new connections; the ones open are answered until their thread has drained.
      await guard?.stopAccepting();
      await cleanup?.stop();
      await exporter?.close();
      // Before the threads go: the last push still reads their counters.
      await pushing?.close();
      await threads.drain(timeoutMs);
      await guard?.close();
      await owned.crypto.close();
      await owned.embedded?.stop();
      log.info('stopped');
    },
  };
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** One line for the log; the readable banner is printed by the command once the service is up (development-banner.ts). */
function warnDevelopment(log: Logger, config: Config): void {
  log.warn(
    { dataDir: config.dataDir },
    'DEVELOPMENT SETUP: no DATABASE_URL, so an embedded PostgreSQL and a generated JWT secret; mail and SMS go to this log unless SMTP_HOST / SMS_PROVIDER are set',
  );
}
