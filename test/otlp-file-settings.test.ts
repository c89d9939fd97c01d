// The OpenTelemetry variables the exporters and the trace SDK would otherwise read from the process environment
// (OTEL_EXPORTER_OTLP_*HEADERS, _TIMEOUT, _COMPRESSION, OTEL_TRACES_SAMPLER): given only in a configuration
// file (`-c`), as the original's loader puts them in its environment, they reach the SDK here too. The
// collectors are real: an OTLP/HTTP server and an OTLP/gRPC one, recording what each export request carries.
import t from 'tap';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { Registry, Counter } from 'prom-client';
import { testServiceEnv } from './helpers/server.js';
import { startGrpcCollector, startHttpCollector } from './helpers/otlp-collectors.js';
import { loadConfig } from '../dist/server/config/load.js';
import { createTracing } from '../dist/server/observability/tracing.js';
import { startOtlpMetrics } from '../dist/server/observability/otlp-metrics.js';

interface Arrival {
  path?: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
const arrivals: Arrival[] = [];

const httpUrl = await startHttpCollector(t, (req, body) => {
  arrivals.push({ path: req.url, headers: req.headers, body });
  return 200;
});

// The trace service's Export method only, taking the request's bytes and recording the call's metadata.
const grpcUrl = await startGrpcCollector(t, ['trace.v1.TraceService'], (_, call) => {
  arrivals.push({ path: 'grpc', headers: call.metadata.getMap() as Arrival['headers'], body: call.request });
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'otlp-file-settings-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const log = pino({ level: 'silent' });

/** The configuration with `env` in the process's place and `file` as the `-c` file: only the file names the OTEL_ variables. */
function configWith(env: Record<string, string>, file: string) {
  const configFile = path.join(dir, `${arrivals.length}-${Math.random().toString(36).slice(2)}.env`);
  writeFileSync(configFile, file);
  return loadConfig({ env: { ...testServiceEnv('postgres://unused@127.0.0.1:1/unused', 1), ...env }, configFile, envFile: null });
}

/** One request's span, recorded and flushed by a stop: what reached the collector. */
async function traceOnce(config: ReturnType<typeof loadConfig>) {
  const from = arrivals.length;
  const tracing = await createTracing(config, log);
  const now = Date.now();
  tracing.record({ method: 'GET', route: '/settings', params: {}, path: '/settings', status: 200, start: now - 5, end: now });
  await tracing.shutdown();
  return arrivals.slice(from);
}

const FILE_HEADERS = [
  'OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20from-file,x-tenant=acme',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-tenant=traces-tenant',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS=x-signal=metrics',
].join('\n');

t.test('headers given only in the -c file reach the OTLP/HTTP export request', async (t) => {
  const config = configWith({ AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl }, `${FILE_HEADERS.split('\n')[0]}\n`);
  const got = await traceOnce(config);
  t.equal(got.length, 1, 'one export');
  t.equal(got[0]?.path, '/v1/traces');
  t.equal(got[0]?.headers.authorization, 'Bearer from-file', 'the general header, its value percent-decoded');
  t.equal(got[0]?.headers['x-tenant'], 'acme');
});

t.test('the signal’s own headers replace the general ones, as the original’s exporters read them', async (t) => {
  const config = configWith({ AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl }, `${FILE_HEADERS}\n`);
  const got = await traceOnce(config);
  t.equal(got.length, 1, 'one export');
  t.equal(got[0]?.headers['x-tenant'], 'traces-tenant', "the traces' own header");
  t.equal(got[0]?.headers.authorization, undefined, 'no general header beside them');
  t.equal(got[0]?.headers['x-signal'], undefined, "the metrics' own header stays with the metrics");
});

t.test('the metrics exporter gets its own headers in place of the general ones', async (t) => {
  const config = configWith(
    { AUTH_METRICS_ENABLED: 'true', AUTH_METRICS_EXPORTER: 'opentelemetry', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl },
    `${FILE_HEADERS}\n`,
  );
  const registry = new Registry();
  new Counter({ name: 'file_settings_total', help: 'a counter', registers: [registry] }).inc();
  const from = arrivals.length;
  const pushing = await startOtlpMetrics(config, async () => registry, log);
  await pushing.close(); // the last values are pushed on the way out
  const got = arrivals.slice(from);
  t.ok(got.length >= 1, 'pushed');
  t.equal(got[0]?.path, '/v1/metrics');
  t.equal(got[0]?.headers['x-signal'], 'metrics');
  t.equal(got[0]?.headers.authorization, undefined);
  t.equal(got[0]?.headers['x-tenant'], undefined);
});

t.test('a temporality preference in the file makes the pushed counters deltas', async (t) => {
  const config = configWith(
    {
      AUTH_METRICS_ENABLED: 'true',
      AUTH_METRICS_EXPORTER: 'opentelemetry',
      OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    },
    'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=Delta\n',
  );
  t.equal(config.metrics.temporalityPreference, 'Delta', 'read from the file');
  const registry = new Registry();
  new Counter({ name: 'file_temporality_total', help: 'a counter', registers: [registry] }).inc(3);
  const from = arrivals.length;
  const pushing = await startOtlpMetrics(config, async () => registry, log);
  await pushing.close();
  const sums = arrivals
    .slice(from)
    .flatMap((a) => JSON.parse(a.body.toString()).resourceMetrics[0].scopeMetrics[0].metrics)
    .filter((m: any) => m.name === 'file_temporality');
  t.equal(sums[0]?.sum.aggregationTemporality, 1, 'delta');
  t.equal(sums[0]?.sum.dataPoints[0].asDouble, 3);
});

t.test('over gRPC the headers from the file are the call’s metadata', async (t) => {
  const config = configWith(
    { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: grpcUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    `${FILE_HEADERS}\n`,
  );
  const got = await traceOnce(config);
  t.equal(got.length, 1, 'one export');
  t.equal(got[0]?.path, 'grpc');
  t.equal(got[0]?.headers['x-tenant'], 'traces-tenant');
  t.equal(got[0]?.headers.authorization, undefined, 'the general headers replaced by the signal’s own');
});

t.test('compression set in the file gzips the export request', async (t) => {
  const config = configWith(
    { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl },
    'OTEL_EXPORTER_OTLP_COMPRESSION=gzip\n',
  );
  const got = await traceOnce(config);
  t.equal(got.length, 1, 'one export');
  t.equal(got[0]?.headers['content-encoding'], 'gzip');
  t.ok(zlib.gunzipSync(got[0].body).length > 0, 'a gzip body');
});

t.test('a sampler set in the file decides: always_off exports no span', async (t) => {
  const config = configWith({ AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl }, 'OTEL_TRACES_SAMPLER=always_off\n');
  t.same(await traceOnce(config), [], 'nothing sent');
  // The same service with the file's sampler gone exports the span: the sampler, not the setup, held it back.
  const sampled = configWith({ AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl }, 'OTEL_TRACES_SAMPLER=\n');
  t.equal((await traceOnce(sampled)).length, 1, 'the default sampler sends it');
});

t.test('the settings are checked and read as the SDK reads them', async (t) => {
  t.throws(
    () => configWith({ AUTH_TRACING_ENABLED: 'true' }, 'OTEL_EXPORTER_OTLP_COMPRESSION=brotli\n'),
    /OTEL_EXPORTER_OTLP_COMPRESSION/,
    'a compression the exporters do not have stops the start',
  );
  const config = configWith({}, 'OTEL_EXPORTER_OTLP_TIMEOUT=2500\nOTEL_EXPORTER_OTLP_METRICS_TIMEOUT=4000\n');
  t.match(config.otlp, { all: { timeoutMs: 2500 }, traces: { timeoutMs: 0 }, metrics: { timeoutMs: 4000 } });
  t.match(config.sources.OTEL_EXPORTER_OTLP_TIMEOUT, /^OTEL_EXPORTER_OTLP_TIMEOUT \(.*\.env\)$/, 'named with its file');
});
