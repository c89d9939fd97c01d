// The pool advisor (DB_ADVISOR_*, docs/observability.md#pool-advice): it watches how long and how often
// callers queue for a pooled connection and, when they queue a lot for a third of an observation window,
// advises a larger pool in a log line, at most once an hour. The original's rule, on one HTTP thread's pool:
// each sample is one sampling interval; a sample is "long" when the waits that ended in it add up to the
// interval or more, and "crowded" when more than two callers started to queue in it.

export interface Advice {
  /** samples of the window whose ended waits add up to a whole interval or more */
  longWaitDurationSamples: number;
  /** samples of the window in which more than two callers queued (counted only when the first rule did not advise) */
  over2WaitingSamples: number;
}

export interface PoolAdvisorOptions {
  samplingMs: number;
  /** the window the samples cover; it also passes unwatched after start, when pools are still filling */
  observationMs: number;
  advise: (advice: Advice) => void;
}

export interface PoolAdvisor {
  /** a caller queues for a connection: counted now; its wait (whether it got one or gave up) when it ends */
  queued: () => (seconds: number) => void;
  stop: () => void;
}

const ADVICE_INTERVAL_MS = 3_600_000;
/** a window's samples are two arrays of this many numbers at most, whatever the intervals given */
const MOST_SAMPLES = 100_000;

export function startPoolAdvisor(options: PoolAdvisorOptions): PoolAdvisor {
  const judge = createSampleJudge(options.samplingMs, options.observationMs);
  let waitedMs = 0;
  let waits = 0;
  let lastAdvised = -Infinity;
  let sampler: NodeJS.Timeout | undefined;
  const sample = () => {
    const advice = judge(waitedMs, waits);
    waitedMs = 0;
    waits = 0;
    const now = performance.now();
    if (advice && now - lastAdvised >= ADVICE_INTERVAL_MS) {
      lastAdvised = now;
      options.advise(advice);
    }
  };
  // Waits during the first window are not counted: the pool is still opening its connections.
  const warmUp = setTimeout(() => {
    waitedMs = 0;
    waits = 0;
    sampler = setInterval(sample, options.samplingMs).unref();
  }, options.observationMs).unref();
  return {
    queued() {
      waits += 1;
      return (seconds) => {
        waitedMs += seconds * 1000;
      };
    },
    stop() {
      clearTimeout(warmUp);
      clearInterval(sampler);
    },
  };
}

/**
 * The window of samples, as a function taking each interval's total wait and number of waits and saying
 * whether to advise. It judges only once the window is full; a third of it is at least one sample. A
 * window of more samples than MOST_SAMPLES is cut to its last MOST_SAMPLES. The long and crowded samples
 * are counted as samples enter and leave the window, so a judgement costs the same whatever its size.
 */
export function createSampleJudge(samplingMs: number, observationMs: number): (waitedMs: number, waits: number) => Advice | null {
  const size = Math.min(MOST_SAMPLES, Math.max(1, Math.round(observationMs / samplingMs)));
  const enough = Math.max(1, Math.floor(size / 3));
  const isLong = new Uint8Array(size);
  const isCrowded = new Uint8Array(size);
  let longWaitDurationSamples = 0;
  let crowdedSamples = 0;
  let taken = 0;
  return (waitedMs, waits) => {
    const slot = taken % size;
    const long = waitedMs >= samplingMs ? 1 : 0;
    const crowded = waits > 2 ? 1 : 0;
    longWaitDurationSamples += long - isLong[slot];
    crowdedSamples += crowded - isCrowded[slot];
    isLong[slot] = long;
    isCrowded[slot] = crowded;
    taken = (taken + 1) % (size * 2) || size; // stays ≥ size once the window is full, without growing
    if (taken < size) return null;
    if (longWaitDurationSamples >= enough) return { longWaitDurationSamples, over2WaitingSamples: 0 };
    return crowdedSamples >= enough ? { longWaitDurationSamples, over2WaitingSamples: crowdedSamples } : null;
  };
}
