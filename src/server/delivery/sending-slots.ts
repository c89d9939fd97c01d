// How many sending transactions (sending-tx.ts) one HTTP thread may have open at once. Such a transaction
// keeps its pooled connection while its mail or SMS goes out, by design: a failed send rolls the flow back.
// A send is bounded by SEND_TIMEOUT, but a relay that stalls makes every one of them take that long, and
// with nothing limiting how many do so at once a burst of sign-ups or recoveries took every connection of
// the thread's pool, idle in transaction, and GET /user, refresh grants and the rest answered 503
// database_busy. So fewer than half the pool's connections (at least one) are in sending transactions. The
// same slots, a second set of them, bound the sign-in transactions that wait on a hook (sessions/issue.ts):
// with one connection of the pool kept out of both halves, a hook and a relay stalling together still leave
// a connection for everything else (a pool of three or more). A request that finds every slot taken waits
// for one holding no connection, queued and bounded like a wait for a connection
// (DB_POOL_WAITERS_PER_CONNECTION, DB_ACQUIRE_TIMEOUT), then is refused 503 database_busy with Retry-After. Its abort signal (deadline, client gone) takes it out of the queue at once.
import { apiError } from '../errors.js';

export interface SendingSlots {
  /** Waits for a slot; resolves with the function that gives it back (idempotent). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** slots in all */
  readonly size: number;
  /** slots taken: sending transactions open */
  readonly taken: number;
  /** requests waiting for a slot */
  readonly waiting: number;
}

export interface SendingSlotsOptions {
  /** the connections of the thread's pool; the slots are half of all but one of them, at least one */
  poolSize: number;
  /** requests that may wait for a slot; beyond, refused at once */
  maxWaiting: number;
  /** the longest wait for a slot, as for a connection (DB_ACQUIRE_TIMEOUT); 0 = no limit */
  timeoutMs: number;
}

interface Waiter {
  grant: () => void;
}

/** Half the pool but one connection: two such sets (sending, hooks) never take the whole pool. */
function slotsFor(poolSize: number): number {
  return Math.max(1, Math.floor((poolSize - 1) / 2));
}

export function createSendingSlots(options: SendingSlotsOptions): SendingSlots {
  const size = slotsFor(options.poolSize);
  let taken = 0;
  const queue: Waiter[] = [];

  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = queue.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
      if (next) next.grant();
      else taken--;
    };
  };

  const busy = (why: string) => apiError('database_busy').causedBy(new Error(why));

  return {
    size,
    get taken() {
      return taken;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal) {
      signal?.throwIfAborted();
      if (taken < size) {
        taken++;
        return Promise.resolve(releaser());
      }
      if (queue.length >= options.maxWaiting) {
        return Promise.reject(busy(`${queue.length} requests already wait for one of ${size} sending transaction slots`));
      }
      return new Promise((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const leave = () => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          if (timer) clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
        };
        const aborted = () => {
          leave();
          reject(signal!.reason);
        };
        const waiter: Waiter = {
          grant: () => {
            leave();
            resolve(releaser());
          },
        };
        queue.push(waiter);
        signal?.addEventListener('abort', aborted, { once: true });
        if (options.timeoutMs > 0) {
          timer = setTimeout(() => {
            leave();
            reject(busy(`no sending transaction slot (of ${size}) within ${options.timeoutMs} ms`));
          }, options.timeoutMs);
        }
      });
    },
  };
}
