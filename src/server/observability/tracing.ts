// OpenTelemetry tracing (TRACING_ENABLED): one span per request, named `api` as the original's, with the
// parametrised route in http.route, the method in http.method and each route parameter in
// http.route.param.<key> (singular, the original's name, so dashboards built on it keep working;
// docs/observability.md#tracing). Under it, one child span per database statement (`db <statement>`) and
// per crypto-pool call (`crypto <task>`) the request waited on (request-spans.ts). Spans are exported over
// OTLP (otlp-exporters.ts: HTTP or gRPC) in batches from each HTTP thread; the resource carries auth.version and OTEL_RESOURCE_ATTRIBUTES.
// A collector that is down must not cost the service: each export gives up after EXPORT_TIMEOUT_MS
// (retries included: the SDK retries within that deadline only), the first failure is logged once (and a
// recovery once), and shutdown waits at most SHUTDOWN_TIMEOUT_MS for the last batch.
// The SDK is imported only when tracing is on: it costs ~0.1 s of start-up in every HTTP thread.
import type { Tracer } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, SpanLimits } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { VERSION } from '../version.js';
import type { ChildSpan } from './request-spans.js';
import { otlpSpanExporter } from './otlp-exporters.js';
import { traceSampler } from './trace-sampler.js';
import { requestSpanAttributes, type RequestFacts } from './http-semconv.js';
import { settledWithin } from '../settled-within.js';

export interface RequestTrace extends RequestFacts {
  /** epoch milliseconds */
  start: number;
  end: number;
  /** what the request waited on, exported as child spans */
  children?: ChildSpan[];
  /** the caller's W3C trace context headers, which make the request's span a child of the caller's */
  traceparent?: string;
  tracestate?: string;
}

export interface Tracing {
  /** false when tracing is off: callers skip building the trace at all (it costs an object per request) */
  readonly enabled: boolean;
  record(trace: RequestTrace): void;
  shutdown(): Promise<void>;
}

const NO_TRACING: Tracing = { enabled: false, record() {}, shutdown: async () => {} };

/**
 * One export's whole budget, retries included, unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise: a collector
 * answers in milliseconds when it is up.
 */
const EXPORT_TIMEOUT_MS = 1000;
/** The most a stop waits for the last spans to leave. */
const SHUTDOWN_TIMEOUT_MS = 1000;

export async function createTracing(
  config: Pick<Config, 'tracing' | 'metrics' | 'otlp' | 'otelResourceAttributes'>,
  log?: Logger,
  failing: Int32Array = new Int32Array(1),
): Promise<Tracing> {
  if (!config.tracing.enabled) return NO_TRACING;
  const [api, sdk, { exporter: otlp, url, timeoutMillis }, { resourceFromAttributes }, { W3CTraceContextPropagator }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    otlpSpanExporter(config, EXPORT_TIMEOUT_MS),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const propagator = new W3CTraceContextPropagator();
  const exporter = reportingFailures(otlp, url, failing, log);
  const { scheduleDelayMs, maxQueueSize, maxExportBatchSize } = config.tracing.batch;
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.tracing.serviceName,
      'auth.version': VERSION,
      ...parseAttributes(config.otelResourceAttributes),
    }),
    // OTEL_TRACES_SAMPLER and OTEL_BSP_* as configured: the SDK would look for them in the process environment only.
    sampler: traceSampler(sdk, config.tracing, log),
    // OTEL_SPAN_*_LIMIT and OTEL_ATTRIBUTE_*_LIMIT as configured, for the same reason.
    spanLimits: spanLimits(config.tracing.limits),
    spanProcessors: [
      new sdk.BatchSpanProcessor(exporter, {
        exportTimeoutMillis: timeoutMillis,
        ...(scheduleDelayMs ? { scheduledDelayMillis: scheduleDelayMs } : {}),
        ...(maxQueueSize ? { maxQueueSize } : {}),
        ...(maxExportBatchSize ? { maxExportBatchSize } : {}),
      }),
    ],
  });
  const tracer: Tracer = provider.getTracer('portcullis', VERSION);
  return {
    enabled: true,
    record(trace) {
      const { status, start, end, children, traceparent, tracestate } = trace;
      const attributes = requestSpanAttributes(trace);
      // As the original: a caller's valid `traceparent` makes this span its child, in its trace, and its
      // sampled flag decides (the default sampler follows a parent); anything else starts a trace here.
      const caller = traceparent
        ? propagator.extract(api.ROOT_CONTEXT, { traceparent, tracestate }, api.defaultTextMapGetter)
        : api.ROOT_CONTEXT;
      const span = tracer.startSpan('api', { kind: api.SpanKind.SERVER, startTime: start, attributes }, caller);
      // As otelhttp: a server error is the span's error; a refusal of the client's request is not.
      if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
      if (children?.length) {
        const parent = api.trace.setSpan(caller, span);
        for (const child of children) {
          const kind = child.name.startsWith('db ') ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
          const c = tracer.startSpan(child.name, { kind, startTime: child.start, attributes: child.attributes }, parent);
          if (child.failed) c.setStatus({ code: api.SpanStatusCode.ERROR });
          c.end(child.end);
        }
      }
      span.end(end);
    },
    shutdown: () => settledWithin(provider.shutdown(), SHUTDOWN_TIMEOUT_MS, undefined),
  };
}

/**
 * The exporter, logging the first failure and the first success after failures: never once per batch, and
 * once per process, since `failing` is shared by every HTTP thread and only the thread whose atomic flip
 * changes it logs.
 */
export function reportingFailures(inner: SpanExporter, url: string, failing: Int32Array, log?: Logger): SpanExporter {
  return {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        const ok = (result.code as number) === 0; // ExportResultCode.SUCCESS
        if (!ok && Atomics.compareExchange(failing, 0, 0, 1) === 0)
          log?.warn({ err: result.error, url }, 'trace export failed; spans are dropped until the collector answers');
        if (ok && Atomics.compareExchange(failing, 0, 1, 0) === 1) log?.info({ url }, 'trace export recovered');
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * The limits the tracer provider is given: a span's own attribute limits before the general ones, as the SDK
 * combines them; a limit not set is left out, so the SDK's default stands.
 */
export function spanLimits(limits: Config['tracing']['limits']): SpanLimits {
  const set = (...values: number[]) => values.find((value) => value >= 0);
  const chosen: SpanLimits = {
    attributeCountLimit: set(limits.spanAttributeCount, limits.attributeCount),
    attributeValueLengthLimit: set(limits.spanAttributeValueLength, limits.attributeValueLength),
    eventCountLimit: set(limits.spanEventCount),
    linkCountLimit: set(limits.spanLinkCount),
  };
  return Object.fromEntries(Object.entries(chosen).filter(([, value]) => value !== undefined));
}

/** OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, values percent-encoded. */
export function parseAttributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}
