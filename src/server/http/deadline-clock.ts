// Request deadlines (API_MAX_REQUEST_DURATION) without a timer per request. Every request of a thread has
// the same long deadline (10 s by default) and almost every one finishes in milliseconds, so arming and
// clearing a setTimeout for each (plus the Promise.race around it) was work thrown away on every request
// (bench/README.md#where-time-goes). Instead each thread keeps one clock: deadlines fall into buckets of
// RESOLUTION_MS, one timer is armed for the earliest bucket, and a request that finishes only removes its
// entry from a Set. A deadline fires at most one resolution late, never early.

export interface Expiry {
  /** the bucket the entry is in (its deadline rounded up to the resolution) */
  readonly slot: number;
  readonly onExpire: () => void;
}

/** The granularity of request deadlines: small beside any deadline worth having (they are whole seconds). */
export const RESOLUTION_MS = 50;

export class DeadlineClock {
  private readonly slots = new Map<number, Set<Expiry>>();
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  /** the slot the timer is armed for */
  private armedFor = Infinity;

  constructor(
    private readonly resolutionMs = RESOLUTION_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Calls `onExpire` once `ms` have passed, unless `cancel` is called first. */
  add(ms: number, onExpire: () => void): Expiry {
    const slot = Math.ceil((this.now() + ms) / this.resolutionMs);
    const entry: Expiry = { slot, onExpire };
    let set = this.slots.get(slot);
    if (!set) this.slots.set(slot, (set = new Set()));
    set.add(entry);
    // Keeps the thread alive while a deadline is pending, as the timer per request did; not after.
    if (this.pending++ === 0) this.timer?.ref();
    if (slot < this.armedFor) this.arm(slot);
    return entry;
  }

  /** The work finished first: its deadline will not fire. Calling it twice, or after the expiry, is harmless. */
  cancel(entry: Expiry): void {
    const set = this.slots.get(entry.slot);
    if (!set?.delete(entry)) return;
    if (set.size === 0) this.slots.delete(entry.slot);
    // The armed timer is left alone (re-arming costs more than a tick that finds nothing to do).
    if (--this.pending === 0) this.timer?.unref();
  }

  /** Deadlines not yet fired nor cancelled (tests). */
  get size(): number {
    return this.pending;
  }

  private arm(slot: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = slot;
    this.timer = setTimeout(() => this.tick(), Math.max(0, slot * this.resolutionMs - this.now()));
    if (this.pending === 0) this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const due = Math.floor(this.now() / this.resolutionMs);
    let next = Infinity;
    for (const [slot, set] of this.slots) {
      if (slot > due) {
        if (slot < next) next = slot;
        continue;
      }
      this.slots.delete(slot);
      this.pending -= set.size;
      for (const entry of set) {
        try {
          entry.onExpire();
        } catch {
          /* an expiry's own failure must not keep the others from firing */
        }
      }
    }
    if (next !== Infinity) this.arm(next);
  }
}

/** The clock of this thread's requests (module state is per thread: each worker has its own). */
export const requestDeadlines = new DeadlineClock();
