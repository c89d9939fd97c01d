// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE for the pushed metrics (docs/observability.md#metrics).
// prom-client keeps every counter and histogram as running totals, so a delta is worked out here: each
// collection's totals are kept, and the next one pushes what was added since, starting at the time of the
// previous collection, as the SDK's delta aggregation reports it. Which instruments go delta follows the
// original's exporters: `delta` for counters (observed ones too) and histograms, `lowmemory` for the
// counters incremented as things happen and histograms only; up-down counters and gauges stay as they are.
import type { Logger } from 'pino';
import type { HistogramMetricData, MetricData, SumMetricData } from '@opentelemetry/sdk-metrics';

type Sdk = typeof import('@opentelemetry/sdk-metrics');
type HrTime = [number, number];

export type TemporalityPreference = 'cumulative' | 'delta' | 'lowmemory';

/**
 * The preference as the original's exporters read it: in any case, surrounding spaces ignored; empty is the
 * default; another value is named and ignored (cumulative).
 */
export function temporalityPreference(text: string, log?: Logger): TemporalityPreference {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'cumulative') return 'cumulative';
  if (value === 'delta' || value === 'lowmemory') return value;
  log?.warn(
    { value: text },
    'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE is none of cumulative, delta, lowmemory; pushing cumulative',
  );
  return 'cumulative';
}

/**
 * What is pushed of each collection's counters and histograms: `pushed` takes one, cumulative, by its Prometheus
 * name (`observedCounters`: those read from a running total when collected), and gives it with the temporality
 * the preference asks for, or nothing when a delta has nothing to report (as the SDK leaves such an instrument
 * out); `collected` closes each collection.
 */
export function pushedTemporality(sdk: Sdk, preference: TemporalityPreference, observedCounters: ReadonlySet<string>, started: HrTime) {
  const deltas = deltaConverter(sdk, started);
  return {
    pushed: (family: string, metric: MetricData): MetricData | undefined => {
      const observed = metric.dataPointType === sdk.DataPointType.SUM && observedCounters.has(family);
      if (preference === 'cumulative' || (preference === 'lowmemory' && observed)) return metric;
      const delta =
        metric.dataPointType === sdk.DataPointType.HISTOGRAM
          ? deltas.histogram(metric)
          : metric.dataPointType === sdk.DataPointType.SUM
            ? deltas.sum(metric, observed)
            : metric;
      return delta.dataPoints.length ? delta : undefined;
    },
    collected: (at: HrTime) => deltas.collected(at),
  };
}

type Totals = number | { count: number; sum: number; boundaries: number[]; counts: number[] };

/**
 * Turns cumulative sums and histograms into deltas, one collection after another. A series whose total went
 * down (an HTTP thread that was replaced, its counts with it) starts again: its total is the delta. A counter's
 * or histogram's series with nothing added is left out, as the SDK reports none for an instrument not used
 * since; an observed counter reports every series it observed.
 */
function deltaConverter(sdk: Sdk, started: HrTime) {
  let since = started;
  let previous = new Map<string, Totals>();
  let current = new Map<string, Totals>();
  const keyOf = (metric: MetricData, attributes: object) =>
    `${metric.descriptor.name}\u0000${JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;
  return {
    sum(metric: SumMetricData, observed: boolean): SumMetricData {
      const dataPoints = metric.dataPoints.flatMap((point) => {
        const key = keyOf(metric, point.attributes);
        current.set(key, point.value);
        const before = previous.get(key);
        const added = typeof before === 'number' && before <= point.value ? point.value - before : point.value;
        return added === 0 && !observed ? [] : [{ ...point, startTime: since, value: added }];
      });
      return { ...metric, aggregationTemporality: sdk.AggregationTemporality.DELTA, dataPoints };
    },
    histogram(metric: HistogramMetricData): HistogramMetricData {
      const dataPoints = metric.dataPoints.flatMap((point) => {
        const key = keyOf(metric, point.attributes);
        const { count, sum = 0, buckets } = point.value;
        current.set(key, { count, sum, boundaries: buckets.boundaries, counts: buckets.counts });
        const before = previous.get(key);
        const continues =
          typeof before === 'object' &&
          before.count <= count &&
          before.boundaries.join() === buckets.boundaries.join() &&
          before.counts.every((n, i) => n <= buckets.counts[i]);
        if (!continues) return count === 0 ? [] : [{ ...point, startTime: since }];
        if (count === before.count) return [];
        const counts = buckets.counts.map((n, i) => n - before.counts[i]);
        return [
          {
            ...point,
            startTime: since,
            value: { ...point.value, count: count - before.count, sum: sum - before.sum, buckets: { ...buckets, counts } },
          },
        ];
      });
      return { ...metric, aggregationTemporality: sdk.AggregationTemporality.DELTA, dataPoints };
    },
    /** After each collection: its totals are what the next one is measured from, from its time. */
    collected(at: HrTime): void {
      previous = current;
      current = new Map();
      since = at;
    },
  };
}
