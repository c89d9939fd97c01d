// The OTLP exporters for traces and metrics, chosen by OTEL_EXPORTER_OTLP_PROTOCOL (each signal may have its
// own, as in the original): `http/protobuf` (the default, the original's), `http/json`, or `grpc`. Each is
// the official OpenTelemetry package for that protocol, imported only when it is used. The collector's
// address follows the OpenTelemetry conventions (docs/observability.md#where-telemetry-goes): a signal's own
// URL as it is; else the base endpoint, under `/v1/traces` or `/v1/metrics` over HTTP and as it is over gRPC
// (gRPC names its method, not a path); else the protocol's default collector on this machine.
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Config, OtlpProtocol } from '../config/types.js';

type Signal = 'traces' | 'metrics';
type Endpoints = Pick<Config, 'tracing' | 'metrics'>;

const DEFAULT_COLLECTOR: Record<OtlpProtocol, string> = {
  'http/protobuf': 'http://localhost:4318',
  'http/json': 'http://localhost:4318',
  grpc: 'http://localhost:4317',
};

export function otlpProtocol(config: Endpoints, signal: Signal): OtlpProtocol {
  return signal === 'traces' ? config.tracing.otlpProtocol : config.metrics.otlpProtocol;
}

/** Where a signal is sent. */
export function otlpUrl(config: Endpoints, signal: Signal): string {
  const own = signal === 'traces' ? config.tracing.otlpTracesEndpoint : config.metrics.otlpMetricsEndpoint;
  if (own) return own;
  const protocol = otlpProtocol(config, signal);
  const base = config.tracing.otlpEndpoint || DEFAULT_COLLECTOR[protocol];
  return protocol === 'grpc' ? base : `${base.replace(/\/+$/, '')}/v1/${signal}`;
}

/**
 * The span exporter. `timeoutMillis` bounds one export, retries included. Over gRPC, an `http://` URL is a
 * connection without TLS and `https://` one with it, as the exporter reads its scheme.
 */
export async function otlpSpanExporter(config: Endpoints, timeoutMillis: number): Promise<{ exporter: SpanExporter; url: string }> {
  const url = otlpUrl(config, 'traces');
  const options = { url, timeoutMillis };
  switch (otlpProtocol(config, 'traces')) {
    case 'grpc':
      return { exporter: new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter(options), url };
    case 'http/json':
      return { exporter: new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options), url };
    default:
      return { exporter: new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options), url };
  }
}

/** The metric exporter: cumulative temporality (the exporters' default), as the counters are kept. */
export async function otlpMetricExporter(config: Endpoints, timeoutMillis: number): Promise<{ exporter: PushMetricExporter; url: string }> {
  const url = otlpUrl(config, 'metrics');
  const options = { url, timeoutMillis };
  switch (otlpProtocol(config, 'metrics')) {
    case 'grpc':
      return { exporter: new (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter(options), url };
    case 'http/json':
      return { exporter: new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter(options), url };
    default:
      return { exporter: new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(options), url };
  }
}
