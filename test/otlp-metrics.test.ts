// METRICS_EXPORTER=opentelemetry: the metrics the Prometheus exporter serves, pushed over OTLP/HTTP (JSON,
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json, to read them here) by the official SDK to a real HTTP receiver,
// every OTEL_METRIC_EXPORT_INTERVAL and once more at stop. Protobuf and gRPC: otlp-protocols.test.ts.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService } from './helpers/server.js';
import { signIn, signUp } from './helpers/accounts.js';

const exports: Array<{ path: string | undefined; type: string | undefined; body: any }> = [];
let arrived: () => void = () => {};
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    exports.push({ path: req.url, type: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString()) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    arrived();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const api = await startTestService({
  AUTH_HTTP_WORKERS: '2',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'opentelemetry',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
  OTEL_METRIC_EXPORT_INTERVAL: '200',
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
});

type Metric = { name: string; sum?: any; gauge?: any; histogram?: any };
const metricsOf = (body: any): Metric[] => body.resourceMetrics.flatMap((r: any) => r.scopeMetrics.flatMap((s: any) => s.metrics));
const attrs = (list: any[] = []) => Object.fromEntries(list.map((a: any) => [a.key, Object.values(a.value)[0]]));
const value = (p: any) => Number(p.asDouble ?? p.asInt ?? 0);

/** The first export (from now) whose metrics satisfy `ok`; waits for exports as they arrive. */
async function exportWhere(ok: (metrics: Metric[]) => boolean, from: number): Promise<any> {
  for (;;) {
    const found = exports.slice(from).find((e) => ok(metricsOf(e.body)));
    if (found) return found;
    await new Promise<void>((resolve) => (arrived = resolve));
  }
}

t.test('the same metrics reach an OTLP/HTTP receiver, counters as cumulative sums', async (t) => {
  const from = exports.length;
  const session = await signUp(api);
  await signIn(api, session.user.email);
  await api.request('GET', '/settings');
  // An export collected between the sign-in and the GET /settings has the one and not the other: wait for
  // one collected after both.
  const signedIn = (m: Metric[]) =>
    m.some(
      (x) => x.name === 'auth_sign_ins' && x.sum.dataPoints.some((p: any) => attrs(p.attributes).outcome === 'success' && value(p) >= 1),
    );
  const settingsTimed = (m: Metric[]) =>
    m.some(
      (x) =>
        x.name === 'http_server_duration_seconds' &&
        x.histogram.dataPoints.some((p: any) => attrs(p.attributes).http_route === '/settings'),
    );
  const found = await exportWhere((m) => signedIn(m) && settingsTimed(m), from);
  t.equal(found.path, '/v1/metrics');
  t.match(found.type, /^application\/json/);
  const resource = attrs(found.body.resourceMetrics[0].resource.attributes);
  t.match(resource, { 'service.name': 'gotrue', 'auth.version': '0.1.0', 'deployment.environment': 'test' });
  const metrics = new Map(metricsOf(found.body).map((m) => [m.name, m]));
  const signIns = metrics.get('auth_sign_ins')!;
  t.equal(signIns.sum.isMonotonic, true);
  t.equal(signIns.sum.aggregationTemporality, 2, 'cumulative, as Prometheus counts');
  const ups = metrics.get('auth_sign_ups')!.sum.dataPoints.find((p: any) => attrs(p.attributes).method === 'email');
  t.equal(value(ups), 1, 'the sign-up, counted on whichever thread took it');
  const statusCodes = metrics.get('http_status_codes')!;
  t.ok(
    statusCodes.sum.dataPoints.some((p: any) => attrs(p.attributes)['http.route'] === '/settings' && attrs(p.attributes).code === '200'),
    "the original's request counter, with its dotted http.route as it pushes it",
  );
  const original = metrics.get('http.server.request.duration') as any;
  t.equal(original?.unit, 's', "the original's request histogram, under its instrument's name and unit");
  t.ok(
    original?.histogram.dataPoints.some(
      (p: any) => attrs(p.attributes)['http.request.method'] === 'GET' && attrs(p.attributes)['http.route'] === '/settings',
    ),
    'with the conventions’ attribute keys',
  );
  t.notOk(metrics.has('http_server_request_duration_seconds'), 'not also under its Prometheus name');
  t.ok(metrics.get('gotrue_running')?.gauge, 'a gauge stays a gauge');
  const duration = metrics
    .get('http_server_duration_seconds')!
    .histogram.dataPoints.find((p: any) => attrs(p.attributes).http_route === '/settings');
  t.equal(Number(duration.count), 1);
  t.equal(duration.bucketCounts.length, duration.explicitBounds.length + 1, 'a histogram with its buckets');
  t.equal(
    duration.bucketCounts.reduce((sum: number, c: string | number) => sum + Number(c), 0),
    1,
    'bucket counts per bucket, not cumulative',
  );
  t.ok(metrics.get('auth_crypto_pool_completed_tasks'), 'the crypto pool');
  t.ok(metrics.get('auth_db_pool_acquire_seconds')?.histogram, 'the database pool');
});

t.test('the last values are pushed at stop', async (t) => {
  await api.request('GET', '/health');
  const from = exports.length;
  await api.stop();
  t.ok(exports.length > from, 'an export on the way out');
});
