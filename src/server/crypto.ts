// The password-hashing facade. One piscina pool of AUTH_CRYPTO_WORKERS threads lives in the main thread;
// each HTTP thread reaches it through a MessagePort (DESIGN §2).
//
// Why a pool at all, when argon2's async API already runs on libuv's threadpool? Not for speed: it bounds
// concurrency. libuv's pool is process-wide and shared with fs, DNS and scrypt, so an unbounded flood of
// password logins would queue everything else behind ~20-25 ms hashes (argon2id m=19456 KiB, t=2). With
// concurrentTasksPerWorker 1, at most N hashes run at once and the rest wait in piscina's queue, while
// HTTP threads keep answering refresh grants and /health. The hashes themselves still run on libuv's
// pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), so the launcher must size it above N.
// The detour is cheap (bench/crypto-choices.mjs, 2 vCPUs): a no-op piscina round trip ~0.03 ms; a
// trivial verify through this facade ~0.18 ms, the same over a MessagePort as locally; pooled argon2id
// verifies ran at 98-99% of direct calls on one thread. That is under 1% of a ~20 ms verify.
// piscina 5.3.2 with one thread and a full queue was seen to leave a task waiting for seconds; with two or
// more the queue was fair, hence the config's minimum default of 2.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from './config-types.js';
import type { HashParams, VerifyResult } from '../workers/crypto.js';

export interface PasswordHasher {
  /** A new argon2id PHC string with the configured parameters. */
  hash(password: string): Promise<string>;
  /** hash null = unknown user or no password: same work, ok false. needsRehash: store hash(password). */
  verify(hash: string | null, password: string): Promise<VerifyResult>;
}

export interface CryptoPoolHost {
  /** A port for one HTTP thread: pass it in workerData and in the Worker's transferList. */
  connect(): MessagePort;
  /** Direct use from the main thread (tests, bench), without a port. */
  local(): PasswordHasher;
  close(): Promise<void>;
}

type TaskName = 'hashPassword' | 'verifyPassword';
const TASKS: ReadonlySet<string> = new Set<TaskName>(['hashPassword', 'verifyPassword']);

interface Request { id: number; task: TaskName; arg: unknown }
type Reply = { id: number; result: unknown } | { id: number; error: string };

export function createCryptoPool({ threads, params }: { threads: number; params: Config['password']['hash'] }): CryptoPoolHost {
  if (!Number.isInteger(threads) || threads < 1) throw new TypeError(`createCryptoPool: threads must be >= 1, got ${threads}`);
  // TODO(v1): a bounded maxQueue with a 503 when full; today the queue grows with the login flood.
  const pool = new Piscina({
    filename: new URL('../workers/crypto.js', import.meta.url).href,
    minThreads: threads, maxThreads: threads, concurrentTasksPerWorker: 1,
  });
  const ports = new Set<MessagePort>();

  const serve = (port: MessagePort, { id, task, arg }: Request) => {
    const reply = (message: Reply) => { if (ports.has(port)) port.postMessage(message); };
    if (!TASKS.has(task)) return reply({ id, error: `unknown crypto task ${String(task)}` });
    pool.run(arg, { name: task }).then(
      (result: unknown) => reply({ id, result }),
      (error: unknown) => reply({ id, error: error instanceof Error ? error.message : String(error) }),
    );
  };

  return {
    connect() {
      const { port1, port2 } = new MessageChannel();
      ports.add(port1);
      port1.on('message', (request: Request) => serve(port1, request));
      port1.on('close', () => ports.delete(port1));
      port1.unref(); // the host's life is ended by close(), not by idle ports
      return port2;
    },
    local: () => hasher((task, arg) => pool.run(arg, { name: task }), params),
    async close() {
      for (const port of ports) port.close();
      ports.clear();
      await pool.close();
    },
  };
}

/** The HTTP-thread end: requests go out over `port`, replies are matched by id. */
export function connectCryptoPool(port: MessagePort, params: Config['password']['hash']): PasswordHasher {
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let closed = false;

  port.on('message', (reply: Reply) => {
    const call = pending.get(reply.id);
    if (!call) return;
    pending.delete(reply.id);
    if (pending.size === 0) port.unref();
    if ('error' in reply) call.reject(new Error(`crypto pool: ${reply.error}`));
    else call.resolve(reply.result);
  });
  port.on('close', () => {
    closed = true;
    for (const call of pending.values()) call.reject(new Error('crypto pool: port closed'));
    pending.clear();
  });
  // Referenced only while a call is in flight: an idle port must not keep the thread alive, but a thread
  // awaiting a verify must not exit before the answer arrives.
  port.unref();

  return hasher((task, arg) => new Promise((resolve, reject) => {
    if (closed) return reject(new Error('crypto pool: port closed'));
    const id = nextId++;
    pending.set(id, { resolve, reject });
    if (pending.size === 1) port.ref();
    port.postMessage({ id, task, arg } satisfies Request);
  }), params);
}

function hasher(run: (task: TaskName, arg: unknown) => Promise<unknown>, params: HashParams): PasswordHasher {
  const current: HashParams = { memoryKiB: params.memoryKiB, timeCost: params.timeCost, parallelism: params.parallelism };
  return {
    hash: (password) => run('hashPassword', { ...current, password }) as Promise<string>,
    verify: (hash, password) => run('verifyPassword', { ...current, hash, password }) as Promise<VerifyResult>,
  };
}
