// Admission to the crypto pool: at most `threads` hashes run at once, a bounded number wait, and the rest
// are refused at once (docs/architecture.md#bounded-queues: every queue is bounded). A waiting hash whose request gave up (its
// deadline passed) is dropped before it runs, so a flood's abandoned requests cost no argon2 time.
//
// The bound is measured capacity, not a guess: with maxQueue 0 (the default) it is what the threads
// finish within QUEUE_BUDGET_MS at the hash time seen so far (a moving average of recent tasks, so it
// follows the argon2 cost and the machine's load). Half a second of waiting keeps an accepted login well
// inside two seconds on a loaded machine, and is still enough queue that the threads never run dry
// between arrivals (bench/README.md, overload); anything more would only turn into slow logins or a 504.

export const QUEUE_BUDGET_MS = 500;
/**
 * The starting estimate, until hashes have been timed: argon2id's time grows with memory × passes, from
 * the default cost's time on one core (bench/README.md).
 */
export function expectedTaskMs(params: { memoryKiB: number; timeCost: number }): number {
  return Math.max(0.5, (25 * (params.memoryKiB * params.timeCost)) / (19456 * 2));
}
const AVERAGE_WEIGHT = 0.1;

export class CryptoBusyError extends Error {
  override readonly name = 'CryptoBusyError';
}

export class CryptoCancelledError extends Error {
  override readonly name = 'CryptoCancelledError';
}

export interface CryptoQueueStats {
  running: number;
  queued: number;
  bound: number;
  completed: number;
  refused: number;
  dropped: number;
  /** the moving average of one task's duration, ms */
  taskMs: number;
  /** the time every started task waited for a thread, and ran, summed since start (ms): for metrics */
  waitedMs: number;
  ranMs: number;
}

interface Waiting {
  start(): void;
  cancel(): void;
}

export interface CryptoQueue {
  /** Runs `task` when a thread is free; rejects with CryptoBusyError when the queue is full. */
  submit<T>(task: () => Promise<T>): { result: Promise<T>; cancel: () => void };
  /** Whether the next task would be refused: every thread busy and as many waiting as the bound allows. */
  full(): boolean;
  stats(): CryptoQueueStats;
}

/** `changed` is called after every task admitted, started, finished, dropped or refused. */
export function createCryptoQueue(threads: number, maxQueue = 0, initialTaskMs = 25, changed: () => void = () => {}): CryptoQueue {
  const waiting: Waiting[] = [];
  let running = 0;
  let taskMs = initialTaskMs;
  const counts = { completed: 0, refused: 0, dropped: 0, waitedMs: 0, ranMs: 0 };
  const bound = () => (maxQueue > 0 ? maxQueue : Math.max(threads, Math.floor((threads * QUEUE_BUDGET_MS) / taskMs)));

  const next = () => {
    while (running < threads && waiting.length > 0) waiting.shift()!.start();
  };

  return {
    submit<T>(task: () => Promise<T>) {
      let settle!: { resolve: (v: T) => void; reject: (e: Error) => void };
      const result = new Promise<T>((resolve, reject) => {
        settle = { resolve, reject };
      });
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      let queuedAt: number | undefined; // set only for a task that waits: one that starts at once waited 0
      const entry: Waiting = {
        start() {
          state = 'running';
          running++;
          const began = performance.now();
          if (queuedAt !== undefined) counts.waitedMs += began - queuedAt;
          task()
            .then(settle.resolve, settle.reject)
            .finally(() => {
              const ran = performance.now() - began;
              counts.ranMs += ran;
              taskMs += AVERAGE_WEIGHT * (ran - taskMs);
              running--;
              counts.completed++;
              state = 'done';
              next();
              changed();
            });
        },
        cancel() {
          const at = waiting.indexOf(entry);
          if (at < 0) return;
          waiting.splice(at, 1);
          counts.dropped++;
          state = 'done';
          settle.reject(new CryptoCancelledError('crypto pool: dropped before it ran'));
          changed();
        },
      };
      if (running < threads) entry.start();
      else if (waiting.length < bound()) {
        queuedAt = performance.now();
        waiting.push(entry);
      } else {
        counts.refused++;
        state = 'done';
        settle.reject(new CryptoBusyError('crypto pool: queue full'));
      }
      changed();
      // Only a waiting task can be dropped; one already running finishes (its thread is not interrupted).
      return {
        result,
        cancel: () => {
          if (state === 'waiting') entry.cancel();
        },
      };
    },
    full: () => running >= threads && waiting.length >= bound(),
    stats: () => ({ running, queued: waiting.length, bound: bound(), ...counts, taskMs: Math.round(taskMs * 100) / 100 }),
  };
}
