// OpenTelemetry tracing (TRACING_ENABLED): one span per request, named `api` as the original's, with the
// parametrised route in http.route, the method in http.method and each route parameter in
// http.route.params.<key> (the spec's name; docs/architecture.md#observability). Spans are exported over OTLP/HTTP in batches
// from each HTTP thread; the resource carries auth.version and OTEL_RESOURCE_ATTRIBUTES.
// The SDK is imported only when tracing is on: it costs ~0.1 s of start-up in every HTTP thread.
import type { Tracer } from '@opentelemetry/api';
import type { Config } from '../config/types.js';
import { VERSION } from '../version.js';

export interface RequestTrace {
  method: string;
  route: string;
  params: Record<string, string>;
  status: number;
  /** epoch milliseconds */
  start: number;
  end: number;
}

export interface Tracing {
  /** false when tracing is off: callers skip building the trace at all (it costs an object per request) */
  readonly enabled: boolean;
  record(trace: RequestTrace): void;
  shutdown(): Promise<void>;
}

const NO_TRACING: Tracing = { enabled: false, record() {}, shutdown: async () => {} };

export async function createTracing(config: Pick<Config, 'tracing' | 'otelResourceAttributes'>): Promise<Tracing> {
  if (!config.tracing.enabled) return NO_TRACING;
  const [{ SpanKind }, { BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const url = config.tracing.otlpTracesEndpoint || `${config.tracing.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.tracing.serviceName,
      'auth.version': VERSION,
      ...parseAttributes(config.otelResourceAttributes),
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracer: Tracer = provider.getTracer('portcullis', VERSION);
  return {
    enabled: true,
    record({ method, route, params, status, start, end }) {
      const attributes: Record<string, string | number> = { 'http.method': method, 'http.route': route, 'http.status_code': status };
      for (const [key, value] of Object.entries(params)) attributes[`http.route.params.${key}`] = value;
      tracer.startSpan('api', { kind: SpanKind.SERVER, startTime: start, attributes }).end(end);
    },
    shutdown: () => provider.shutdown(),
  };
}

/** OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, values percent-encoded. */
function parseAttributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}
