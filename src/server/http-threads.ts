// The HTTP threads as the supervisor keeps them: each spawned with its share of the connection budget
// and its Unix socket behind the guard (or the shared public port), replaced when it ends unexpectedly,
// asked for its metrics, and drained at stop. service.ts decides when; this module knows how.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from './config/load.js';
import type { CryptoPoolHost } from './crypto/pool.js';
import type { MetricsJson } from './observability/metrics-exporter.js';
import { prettyLogsWanted } from './observability/log.js';
import type { SupervisedGuard } from './guard/supervised.js';
import type { ListenOn } from './http/server.js';
import type { HttpWorkerData, FromWorker, ToWorker } from '../workers/http.js';

const WORKER_FILE = new URL('../workers/http.js', import.meta.url);

/** How long a drained HTTP thread may take to end on its own before it is terminated. */
const DRAINED_THREAD_GRACE_MS = 200;

export interface HttpThreadsOptions {
  config: Config;
  databaseUrl: string;
  /** each thread's pool size, by index (pool-budget.ts) */
  connections: number[];
  /** idle connections each thread's pool keeps (DB_MAX_IDLE_POOL_SIZE shared out); null: no cap */
  idle: number[] | null;
  crypto: CryptoPoolHost;
  /** each thread listens on its Unix socket behind the guard, and the guard is told which can take connections */
  guard: SupervisedGuard | null;
  /** without the guard: the public port every thread listens on (SO_REUSEPORT) */
  sharedPort: number;
  log: Logger;
  /** Node's options for each thread; left out, the process's own (service.ts, StartOptions) */
  execArgv?: string[];
  /**
   * Where this set's threads start among the guard's upstreams and sockets: a reload starts a new set
   * beside the running one (reload/roll-over.ts), and the two must not share a socket while both listen.
   */
  slotBase?: number;
}

export interface HttpThreads {
  /** Starts thread `index`; resolves once it listens, rejects if it ends or fails before. */
  spawn(index: number): Promise<void>;
  /** From now on a thread that ends is not replaced: the service is stopping. */
  stopReplacing(): void;
  /** Stops replacing threads, asks every live one to drain, and resolves once each has ended. */
  drain(timeoutMs: number): Promise<void>;
  /** Takes every thread out of the guard's rotation: new connections go to other threads from now on. */
  detach(): void;
  /** every live thread's metrics */
  collectMetrics(): Promise<MetricsJson[]>;
  /** Fault injection for tests: makes thread `index` fail with an uncaught error. */
  fail(index: number): void;
  /** Resolves when a crashed thread has been replaced and is listening again. */
  nextRestart(): Promise<void>;
  /** how many crashed threads have been replaced */
  readonly restarts: number;
}

export function createHttpThreads(options: HttpThreadsOptions): HttpThreads {
  const { config, databaseUrl, connections, idle, crypto, guard, sharedPort, log, execArgv, slotBase = 0 } = options;
  // Decided here, in the supervisor: a worker thread's stdout is never a terminal itself.
  const prettyLogs = prettyLogsWanted(config, process.stdout.isTTY === true);
  const threads: Worker[] = [];
  let stopping = false;
  let restarts = 0;
  let restartWaiters: Array<() => void> = [];
  let nextMetricsId = 1;
  // One flag for every thread: whether the trace exporter's collector is failing, so that only one
  // thread logs the failure and the recovery (observability/tracing.ts).
  const traceExportFailing = new Int32Array(new SharedArrayBuffer(4));

  const listenOn = (index: number): ListenOn =>
    guard ? { kind: 'unix', path: guard.socketFor(slotBase + index) } : { kind: 'tcp', host: config.api.host, port: sharedPort };
  let detached = false;
  // threadId is -1 once a thread has ended: it has no exit left to wait for and no message to answer.
  const live = () => threads.filter((worker) => worker && worker.threadId !== -1);

  const spawn = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const cryptoPort = crypto.connect();
      const listen = listenOn(index);
      const data: HttpWorkerData = {
        config,
        databaseUrl,
        poolSize: connections[index],
        ...(idle ? { maxIdle: idle[index] } : {}),
        listen,
        index,
        cryptoPort,
        prettyLogs,
        traceExportFailing,
      };
      const worker = new Worker(WORKER_FILE, { workerData: data, transferList: [cryptoPort], execArgv });
      threads[index] = worker;
      let listening = false;
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'listening') {
          listening = true;
          if (listen.kind === 'unix' && !detached) guard?.setUpstream(slotBase + index, listen.path);
          resolve();
        }
        if (message.type === 'crashed') log.error({ thread: index, reason: message.message }, 'HTTP thread crashed');
      });
      worker.once('error', (err) => {
        if (!listening) reject(err);
        else log.error({ err, thread: index }, 'HTTP thread error');
      });
      worker.once('exit', (code) => {
        guard?.setUpstream(slotBase + index, null);
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

  const drainOne = (worker: Worker, timeoutMs: number) =>
    new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      // A drained thread has closed its server and flushed its log; what may still hold its loop open is
      // a library timer (the trace exporter's retry back-off to a collector that is down), which must not
      // stretch a shutdown (docs/observability.md#tracing).
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'drained') setTimeout(() => void worker.terminate(), DRAINED_THREAD_GRACE_MS).unref();
      });
      worker.postMessage({ type: 'drain', timeoutMs } satisfies ToWorker);
    });

  const metricsOf = (worker: Worker) =>
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
    });

  return {
    spawn,
    stopReplacing() {
      stopping = true;
    },
    async drain(timeoutMs) {
      stopping = true;
      await Promise.all(live().map((worker) => drainOne(worker, timeoutMs)));
    },
    detach() {
      detached = true;
      threads.forEach((_, index) => guard?.setUpstream(slotBase + index, null));
    },
    collectMetrics: () => Promise.all(live().map(metricsOf)),
    fail: (index) => threads[index]?.postMessage({ type: 'fail' } satisfies ToWorker),
    nextRestart: () => new Promise((resolve) => restartWaiters.push(resolve)),
    get restarts() {
      return restarts;
    },
  };
}
