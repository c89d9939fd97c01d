// OTEL_EXPORTER_OTLP_PROTOCOL: traces and metrics reach real collectors over the original's two protocols,
// OTLP/HTTP with protobuf bodies (the default) and OTLP/gRPC, each signal by its own setting as there
// (GOTRUE_TRACING_/GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL). The collectors here decode what arrives with
// protobufjs and the specification's field numbers (fixtures/otlp-subset.proto); JSON bodies are read in
// tracing.test.ts and otlp-metrics.test.ts.
import t, { type Test } from 'tap';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { startTestService } from './helpers/server.js';
import { startGrpcCollector, startHttpCollector } from './helpers/otlp-collectors.js';
import { signIn, signUp } from './helpers/accounts.js';
import { otlpUrl } from '../dist/server/observability/otlp-exporters.js';

const schema = await protobuf.load(fileURLToPath(new URL('./fixtures/otlp-subset.proto', import.meta.url)));
const REQUEST = {
  traces: schema.lookupType('otlp.ExportTraceServiceRequest'),
  metrics: schema.lookupType('otlp.ExportMetricsServiceRequest'),
};
type Signal = keyof typeof REQUEST;
const decode = (signal: Signal, bytes: Uint8Array): any =>
  REQUEST[signal].toObject(REQUEST[signal].decode(bytes), { longs: String, bytes: String, arrays: true });

interface Arrival {
  via: 'http' | 'grpc';
  signal: Signal;
  path?: string;
  type?: string;
  body: any;
}
const received: Arrival[] = [];

// An OTLP/HTTP collector: POST /v1/traces and /v1/metrics, protobuf in, an empty protobuf answer out.
const httpUrl = await startHttpCollector(t, (req, body) => {
  const signal = req.url === '/v1/traces' ? 'traces' : req.url === '/v1/metrics' ? 'metrics' : null;
  const type = req.headers['content-type'];
  if (!signal || type !== 'application/x-protobuf') return 415;
  received.push({ via: 'http', signal, path: req.url, type, body: decode(signal, body) });
  return 200;
});

// An OTLP/gRPC collector: the two Export methods, taking the request's bytes and answering an empty response.
const grpcUrl = await startGrpcCollector(t, ['trace.v1.TraceService', 'metrics.v1.MetricsService'], (service, call) => {
  const signal = service === 'trace.v1.TraceService' ? 'traces' : 'metrics';
  received.push({ via: 'grpc', signal, body: decode(signal, call.request) });
});

const attrs = (list: any[] = []) => Object.fromEntries(list.map((a: any) => [a.key, Object.values(a.value ?? {})[0]]));
const spansOf = (arrivals: Arrival[]) =>
  arrivals.flatMap((a) => a.body.resourceSpans.flatMap((r: any) => (r.scopeSpans ?? []).flatMap((s: any) => s.spans ?? [])));
const metricsOf = (arrivals: Arrival[]) =>
  arrivals.flatMap((a) => a.body.resourceMetrics.flatMap((r: any) => (r.scopeMetrics ?? []).flatMap((s: any) => s.metrics ?? [])));

/** Runs a few requests against a service exporting both signals, stops it (the last batches leave), and returns what arrived. */
async function exportBoth(env: Record<string, string>) {
  const from = received.length;
  const api = await startTestService({
    AUTH_TRACING_ENABLED: 'true',
    AUTH_METRICS_ENABLED: 'true',
    AUTH_METRICS_EXPORTER: 'opentelemetry',
    AUTH_MAILER_AUTOCONFIRM: 'true',
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
    ...env,
  });
  await api.request('GET', '/settings');
  const session = await signUp(api);
  await signIn(api, session.user.email);
  await api.stop();
  return received.slice(from);
}

/** What the service's own requests must have produced, however they travelled. */
function checkContent(t: Test, arrivals: Arrival[]) {
  t.ok(arrivals.some((a) => a.signal === 'traces') && arrivals.some((a) => a.signal === 'metrics'), 'traces and metrics arrived');
  const traces = arrivals.filter((a) => a.signal === 'traces');
  const resource = attrs(traces[0]?.body.resourceSpans[0].resource.attributes);
  t.match(resource, { 'service.name': 'gotrue', 'auth.version': '0.1.0', 'deployment.environment': 'test' }, 'the resource');
  const settings = spansOf(traces).find((s: any) => s.name === 'api' && attrs(s.attributes)['http.route'] === '/settings');
  t.ok(settings, 'the GET /settings span');
  t.match(attrs(settings?.attributes), { 'http.method': 'GET' });
  t.equal(Number(attrs(settings?.attributes)['http.status_code']), 200);
  const token = spansOf(traces).find((s: any) => s.name === 'api' && attrs(s.attributes)['http.route'] === '/token');
  const children = spansOf(traces).filter((s: any) => token && s.parentSpanId === token.spanId);
  t.ok(
    children.some((c: any) => c.name.startsWith('db ')),
    'child spans keep their parent',
  );

  const metrics = metricsOf(arrivals.filter((a) => a.signal === 'metrics'));
  const signIns = metrics.filter((m: any) => m.name === 'auth_sign_ins' && m.sum);
  t.ok(
    signIns.some(
      (m: any) =>
        m.sum.isMonotonic && m.sum.dataPoints.some((p: any) => attrs(p.attributes).outcome === 'success' && Number(p.asDouble) >= 1),
    ),
    'the sign-in counter, as a monotonic sum',
  );
  const durations = metrics.filter((m: any) => m.name === 'http_server_duration_seconds' && m.histogram);
  t.ok(
    durations.some((m: any) => m.histogram.dataPoints.some((p: any) => Number(p.count) >= 1 && p.explicitBounds?.length > 0)),
    'the request histogram, with its buckets',
  );
}

t.test('by default both signals go over OTLP/HTTP with protobuf bodies, as the original sends them', async (t) => {
  const arrivals = await exportBoth({ OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl });
  t.ok(
    arrivals.every((a) => a.via === 'http' && a.type === 'application/x-protobuf'),
    'all as protobuf over HTTP',
  );
  t.strictSame([...new Set(arrivals.map((a) => `${a.signal} ${a.path}`))].sort(), ['metrics /v1/metrics', 'traces /v1/traces']);
  checkContent(t, arrivals);
});

t.test('OTEL_EXPORTER_OTLP_PROTOCOL=grpc: both over gRPC, to the endpoint as given', async (t) => {
  const arrivals = await exportBoth({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: grpcUrl });
  t.ok(
    arrivals.every((a) => a.via === 'grpc'),
    'nothing over HTTP',
  );
  checkContent(t, arrivals);
});

t.test("each signal by its own protocol setting, the original's names", async (t) => {
  const arrivals = await exportBoth({
    GOTRUE_TRACING_OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: grpcUrl,
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${httpUrl}/v1/metrics`,
  });
  t.strictSame([...new Set(arrivals.map((a) => `${a.signal} over ${a.via}`))].sort(), ['metrics over http', 'traces over grpc']);
  checkContent(t, arrivals);
});

t.test('a gRPC collector that is down: each signal logged once, and the stop is bounded', async (t) => {
  const free = http.createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const port = (free.address() as AddressInfo).port;
  await new Promise<void>((resolve) => free.close(() => resolve()));
  // The SDK's own variable: a batch every 50 ms, so several exports fail while the requests go on.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const api = await startTestService({
    AUTH_TRACING_ENABLED: 'true',
    AUTH_METRICS_ENABLED: 'true',
    AUTH_METRICS_EXPORTER: 'opentelemetry',
    OTEL_METRIC_EXPORT_INTERVAL: '100',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  });
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  for (let i = 0; i < 8; i++) {
    t.equal((await api.request('GET', '/settings')).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  let timer: NodeJS.Timeout;
  const stopped = await Promise.race([
    api.stop().then(() => 'stopped'),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still stopping after 5 s'), 5000))),
  ]);
  clearTimeout(timer!);
  t.equal(stopped, 'stopped', "the stop does not wait out the exporters' retries");
  const said = (start: string) => api.logs().filter((l) => String(l.msg).startsWith(start));
  t.equal(said('trace export failed').length, 1, 'traces: logged once');
  t.equal(said('metrics export failed').length, 1, 'metrics: logged once');
});

t.test(
  "where each signal goes: a signal's own URL as it is, else the base (with its path over HTTP), else the default collector",
  async (t) => {
    const config = (tracing: object, metrics: object) =>
      ({
        tracing: { otlpEndpoint: '', otlpTracesEndpoint: '', otlpProtocol: 'http/protobuf', ...tracing },
        metrics: { otlpMetricsEndpoint: '', otlpProtocol: 'http/protobuf', ...metrics },
      }) as any;
    t.equal(otlpUrl(config({}, {}), 'traces'), 'http://localhost:4318/v1/traces');
    t.equal(otlpUrl(config({}, {}), 'metrics'), 'http://localhost:4318/v1/metrics');
    t.equal(otlpUrl(config({ otlpProtocol: 'grpc' }, {}), 'traces'), 'http://localhost:4317', "gRPC's default port, no path");
    t.equal(otlpUrl(config({}, { otlpProtocol: 'grpc' }), 'metrics'), 'http://localhost:4317');
    t.equal(
      otlpUrl(config({ otlpEndpoint: 'https://otel.example:4317/', otlpProtocol: 'grpc' }, {}), 'traces'),
      'https://otel.example:4317/',
    );
    t.equal(otlpUrl(config({ otlpEndpoint: 'https://otel.example/otlp/' }, {}), 'traces'), 'https://otel.example/otlp/v1/traces');
    t.equal(otlpUrl(config({ otlpTracesEndpoint: 'https://t.example/x' }, {}), 'traces'), 'https://t.example/x');
    t.equal(otlpUrl(config({}, { otlpMetricsEndpoint: 'https://m.example/y', otlpProtocol: 'grpc' }), 'metrics'), 'https://m.example/y');
  },
);
