// The OTLP exporters for traces and metrics, chosen by OTEL_EXPORTER_OTLP_PROTOCOL (each signal may have its
// own, as in the original): `http/protobuf` (the default, the original's), `http/json`, or `grpc`. Each is
// the official OpenTelemetry package for that protocol, imported only when it is used. The collector's
// address follows the OpenTelemetry conventions (docs/observability.md#where-telemetry-goes): a signal's own
// URL as it is; else the base endpoint, under `/v1/traces` or `/v1/metrics` over HTTP and as it is over gRPC
// (gRPC names its method, not a path); else the protocol's default collector on this machine.
// Headers, timeout and compression come from the configuration (OTEL_EXPORTER_OTLP_*, read with the other
// settings, so from a configuration file too) and are handed to the exporter, never left to it to find in
// the process environment (docs/observability.md#where-telemetry-goes).
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Metadata } from '@grpc/grpc-js';
import type { Config, OtlpProtocol } from '../config/types.js';

type Signal = 'traces' | 'metrics';
type Compression = NonNullable<
  ConstructorParameters<typeof import('@opentelemetry/exporter-trace-otlp-proto').OTLPTraceExporter>[0]
>['compression'];
type Endpoints = Pick<Config, 'tracing' | 'metrics' | 'otlp'>;

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

/** An exporter, where it sends, and how long one export may take. */
export interface Exporter<E> {
  exporter: E;
  url: string;
  timeoutMillis: number;
}

/** What a signal's exporter is given besides its URL, the signal's own setting before the general one, as the SDK reads them. */
export async function otlpOptions(config: Endpoints, signal: Signal, defaultTimeoutMillis: number) {
  const { parseKeyPairsIntoRecord } = await import('@opentelemetry/core');
  const own = config.otlp[signal];
  const all = config.otlp.all;
  const compression = own.compression || all.compression;
  return {
    // Combined, the signal's own winning for a name both set.
    headers: { ...parseKeyPairsIntoRecord(all.headers), ...parseKeyPairsIntoRecord(own.headers) },
    timeoutMillis: own.timeoutMs || all.timeoutMs || defaultTimeoutMillis,
    ...(compression ? { compression: compression as Compression } : {}),
  };
}

/** Over gRPC the headers travel as the call's metadata. */
async function grpcOptions(url: string, options: Awaited<ReturnType<typeof otlpOptions>>) {
  const { Metadata } = await import('@grpc/grpc-js');
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(options.headers)) metadata.set(name, value);
  const { headers: _, ...rest } = options;
  return { url, ...rest, metadata };
}

/** An exporter class of one of the OTLP packages, by the options this file gives it. */
type ExporterClass<E> = new (options: {
  url: string;
  timeoutMillis: number;
  compression?: Compression;
  headers?: Record<string, string>;
  metadata?: Metadata;
}) => E;

/** A signal's exporter over the configured protocol; the packages are loaded only when that protocol is used. */
async function otlpExporter<E>(
  config: Endpoints,
  signal: Signal,
  timeoutMillis: number,
  classes: Record<OtlpProtocol, () => Promise<ExporterClass<E>>>,
): Promise<Exporter<E>> {
  const url = otlpUrl(config, signal);
  const options = await otlpOptions(config, signal, timeoutMillis);
  const protocol = otlpProtocol(config, signal);
  const Class = await classes[protocol]();
  const exporter = new Class(protocol === 'grpc' ? await grpcOptions(url, options) : { url, ...options });
  return { exporter, url, timeoutMillis: options.timeoutMillis };
}

/**
 * The span exporter. `timeoutMillis` bounds one export, retries included, unless OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT
 * says otherwise. Over gRPC, an `http://` URL is a connection without TLS and `https://` one with it, as the exporter reads its scheme.
 */
export function otlpSpanExporter(config: Endpoints, timeoutMillis: number): Promise<Exporter<SpanExporter>> {
  return otlpExporter<SpanExporter>(config, 'traces', timeoutMillis, {
    grpc: async () => (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter,
    'http/json': async () => (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter,
    'http/protobuf': async () => (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter,
  });
}

/** The metric exporter: cumulative temporality (the exporters' default), as the counters are kept. */
export function otlpMetricExporter(config: Endpoints, timeoutMillis: number): Promise<Exporter<PushMetricExporter>> {
  return otlpExporter<PushMetricExporter>(config, 'metrics', timeoutMillis, {
    grpc: async () => (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter,
    'http/json': async () => (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter,
    'http/protobuf': async () => (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter,
  });
}
