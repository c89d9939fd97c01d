// The supervisor: prepares the database (embedded when no DATABASE_URL), migrates, opens the public port
// through the HTTP guard (src/server/guard/), spawns the HTTP threads behind it, replaces a thread that
// crashes, and drains everything on stop.
import { misconfiguredProviders } from './providers/configured.js';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { withJwtSecret, type Config } from './config/load.js';
import { migrate } from '../db/migrate.js';
import { checkConnectionSchema } from '../db/session-check.js';
import { startEmbeddedPostgres, loadOrCreateJwtSecret } from '../db/embedded/server.js';
import { createCryptoPool, type CryptoPoolHost } from './crypto/pool.js';
import { createMetricsSource, startMetricsExporter, type MetricsExporter, type MetricsJson } from './observability/metrics-exporter.js';
import { startOtlpMetrics, type OtlpMetrics } from './observability/otlp-metrics.js';
import { poolBudget } from './pool-budget.js';
import { startCleanup, type Cleanup } from './cleanup/loop.js';
import { logDeprecatedSettings } from './deprecations.js';
import { prettyLogsWanted } from './observability/log.js';
import type { HttpWorkerData, FromWorker, ToWorker } from '../workers/http.js';
import { secretBox } from './mfa/encryption.js';
import { superviseGuard } from './guard/supervised.js';
import type { ListenOn } from './http/server.js';

const WORKER_FILE = new URL('../workers/http.js', import.meta.url);

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
  /** Fault injection for tests: makes HTTP thread `index` fail with an uncaught error. */
  failThread(index: number): void;
  /** Resolves when a crashed thread has been replaced and is listening again. */
  nextRestart(): Promise<void>;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startService(initial: Config, log: Logger): Promise<Service> {
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
  // Once, from the supervisor: ignored AUTH_/GOTRUE_ variables and incomplete SMS credentials (config/load.ts).
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
    await checkConnectionSchema(databaseUrl, config.db.namespace, config.db.preparedStatements);
    crypto = createCryptoPool({ threads: config.workers.crypto, params: config.password.hash });
    if (config.workers.uvThreadpool < config.workers.crypto) {
      // argon2 runs on libuv's threadpool: a smaller pool caps concurrent hashes below the crypto threads.
      log.warn(
        { uvThreadpoolSize: config.workers.uvThreadpool, cryptoWorkers: config.workers.crypto },
        'UV_THREADPOOL_SIZE is below AUTH_CRYPTO_WORKERS; set UV_THREADPOOL_SIZE >= AUTH_CRYPTO_WORKERS in the environment',
      );
    }
    return await spawnThreads(config, databaseUrl, { crypto, embedded }, log);
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

async function spawnThreads(config: Config, databaseUrl: string, owned: Owned, log: Logger): Promise<Service> {
  const budget = poolBudget(config.workers.http, config.db.maxPoolSize);
  const count = budget.threads;
  if (count < config.workers.http) {
    log.warn(
      { httpWorkers: config.workers.http, maxPoolSize: config.db.maxPoolSize, threads: count },
      'DB_MAX_POOL_SIZE is below AUTH_HTTP_WORKERS and each HTTP thread needs a connection: running fewer HTTP threads',
    );
  }
  // With the guard the supervisor owns the public port and each thread gets a Unix socket in a directory
  // only this user can enter; without it the threads share the port (SO_REUSEPORT).
  // The guard starts accepting only once the threads listen, so that until the service can answer, a
  // client is refused a connection (as without the guard) rather than handed a 503.
  const guard = config.api.guard ? superviseGuard(config, log) : null;
  const sharedPort = guard ? 0 : config.api.port || (await freePort(config.api.host));
  const listenOn = (index: number): ListenOn => {
    if (!guard) return { kind: 'tcp', host: config.api.host, port: sharedPort };
    return { kind: 'unix', path: guard.socketFor(index) };
  };
  // Decided here: a worker thread's stdout is never a terminal itself.
  const prettyLogs = prettyLogsWanted(config, process.stdout.isTTY === true);
  const threads: Worker[] = [];
  let stopping = false;
  let restarts = 0;
  const traceExportFailing = new Int32Array(new SharedArrayBuffer(4));
  let restartWaiters: Array<() => void> = [];

  const spawn = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const cryptoPort = owned.crypto.connect();
      const listen = listenOn(index);
      const data: HttpWorkerData = {
        config,
        databaseUrl,
        poolSize: budget.connections[index],
        listen,
        index,
        cryptoPort,
        prettyLogs,
        traceExportFailing,
      };
      const worker = new Worker(WORKER_FILE, { workerData: data, transferList: [cryptoPort] });
      threads[index] = worker;
      let listening = false;
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'listening') {
          listening = true;
          if (listen.kind === 'unix') guard?.setUpstream(index, listen.path);
          resolve();
        }
        if (message.type === 'crashed') log.error({ thread: index, reason: message.message }, 'HTTP thread crashed');
      });
      worker.once('error', (err) => {
        if (!listening) reject(err);
        else log.error({ err, thread: index }, 'HTTP thread error');
      });
      worker.once('exit', (code) => {
        guard?.setUpstream(index, null);
        if (!listening) return reject(new Error(`HTTP thread ${index} exited before listening (code ${code})`));
        if (stopping) return;
        log.warn({ thread: index, code }, 'HTTP thread ended unexpectedly; starting a replacement');
        spawn(index).then(
          () => {
            restarts++;
            const waiters = restartWaiters;
            restartWaiters = [];
            waiters.forEach((w) => w());
            log.info({ thread: index }, 'replacement HTTP thread listening');
          },
          (err) => log.fatal({ err, thread: index }, 'could not replace HTTP thread'),
        );
      });
    });

  // The first thread binds, the rest join the same port. (Binding port 0 in two threads is not safe with
  // this uWS build, which is why a free port is chosen up front.)
  const drainThreads = (timeoutMs: number) =>
    Promise.all(
      // threadId is -1 once a thread has ended: it has no exit left to wait for
      threads
        .filter((worker) => worker && worker.threadId !== -1)
        .map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              // A drained thread has closed its server and flushed its log; what may still hold its loop
              // open is a library timer (the trace exporter's retry back-off to a collector that is down),
              // which must not stretch a shutdown (docs/observability.md#tracing).
              worker.on('message', (message: FromWorker) => {
                if (message.type === 'drained') setTimeout(() => void worker.terminate(), DRAINED_THREAD_GRACE_MS).unref();
              });
              worker.postMessage({ type: 'drain', timeoutMs } satisfies ToWorker);
            }),
        ),
    );
  let port = sharedPort;
  try {
    await spawn(0);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => spawn(i + 1)));
    if (guard) port = await guard.listen();
  } catch (err) {
    stopping = true;
    await drainThreads(1000);
    await guard?.close();
    throw err;
  }
  log.info({ port, threads: count, connectionsPerThread: budget.connections[0] }, 'listening');

  let nextMetricsId = 1;
  const collectThreads = () =>
    Promise.all(
      // threadId is -1 once a thread has ended: it has no exit left to wait for
      threads
        .filter((worker) => worker && worker.threadId !== -1)
        .map(
          (worker) =>
            new Promise<MetricsJson>((resolve) => {
              const id = nextMetricsId++;
              const onMessage = (message: FromWorker) => {
                if (message.type === 'metrics' && message.id === id) {
                  worker.off('message', onMessage);
                  resolve(message.metrics as MetricsJson);
                }
              };
              worker.on('message', onMessage);
              worker.postMessage({ type: 'metrics', id } satisfies ToWorker);
            }),
        ),
    );
  // The one place the cleanup starts; stop() ends it before anything it needs.
  const cleanup = config.db.cleanup.enabled ? startCleanup(config, databaseUrl, log) : null;
  let exporter: MetricsExporter | null = null;
  let pushing: OtlpMetrics | null = null;
  if (config.metrics.enabled) {
    const source = createMetricsSource(collectThreads, () => owned.crypto.stats(), cleanup ? () => cleanup.totals() : undefined);
    if (config.metrics.exporter === 'prometheus') exporter = await startMetricsExporter(config.metrics, source, log);
    else pushing = await startOtlpMetrics(config, source, log);
  }

  return {
    config,
    port,
    databaseUrl,
    url: `http://127.0.0.1:${port}`,
    metricsPort: exporter?.port ?? null,
    threads: count,
    get restarts() {
      return restarts;
    },
    cleanup,
    failThread: (index) => threads[index]?.postMessage({ type: 'fail' } satisfies ToWorker),
    nextRestart: () => new Promise((resolve) => restartWaiters.push(resolve)),
    async stop(timeoutMs = 10_000) {
      stopping = true;
      // No new connections; the ones open are answered until their thread has drained.
      await guard?.stopAccepting();
      await cleanup?.stop();
      await exporter?.close();
      // Before the threads go: the last push still reads their counters.
      await pushing?.close();
      await drainThreads(timeoutMs);
      await guard?.close();
      await owned.crypto.close();
      await owned.embedded?.stop();
      log.info('stopped');
    },
  };
}

/** How long a drained HTTP thread may take to end on its own before it is terminated. */
const DRAINED_THREAD_GRACE_MS = 200;

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
