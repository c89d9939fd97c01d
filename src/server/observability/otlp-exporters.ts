// The OTLP exporters for traces and metrics, chosen by OTEL_EXPORTER_OTLP_PROTOCOL (each signal may have its
// own, as in the original): `http/protobuf` (the default, the original's), `http/json`, or `grpc`. Each is
// the official OpenTelemetry package for that protocol, imported only when it is used. The collector's
// address follows the OpenTelemetry conventions (docs/observability.md#where-telemetry-goes): a signal's own
// URL as it is; else the base endpoint, under `/v1/traces` or `/v1/metrics` over HTTP and as it is over gRPC
// (gRPC names its method, not a path); else the protocol's default collector on this machine.
// Headers, timeout and compression come from the configuration (OTEL_EXPORTER_OTLP_*, read with the other
// settings, so from a configuration file too) and are handed to the exporter, never left to it to find in
// the process environment (docs/observability.md#where-telemetry-goes). So are the TLS files
// (OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY), read here as the SDK
// reads them: the signal's own path before the general one, relative to the working directory, a file that
// cannot be read left out.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ChannelCredentials, Metadata } from '@grpc/grpc-js';
import type { AgentOptions } from 'node:https';
import type { Config, OtlpProtocol } from '../config/types.js';
import type { AggregationTemporalityPreference } from '@opentelemetry/exporter-metrics-otlp-http';
import type { TemporalityPreference } from './otlp-temporality.js';

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
    // The signal's own, when set, in place of the general ones (not merged with them): the original's Go
    // exporters read each variable in turn into one field, the later replacing the earlier.
    headers: parseKeyPairsIntoRecord(own.headers.trim() ? own.headers : all.headers),
    timeoutMillis: own.timeoutMs || all.timeoutMs || defaultTimeoutMillis,
    ...(compression ? { compression: compression as Compression } : {}),
  };
}

/** The TLS files of a signal: its own path for each, else the general one; undefined where none is set or readable. */
export function otlpTls(config: Endpoints, signal: Signal) {
  const own = config.otlp[signal];
  const all = config.otlp.all;
  const read = (file: string) => {
    if (!file) return undefined;
    try {
      return readFileSync(path.resolve(process.cwd(), file));
    } catch {
      return undefined; // as the SDK: the export goes on without it
    }
  };
  return {
    ca: read(own.certificate || all.certificate),
    cert: read(own.clientCertificate || all.clientCertificate),
    key: read(own.clientKey || all.clientKey),
  };
}

/**
 * Whether a signal's exports use TLS: OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]INSECURE when set (the signal's own
 * first; `true` is without TLS, any other value with it), else the URL's scheme. The original's SDK lets the
 * variable override the scheme, over HTTP and gRPC alike; this SDK reads it only for a URL without a scheme,
 * which the settings do not allow, so it is applied here.
 */
export function otlpSecure(config: Endpoints, signal: Signal, url: string): boolean {
  const insecure = (config.otlp[signal].insecure.trim() || config.otlp.all.insecure.trim()).toLowerCase();
  return insecure === '' ? url.startsWith('https://') : insecure !== 'true';
}

/** Over HTTP the TLS files are the agent's (an http:// URL never uses them); the agent keeps its connections as the SDK's does. */
function httpOptions(url: string, options: Awaited<ReturnType<typeof otlpOptions>>, tls: ReturnType<typeof otlpTls>) {
  const files = Object.fromEntries(Object.entries(tls).filter(([, value]) => value !== undefined));
  return { url, ...options, httpAgentOptions: { keepAlive: true, ...files } };
}

/**
 * Over gRPC the headers travel as the call's metadata, and the connection is plain or TLS as otlpSecure says,
 * TLS with the configured files (the client's certificate and key only as a pair, else the CA alone, as the SDK).
 */
async function grpcOptions(
  url: string,
  secure: boolean,
  options: Awaited<ReturnType<typeof otlpOptions>>,
  tls: ReturnType<typeof otlpTls>,
) {
  const { Metadata, credentials: grpc } = await import('@grpc/grpc-js');
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(options.headers)) metadata.set(name, value);
  const { headers: _, ...rest } = options;
  const pair = tls.key && tls.cert;
  const credentials = !secure ? grpc.createInsecure() : pair ? grpc.createSsl(tls.ca, tls.key, tls.cert) : grpc.createSsl(tls.ca);
  return { url, ...rest, metadata, credentials };
}

/** An exporter class of one of the OTLP packages, by the options this file gives it. */
type ExporterClass<E> = new (options: {
  url: string;
  timeoutMillis: number;
  compression?: Compression;
  headers?: Record<string, string>;
  metadata?: Metadata;
  credentials?: ChannelCredentials;
  httpAgentOptions?: AgentOptions;
  temporalityPreference?: AggregationTemporalityPreference;
}) => E;

/** A signal's exporter over the configured protocol; the packages are loaded only when that protocol is used. */
async function otlpExporter<E>(
  config: Endpoints,
  signal: Signal,
  timeoutMillis: number,
  classes: Record<OtlpProtocol, () => Promise<ExporterClass<E>>>,
  own: { temporalityPreference?: AggregationTemporalityPreference } = {},
): Promise<Exporter<E>> {
  const configured = otlpUrl(config, signal);
  const secure = otlpSecure(config, signal, configured);
  // Over HTTP, OTEL_EXPORTER_OTLP_INSECURE turns the scheme round, as the original's exporter does.
  const url = configured.replace(/^https?:\/\//, secure ? 'https://' : 'http://');
  const options = await otlpOptions(config, signal, timeoutMillis);
  const protocol = otlpProtocol(config, signal);
  const Class = await classes[protocol]();
  const tls = otlpTls(config, signal);
  const exporter = new Class({
    ...(protocol === 'grpc' ? await grpcOptions(url, secure, options, tls) : httpOptions(url, options, tls)),
    ...own,
  });
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

/**
 * The metric exporter. The temporality the configuration asks for is handed to it, so that it does not read its
 * own from the process environment; the pushed metrics carry theirs already (otlp-temporality.ts).
 */
export async function otlpMetricExporter(
  config: Endpoints,
  preference: TemporalityPreference,
  timeoutMillis: number,
): Promise<Exporter<PushMetricExporter>> {
  // Every protocol's exporter takes the HTTP package's enum (the others depend on that package).
  const { AggregationTemporalityPreference: Preference } = await import('@opentelemetry/exporter-metrics-otlp-http');
  const temporalityPreference = { cumulative: Preference.CUMULATIVE, delta: Preference.DELTA, lowmemory: Preference.LOWMEMORY }[preference];
  return otlpExporter<PushMetricExporter>(
    config,
    'metrics',
    timeoutMillis,
    {
      grpc: async () => (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter,
      'http/json': async () => (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter,
      'http/protobuf': async () => (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter,
    },
    { temporalityPreference },
  );
}
