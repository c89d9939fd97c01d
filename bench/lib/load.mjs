// One autocannon run with a progress line, summarised as the bench reports it. Latencies are taken from
// every response's own timing (autocannon's histogram keeps whole milliseconds, too coarse for /settings).
import autocannon from 'autocannon';

/** How many times its duration a phase may grow to when it has answered nothing worth measuring. */
const MAX_STRETCH = 8;

/**
 * Runs autocannon against `url` for `duration` seconds. `perConnection(i)` may return the requests of
 * connection i (closures keep per-connection state, e.g. the refresh token chain of one session).
 * A run after which `enough(row)` is false (by default: not one request answered) measured nothing: on a
 * machine too busy to answer within the phase (a loaded CI box, bench.test's one-second phases), it runs
 * again for twice as long, up to MAX_STRETCH times the duration, and the last run is the result.
 */
export async function load({ enough = (row) => row.requests > 0, ...options }) {
  for (let duration = options.duration; ; duration *= 2) {
    const row = await loadOnce({ ...options, duration });
    if (enough(row) || duration * 2 > options.duration * MAX_STRETCH) return row;
  }
}

async function loadOnce({ title, url, duration, connections, requests, perConnection, overallRate, progress }) {
  let index = 0;
  const setupClient = perConnection ? (client) => client.setRequests(perConnection(index++)) : undefined;
  const instance = autocannon({ url, duration, connections, requests, setupClient, overallRate, timeout: 10 });
  const latencies = [];
  const statuses = {};
  const byStatus = {};
  instance.on('response', (_client, status, _bytes, ms) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
    (byStatus[status] ??= []).push(ms);
  });
  const stopProgress = showProgress(title, duration, latencies, statuses, progress);
  const result = await new Promise((resolve, reject) => {
    instance.once('done', resolve);
    instance.once('error', reject);
  });
  stopProgress();
  const row = summarise([{ latencies, statuses, seconds: result.duration, errors: result.errors, timeouts: result.timeouts }]);
  // Latency per status (the overload scenario tells accepted answers from refusals), not enumerable like raw.
  const perStatus = Object.fromEntries(
    Object.entries(byStatus).map(([status, ms]) => {
      const sorted = Float64Array.from(ms).sort();
      return [status, { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }];
    }),
  );
  return Object.defineProperty(row, 'byStatus', { value: perStatus, enumerable: false });
}

/**
 * One row from one or more runs of the same load (the slices of an interleaved measurement). The raw
 * latencies stay on the row, not enumerable, so slices can be merged and the JSON stays small.
 */
export function summarise(parts) {
  const latencies = parts.flatMap((p) => p.latencies);
  const sorted = Float64Array.from(latencies).sort();
  const seconds = parts.reduce((sum, p) => sum + p.seconds, 0);
  const statuses = {};
  for (const p of parts) for (const [status, count] of Object.entries(p.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  const non2xx = Object.entries(statuses)
    .filter(([s]) => s < 200 || s >= 300)
    .reduce((n, [, c]) => n + c, 0);
  const row = {
    requests: sorted.length,
    reqPerSec: round(sorted.length / seconds),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    statuses,
    non2xx,
    errors: parts.reduce((n, p) => n + p.errors, 0),
    timeouts: parts.reduce((n, p) => n + p.timeouts, 0),
    seconds: round(seconds),
  };
  return Object.defineProperty(row, 'raw', { value: parts, enumerable: false });
}

/** Merges rows returned by load() into one, as if they had been one run. */
export const mergeLoads = (rows) => summarise(rows.flatMap((r) => r.raw));

export function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)], 3);
}

export const round = (x, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * How long a side runs the measured requests, discarded, before it is measured (the service, its SQL
 * limit, the peer): long enough for V8 to compile the endpoint, at most a second and half a slice.
 */
export const warmupSeconds = (sliceSeconds) => Math.min(1, sliceSeconds / 2);

/** On a terminal, a line rewritten twice a second: elapsed time, requests, rate, non-2xx so far. */
export function showProgress(title, duration, latencies, statuses, enabled) {
  if (!enabled) return () => {};
  const started = performance.now();
  const draw = () => {
    const elapsed = (performance.now() - started) / 1000;
    const bad = Object.entries(statuses)
      .filter(([s]) => s < 200 || s >= 300)
      .reduce((n, [, c]) => n + c, 0);
    process.stderr.write(
      `\r\x1b[2K  ${title.padEnd(34)} ${Math.min(elapsed, duration).toFixed(1)}/${duration} s  ` +
        `${latencies.length} req  ${Math.round(latencies.length / Math.max(elapsed, 0.001))} req/s${bad ? `  non-2xx ${bad}` : ''}`,
    );
  };
  const timer = setInterval(draw, 500);
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[2K');
  };
}

/** A progress line for work that is not an autocannon run (limits, seeding): counts a shared counter. */
export function progressFor(title, duration, counter, enabled) {
  if (!enabled) return () => {};
  const started = performance.now();
  const timer = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    process.stderr.write(`\r\x1b[2K  ${title.padEnd(34)} ${Math.min(elapsed, duration).toFixed(1)}/${duration} s  ${counter()} done`);
  }, 500);
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[2K');
  };
}
