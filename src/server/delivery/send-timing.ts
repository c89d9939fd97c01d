// Known and unknown addresses answer after the same time: a request that sent a mail or SMS records how
// long it took from its start, and one of the same kind that had nothing to send (an unknown address, a
// confirmed one, no pending change) waits out the median of the recent ones before it answers
// (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts). Per HTTP thread, in memory.
import { setTimeout as sleep } from 'node:timers/promises';

/** Where a request's timing starts, and which endpoint's sends it is compared with. */
export interface SendTimingKey {
  kind: string;
  /** performance.now() when the handler began */
  startedAt: number;
}

export interface SendTiming {
  /** A request of this kind sent something: its duration joins the recent ones. */
  sent(key: SendTimingKey): void;
  /** A request of this kind sent nothing: resolves once it has taken as long as its sends usually do. */
  nothingSent(key: SendTimingKey, signal?: AbortSignal): Promise<void>;
}

/** Enough recent sends for a steady median, few enough to follow a mail relay that slows down. */
const WINDOW = 31;

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  // A request cancelled meanwhile (its deadline) is answered by the HTTP layer; the wait just ends.
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined),
};

export function createSendTiming(clock: Clock = REAL_CLOCK): SendTiming {
  const recent = new Map<string, number[]>();
  return {
    sent({ kind, startedAt }) {
      const samples = recent.get(kind) ?? [];
      samples.push(clock.now() - startedAt);
      if (samples.length > WINDOW) samples.shift();
      recent.set(kind, samples);
    },
    async nothingSent({ kind, startedAt }, signal) {
      const samples = recent.get(kind);
      if (!samples?.length) return;
      const wait = median(samples) - (clock.now() - startedAt);
      if (wait > 0) await clock.sleep(wait, signal);
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
