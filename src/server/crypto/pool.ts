// The password-hashing facade. One piscina pool of AUTH_CRYPTO_WORKERS threads lives in the main thread;
// each HTTP thread reaches it through a MessagePort (docs/architecture.md#the-crypto-pool).
//
// Why a pool at all, when argon2's async API already runs on libuv's threadpool? Not for speed: it bounds
// concurrency. libuv's pool is process-wide and shared with fs, DNS and scrypt, so an unbounded flood of
// password logins would queue everything else behind hashes of tens of milliseconds. With
// concurrentTasksPerWorker 1, at most N hashes run at once and a bounded number wait (admission.ts), while
// HTTP threads keep answering refresh grants and /health. The hashes themselves still run on libuv's
// pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), so the launcher must size it above N.
// The detour costs under 1 % of a verify (bench/README.md, crypto-choices).
// A task that only waits for libuv's pool (every argon2 hash or verify, Firebase scrypt: workers/crypto.ts
// blocksItsThread) is started from the supervisor's event loop itself, as admission lets it through: a
// piscina thread would only relay it to libuv and back, two more thread wakeups and messages per login on
// a machine whose cores the hashes already fill (bench/README.md, "Where time goes"). Only a bcrypt verify,
// which is pure JS and holds its thread for the whole check, goes to a piscina thread.
// piscina 5.3.2 with one thread and a full queue was seen to leave a task waiting for seconds; with two or
// more the queue was fair, hence the config's minimum default of 2. Admission (the bound, dropping the
// hashes of requests that gave up) is src/server/crypto/admission.ts.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config/types.js';
import { apiError } from '../errors.js';
import { createCryptoQueue, expectedTaskMs, CryptoBusyError, CryptoCancelledError, type CryptoQueueStats } from './admission.js';
import { blocksItsThread, hashPassword, verifyPassword, type HashParams, type VerifyResult } from '../../workers/crypto.js';
import { startChildSpan } from '../observability/request-spans.js';

export interface PasswordHasher {
  /** A new argon2id PHC string with the configured parameters. `signal`: drop it if it is still queued. */
  hash(password: string, signal?: AbortSignal): Promise<string>;
  /** hash null = unknown user or no password: same work, ok false. needsRehash: store hash(password). */
  verify(hash: string | null, password: string, signal?: AbortSignal): Promise<VerifyResult>;
  /**
   * Whether a hash submitted now would be refused (over_capacity): a request with other work to do before
   * its hash (the password grant's lookup) refuses first, so a login flood costs the database nothing.
   */
  busy(): boolean;
}

export interface CryptoPoolHost {
  /** A port for one HTTP thread: pass it in workerData and in the Worker's transferList. */
  connect(): MessagePort;
  /** Direct use from the main thread (tests, bench), without a port. */
  local(): PasswordHasher;
  /** The admission queue's counters (tests, bench). */
  stats(): CryptoQueueStats;
  close(): Promise<void>;
}

type TaskName = 'hashPassword' | 'verifyPassword';
const TASKS: ReadonlySet<string> = new Set<TaskName>(['hashPassword', 'verifyPassword']);
/** The same task functions piscina runs, for the tasks started on this thread's event loop. */
const INLINE: Record<TaskName, (arg: never) => Promise<unknown>> = { hashPassword, verifyPassword };

type Request = { id: number; task: TaskName; arg: unknown } | { id: number; cancel: true };
type Refusal = 'busy' | 'cancelled';
type Reply = { id: number; result: unknown } | { id: number; error: string; refused?: Refusal };
/** The first message on every port: the flag the host keeps at 1 while its queue is full (PasswordHasher.busy). */
type Fullness = { fullness: SharedArrayBuffer };
type Run = (task: TaskName, arg: unknown, signal?: AbortSignal) => Promise<unknown>;

export type CryptoPoolParams = Config['password']['hash'] | (HashParams & { maxQueue?: number });

export interface CryptoPoolOptions {
  threads: number;
  params: CryptoPoolParams;
  /** Node's options for each thread; left out, the process's own (service.ts, StartOptions) */
  execArgv?: string[];
}

export function createCryptoPool({ threads, params, execArgv }: CryptoPoolOptions): CryptoPoolHost {
  if (!Number.isInteger(threads) || threads < 1) throw new TypeError(`createCryptoPool: threads must be >= 1, got ${threads}`);
  const pool = new Piscina({
    filename: new URL('../../workers/crypto.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    concurrentTasksPerWorker: 1,
    execArgv,
  });
  // Piscina's own queue stays empty: this one admits at most `threads` tasks to it at a time.
  // Whether it is full is kept in shared memory, which every HTTP thread reads without a message.
  const fullness = new Int32Array(new SharedArrayBuffer(4));
  const queue = createCryptoQueue(threads, params.maxQueue ?? 0, expectedTaskMs(params), () =>
    Atomics.store(fullness, 0, queue.full() ? 1 : 0),
  );
  const ports = new Set<MessagePort>();
  const start = (task: TaskName, arg: unknown): Promise<unknown> =>
    blocksItsThread(task, arg as { hash?: string | null })
      ? (pool.run(arg, { name: task }) as Promise<unknown>)
      : Promise.resolve().then(() => INLINE[task](arg as never));
  const submit = (task: TaskName, arg: unknown) => queue.submit(() => start(task, arg));

  const serve = (port: MessagePort, waiting: Map<number, () => void>, request: Request) => {
    const { id } = request;
    const reply = (message: Reply) => {
      if (ports.has(port)) port.postMessage(message);
    };
    if ('cancel' in request) return waiting.get(id)?.();
    if (!TASKS.has(request.task)) return reply({ id, error: `unknown crypto task ${String(request.task)}` });
    const { result, cancel } = submit(request.task, request.arg);
    waiting.set(id, cancel);
    result
      .then(
        (value: unknown) => reply({ id, result: value }),
        (error: unknown) => reply({ id, error: error instanceof Error ? error.message : String(error), refused: refusalOf(error) }),
      )
      .finally(() => waiting.delete(id));
  };

  const local: Run = (task, arg, signal) => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { result, cancel } = submit(task, arg);
    signal?.addEventListener('abort', cancel, { once: true });
    return result
      .catch((error: unknown) => {
        throw refusalOf(error) === 'cancelled' && signal ? signal.reason : error;
      })
      .finally(() => signal?.removeEventListener('abort', cancel));
  };

  return {
    connect() {
      const { port1, port2 } = new MessageChannel();
      const waiting = new Map<number, () => void>();
      ports.add(port1);
      port1.on('message', (request: Request) => serve(port1, waiting, request));
      port1.on('close', () => {
        ports.delete(port1);
        for (const cancel of waiting.values()) cancel();
      });
      port1.unref(); // the host's life is ended by close(), not by idle ports
      port1.postMessage({ fullness: fullness.buffer } satisfies Fullness);
      return port2;
    },
    local: () => hasher(local, params, () => queue.full()),
    stats: () => queue.stats(),
    async close() {
      for (const port of ports) port.close();
      ports.clear();
      await pool.close();
    },
  };
}

function refusalOf(error: unknown): Refusal | undefined {
  if (error instanceof CryptoBusyError) return 'busy';
  if (error instanceof CryptoCancelledError) return 'cancelled';
  return undefined;
}

/** The HTTP-thread end: requests go out over `port`, replies are matched by id. */
export function connectCryptoPool(port: MessagePort, params: HashParams): PasswordHasher {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let closed = false;
  let fullness: Int32Array | null = null; // until the host's first message: never busy

  const settle = (id: number) => {
    const call = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) port.unref();
    return call;
  };
  port.on('message', (reply: Reply | Fullness) => {
    if ('fullness' in reply) return void (fullness = new Int32Array(reply.fullness));
    const call = settle(reply.id);
    if (!call) return;
    if (!('error' in reply)) return call.resolve(reply.result);
    call.reject(reply.refused === 'busy' ? new CryptoBusyError(reply.error) : new Error(`crypto pool: ${reply.error}`));
  });
  port.on('close', () => {
    closed = true;
    for (const call of pending.values()) call.reject(new Error('crypto pool: port closed'));
    pending.clear();
  });
  // Referenced only while a call is in flight: an idle port must not keep the thread alive, but a thread
  // awaiting a verify must not exit before the answer arrives.
  port.unref();

  const remote: Run = (task, arg, signal) =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('crypto pool: port closed'));
      if (signal?.aborted) return reject(signal.reason);
      const id = nextId++;
      // A request past its deadline stops waiting at once and asks the host to drop the task if it is queued.
      const abandon = () => {
        if (!settle(id)) return;
        port.postMessage({ id, cancel: true } satisfies Request);
        reject(signal!.reason);
      };
      pending.set(id, {
        resolve: (value) => {
          signal?.removeEventListener('abort', abandon);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', abandon);
          reject(error);
        },
      });
      signal?.addEventListener('abort', abandon, { once: true });
      if (pending.size === 1) port.ref();
      port.postMessage({ id, task, arg } satisfies Request);
    });
  // The wait for a crypto thread and the hash itself, as one child span of the request when tracing is on.
  const traced: Run = (task, arg, signal) => {
    const end = startChildSpan(`crypto ${task}`, { 'crypto.task': task });
    const result = remote(task, arg, signal);
    if (end)
      result.then(
        () => end(),
        (err: Error) => end(err),
      );
    return result;
  };
  return hasher(traced, params, () => fullness !== null && Atomics.load(fullness, 0) === 1);
}

function hasher(run: Run, params: HashParams, busy: () => boolean): PasswordHasher {
  const current: HashParams = { memoryKiB: params.memoryKiB, timeCost: params.timeCost, parallelism: params.parallelism };
  // A full queue is the client's answer at once: 503 with Retry-After, before any hashing work.
  const refuseWhenBusy = (error: unknown): never => {
    throw error instanceof CryptoBusyError ? apiError('over_capacity') : error;
  };
  return {
    hash: (password, signal) => run('hashPassword', { ...current, password }, signal).catch(refuseWhenBusy) as Promise<string>,
    verify: (hash, password, signal) =>
      run('verifyPassword', { ...current, hash, password }, signal).catch(refuseWhenBusy) as Promise<VerifyResult>,
    busy,
  };
}
