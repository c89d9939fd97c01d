// The OpenTelemetry metrics exporter (METRICS_EXPORTER=opentelemetry): the same metrics the Prometheus
// exporter serves, pushed every OTEL_METRIC_EXPORT_INTERVAL ms over OTLP (HTTP or gRPC, otlp-exporters.ts)
// with the official SDK (@opentelemetry/sdk-metrics' periodic reader and the protocol's exporter). The
// metrics live in prom-client registries (one per HTTP thread, aggregated by the supervisor), so they are
// handed to the SDK as a MetricProducer that converts each collection: counters become cumulative
// monotonic sums (named without `_total`, which Prometheus-bound collectors add back), gauges stay
// gauges, histograms keep their buckets; counters and histograms go as deltas since the previous push
// where OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE asks for them (otlp-temporality.ts).
// Nothing is counted twice and nothing costs a request more.
// A collector that is down is logged once (and its recovery once); a stop waits at most about a second.
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { VERSION } from '../version.js';
import { parseAttributes } from './tracing.js';
import { otlpMetricExporter } from './otlp-exporters.js';
import { pushedTemporality, temporalityPreference } from './otlp-temporality.js';
import { labelName, SERVER_METRIC_KEYS } from './http-semconv.js';
import type { MetricsJson, MetricsSource } from './metrics-exporter.js';
import { settledWithin } from '../settled-within.js';

export interface OtlpMetrics {
  close(): Promise<void>;
}

type Sdk = typeof import('@opentelemetry/sdk-metrics');
type MetricData = import('@opentelemetry/sdk-metrics').MetricData;
type HrTime = [number, number];

const EXPORT_TIMEOUT_MS = 1000;
const SHUTDOWN_TIMEOUT_MS = 1500;

export async function startOtlpMetrics(
  config: Pick<Config, 'metrics' | 'tracing' | 'otlp' | 'otelResourceAttributes'>,
  source: MetricsSource,
  log: Logger,
): Promise<OtlpMetrics> {
  const preference = temporalityPreference(config.metrics.temporalityPreference, log);
  const [sdk, { exporter, url, timeoutMillis }, { resourceFromAttributes }, { ValueType }] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    otlpMetricExporter(config, preference, EXPORT_TIMEOUT_MS),
    import('@opentelemetry/resources'),
    import('@opentelemetry/api'),
  ]);
  const resource = resourceFromAttributes({
    'service.name': config.tracing.serviceName,
    'auth.version': VERSION,
    ...parseAttributes(config.otelResourceAttributes),
  });
  const started = hrTime(Date.now());
  const temporality = pushedTemporality(sdk, preference, source.observedCounters ?? new Set(), started);
  const producer = {
    async collect() {
      const registry = await source();
      const now = hrTime(Date.now());
      const metrics = convert(sdk, ValueType.DOUBLE, await registry.getMetricsAsJSON(), started, now, temporality.pushed);
      temporality.collected(now);
      return { resourceMetrics: { resource, scopeMetrics: [{ scope: { name: 'portcullis', version: VERSION }, metrics }] }, errors: [] };
    },
  };
  let failing = false;
  const reporting: typeof exporter = Object.assign(Object.create(exporter) as typeof exporter, {
    export: (metrics: Parameters<typeof exporter.export>[0], done: Parameters<typeof exporter.export>[1]) =>
      exporter.export(metrics, (result) => {
        const ok = (result.code as number) === 0; // ExportResultCode.SUCCESS
        if (!ok && !failing) log.warn({ err: result.error, url }, 'metrics export failed; retrying at the next interval');
        if (ok && failing) log.info({ url }, 'metrics export recovered');
        failing = !ok;
        done(result);
      }),
  });
  const reader = new sdk.PeriodicExportingMetricReader({
    exporter: reporting,
    exportIntervalMillis: config.metrics.exportIntervalMs,
    exportTimeoutMillis: Math.min(config.metrics.exportIntervalMs, timeoutMillis * 2),
    metricProducers: [producer],
  });
  const provider = new sdk.MeterProvider({ resource, readers: [reader] });
  log.info(
    { url, protocol: config.metrics.otlpProtocol, intervalMs: config.metrics.exportIntervalMs, temporality: preference },
    'OTLP metrics exporter started',
  );
  return {
    // The last values are pushed on the way out, bounded like every other wait of a stop.
    close: () => settledWithin(provider.shutdown(), SHUTDOWN_TIMEOUT_MS, undefined),
  };
}

/**
 * The original's instruments whose OTLP name, unit or attribute keys differ from the Prometheus names they
 * are kept under here: pushed as the original pushes them, so an OTLP backend sees the same series (a
 * collector that exports to Prometheus turns them back into the same names).
 */
const ORIGINAL_INSTRUMENTS: Record<string, { name: string; unit?: string; dotted?: boolean }> = {
  http_status_codes_total: { name: 'http_status_codes', dotted: true },
  http_server_request_duration_seconds: { name: 'http.server.request.duration', unit: 's', dotted: true },
  // Named with their suffix in the original's code, so pushed with it.
  global_auth_email_send_operations_total: { name: 'global_auth_email_send_operations_total' },
  global_auth_email_send_errors_total: { name: 'global_auth_email_send_errors_total' },
};

/** The conventions' dotted attribute keys behind the Prometheus label names of the original's request metrics. */
const dottedKeys = (labels: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(labels).map(([key, value]) => [DOTTED[key] ?? key, value]));
const DOTTED: Record<string, string> = Object.fromEntries(SERVER_METRIC_KEYS.map((key) => [labelName(key), key]));

/** `temporal` sees each counter and histogram (by its Prometheus name), cumulative, and gives what is pushed of it. */
function convert(
  sdk: Sdk,
  valueType: number,
  families: MetricsJson,
  startTime: HrTime,
  endTime: HrTime,
  temporal: (family: string, metric: MetricData) => MetricData | undefined,
): MetricData[] {
  const out: MetricData[] = [];
  const push = (metric: MetricData | undefined) => metric && out.push(metric);
  const cumulative = sdk.AggregationTemporality.CUMULATIVE;
  for (const family of families) {
    const type = family.type as unknown as string; // prom-client's JSON holds the type's name
    const original = ORIGINAL_INSTRUMENTS[family.name];
    const name = original?.name ?? (type === 'counter' ? family.name.replace(/_total$/, '') : family.name);
    const descriptor = { name, description: family.help, unit: original?.unit ?? '', valueType };
    const keys = original?.dotted ? dottedKeys : (labels: Record<string, string | number>) => labels;
    const point = (attributes: Record<string, string | number>, value: number) => ({
      startTime,
      endTime,
      attributes: keys(attributes),
      value,
    });
    if (type === 'counter') {
      push(
        temporal(family.name, {
          descriptor,
          aggregationTemporality: cumulative,
          dataPointType: sdk.DataPointType.SUM,
          isMonotonic: true,
          dataPoints: family.values.map((v) => point(v.labels as Record<string, string>, v.value)),
        }),
      );
    } else if (type === 'gauge') {
      out.push({
        descriptor,
        aggregationTemporality: cumulative,
        dataPointType: sdk.DataPointType.GAUGE,
        dataPoints: family.values.map((v) => point(v.labels as Record<string, string>, v.value)),
      });
    } else if (type === 'histogram') {
      push(
        temporal(family.name, {
          descriptor,
          aggregationTemporality: cumulative,
          dataPointType: sdk.DataPointType.HISTOGRAM,
          dataPoints: histogramPoints(family).map(({ attributes, value }) => ({ startTime, endTime, attributes: keys(attributes), value })),
        }),
      );
    }
  }
  return out;
}

/** prom-client's histogram samples (cumulative `_bucket`s by `le`, `_sum`, `_count`) as OTel histograms. */
function histogramPoints(family: MetricsJson[number]) {
  const series = new Map<string, { attributes: Record<string, string>; le: Map<number, number>; sum: number; count: number }>();
  for (const v of family.values) {
    const { le, ...rest } = v.labels as Record<string, string | number>;
    const attributes = rest as Record<string, string>;
    const key = JSON.stringify(Object.entries(attributes).sort());
    let s = series.get(key);
    if (!s) series.set(key, (s = { attributes, le: new Map(), sum: 0, count: 0 }));
    const name = (v as { metricName?: string }).metricName ?? '';
    if (name.endsWith('_bucket')) s.le.set(le === '+Inf' ? Infinity : Number(le), v.value);
    else if (name.endsWith('_sum')) s.sum = v.value;
    else if (name.endsWith('_count')) s.count = v.value;
  }
  return [...series.values()].map((s) => {
    const bounds = [...s.le.keys()].sort((a, b) => a - b);
    const boundaries = bounds.filter((b) => Number.isFinite(b));
    let below = 0;
    const counts = boundaries.map((b) => {
      const cumulative = s.le.get(b)!;
      const inBucket = cumulative - below;
      below = cumulative;
      return inBucket;
    });
    counts.push(s.count - below);
    return { attributes: s.attributes, value: { buckets: { boundaries, counts }, sum: s.sum, count: s.count } };
  });
}

function hrTime(ms: number): HrTime {
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}
